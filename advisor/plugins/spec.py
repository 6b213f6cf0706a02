"""A policy: one choice (plugin and parameters) per family, parsed once from a spec.

Two written forms, mixed freely:

* the short form, Lelong et al.'s naming, which the plugins declare (``short_slot`` and
  ``short_extra``, ``advisor.plugins.contract``): the built-in ones make it
  ``BACKFILL[:PRIMARY[:SECONDARY]][:key=value ...]``. ``easy:SPF:SPF`` is EASY-SPF-SPF;
  ``easy:FCFS:FCFS:T=20h`` adds the queue threshold; ``conservative:FCFS``;
  ``depth:SPF:FCFS:k=4``; ``none:FCFS`` is strict FCFS. A place not written gets its
  family's default (FCFS); the word after the last place (SECONDARY, the backfill queue's
  order) fills the parameter a plugin named declares as its ``short_extra``, and defaults
  to the last place's. A ``key=value`` goes to the first place's plugin if it has that
  parameter, else to the next place's, else to the one installed plugin of another family
  that has it (``T=`` turns threshold/queue on);
* the general form, any installed plugin: ``family/name[:key=value ...]``, joined by ``+``:
  ``ordering/spf + backfill/depth:k=4 + threshold/queue:T=20h``, or after a short form:
  ``easy:SPF:T=12h + family/name:key=value``. A plugin's alias stands for it with some
  parameters, in either form: ``plan2`` is ``plan/sa:cost=squared``, ``plan2:N=50`` too.

A family not named gets its default member (ordering/fcfs, backfill/easy), unless a chosen
plugin replaces that family (a plan replaces the ordering and the backfilling); a family
without one (threshold) is absent. ``Policy.spec`` is the text as written, or for a policy
built from choices (the default grid) its canonical text, which parses back to the same
policy.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from functools import lru_cache

from advisor.engine import EngineConfig
from advisor.errors import BadInput, nearest
from advisor.plugins.contract import Context, NoSlurmForm, parse_param, show_value
from advisor.plugins.enactment import Enactment, compose
from advisor.plugins.registry import Plugin, registry

#: the policy the advisor compares with when nothing else is said: Lelong et al.'s
#: EASY-FCFS-FCFS
BASELINE = "easy:FCFS:FCFS"


@dataclass(frozen=True)
class Choice:
    plugin: Plugin
    params: object

    def values(self, changed_only: bool) -> dict:
        """The parameters (all but the quiet ones at their defaults, or those that differ
        from their defaults), by name."""
        return {f.name: getattr(self.params, f.name) for f in dataclasses.fields(self.params)
                if getattr(self.params, f.name) != f.default
                or not (changed_only or f.metadata.get("quiet"))}

    @property
    def alias(self) -> str | None:
        """The plugin's short name for these parameters (``plan2``), or None."""
        return next((a for a, values in self.plugin.aliases.items()
                     if all(getattr(self.params, k) == v for k, v in values.items())), None)

    def aliased(self) -> list[str]:
        """The alias, then the parameters it does not set that differ from defaults."""
        return [self.alias, *self.written(True, skip=tuple(self.plugin.aliases[self.alias]))]

    @property
    def is_default(self) -> bool:
        """The member a policy gets when it names none of this family (the registry lets
        one member of a family say so)."""
        return self.plugin.default

    def written(self, changed_only: bool, skip: tuple[str, ...] = ()) -> list[str]:
        """``key=value`` of each parameter (an empty text, "not given", is not written)."""
        fields = {f.name: f for f in dataclasses.fields(self.params)}
        return [f"{k}={show_value(fields[k], v)}" for k, v in self.values(changed_only).items()
                if k not in skip and v != ""]


@dataclass(frozen=True)
class Policy:
    choices: tuple[Choice, ...]                 # one per family, in family order
    spec: str = field(default="", compare=False)

    @classmethod
    def of(cls, choices, spec: str | None = None) -> Policy:
        """The policy of these choices, each family's default member added where none is
        chosen; ``spec``: the text it was parsed from (default: canonical)."""
        reg = registry()
        chosen = {}
        for c in choices:
            if c.plugin.family in chosen:
                first = chosen[c.plugin.family].plugin.name
                raise BadInput(f"two {c.plugin.family} choices: {first} and "
                               f"{c.plugin.name}; a policy has one per family")
            chosen[c.plugin.family] = c
        replaced = {f: c for c in chosen.values() for f in c.plugin.replaces}
        for family, c in replaced.items():
            if family in chosen:
                raise BadInput(f"{c.plugin.key} replaces the {family} family, so a policy "
                               f"cannot also choose {chosen[family].plugin.key}; give it "
                               f"without one")
        for family in reg.families:
            if family.name not in chosen and family.name not in replaced and \
                    family.default is not None:
                chosen[family.name] = Choice(family.default, family.default.Params())
        ordered = sorted(chosen.values(), key=lambda c: (
            reg.family_rank(c.plugin.family, c.plugin.rank), c.plugin.family))
        policy = cls(_normal_order(tuple(ordered)))
        return replace(policy, spec=spec if spec is not None else policy.canonical)

    def choice(self, family: str) -> Choice | None:
        return next((c for c in self.choices if c.plugin.family == family), None)

    def default_but(self, family: str) -> bool:
        """Whether every choice but ``family``'s is its family's default member at its
        defaults (the baseline's: EASY-FCFS-FCFS), as a family that pairs with the usual
        queue only asks in its ``in_grid``."""
        return all(c.is_default and not c.values(True) for c in self.choices
                   if c.plugin.family != family)

    def engine_config(self, base: EngineConfig = EngineConfig()) -> EngineConfig:
        """The textbook engine's settings: each choice's ``configure`` in turn."""
        config = base
        for c in self.choices:
            config = c.plugin.configure(config, c.params)
        return config

    def enact(self, context: Context) -> Enactment:
        """What Slurm is told: every choice's enactment, composed; NoSlurmForm (naming the
        policy) when one has no Slurm form or two conflict."""
        context = replace(context, policy=self)
        try:
            return compose([(c.plugin.key, c.plugin.enact(c.params, context))
                            for c in self.choices])
        except NoSlurmForm as e:
            raise type(e)(f"{self.label}: {e}") from None

    @property
    def label(self) -> str:
        """Lelong et al.'s naming (EASY-SPF-SPF), then parameters: those that differ from their
        defaults for a family with a default member, all of them for the others."""
        head, extras = self._head(upper=True), []
        for c in self.choices:
            family = registry().family(c.plugin.family)
            required = family is not None and family.default is not None
            if c.plugin.family in registry().short_families:
                extras += c.written(True, skip=_extra(c))
            elif c.alias:
                words = c.aliased()
                extras += [words[0].upper(), *words[1:]]
            elif not (c.is_default and not c.values(True)):
                extras += c.written(required) or [c.plugin.name.upper()]
        return " ".join(["-".join(head)] + extras if head else extras)

    @property
    def canonical(self) -> str:
        """The spec that parses back to this policy: the short form, each choice's
        parameters (a family's default member writes only what it changes, any other all
        of them: a default may change, a choice must not), and ``+family/name:...`` for a
        choice whose parameters would not find their way back."""
        head = self._head(upper=False)
        named = {c.plugin.family: c.plugin for c in self.choices}
        tail, general = [], []
        for c in self.choices:
            default = c.is_default
            if c.plugin.family in registry().short_families:
                tail += c.written(default, skip=_extra(c))
            elif default and not c.values(True):
                continue
            elif c.alias:
                general.append(":".join(c.aliased()))
            elif head and c.values(False) and all(_owners(named, k) == [c.plugin]
                                                  for k in c.values(False)):
                tail += c.written(default)
            else:
                general.append(":".join([c.plugin.key, *c.written(default)]))
        return " + ".join([":".join(head + tail)] + general if head else general)

    def _head(self, upper: bool) -> list[str]:
        """The short form's words (EASY, SPF, SPF), or [] when a place is not chosen."""
        places = [self.choice(f) for f in registry().short_families]
        if not places or any(c is None for c in places):
            return []
        first, *rest = places
        head = [first.plugin.name.upper() if upper else first.plugin.name,
                *(c.plugin.name.upper() for c in rest)]
        extra = next((c for c in places if c.plugin.short_extra), None)
        if extra is not None:
            word = getattr(extra.params, extra.plugin.short_extra)
            if upper or word:
                head.append((word or places[-1].plugin.name).upper())
        return head


def _extra(c: Choice) -> tuple[str, ...]:
    """The parameter the short form's last word fills, when ``c``'s plugin has one."""
    return (c.plugin.short_extra,) if c.plugin.short_extra else ()


def _owners(named: dict[str, Plugin], key: str) -> list[Plugin]:
    """Where a short form's ``key=value`` may go (see the module docstring): the plugin of
    its first place named, if it has that parameter, else the next place's, else every
    installed plugin of another family that has it (one: it goes there) and does not
    replace a family named (a plan's T cannot be meant beside a backfilling)."""
    short = registry().short_families
    for family in short:
        if family in named and key in _fields(named[family]):
            return [named[family]]
    return [p for p in registry().plugins.values()
            if p.family not in short and key in _fields(p)
            and not set(p.replaces) & set(named)]


def _fields(p: Plugin) -> frozenset[str]:
    return _param_names(p.Params)


@lru_cache(maxsize=None)    # (asked for every plugin, per parameter, per policy of a grid)
def _param_names(params: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(params))


def _normal_order(choices: tuple[Choice, ...]) -> tuple[Choice, ...]:
    """A short form's last word equal to its last place's (a backfill order equal to the
    primary one) is no word of its own ("")."""
    short = registry().short_families
    last = next((c for c in choices if short and c.plugin.family == short[-1]), None)
    out = []
    for c in choices:
        word = getattr(c.params, c.plugin.short_extra) if c.plugin.short_extra else None
        if word and last is not None and word == last.plugin.name:
            c = Choice(c.plugin, replace(c.params, **{c.plugin.short_extra: ""}))
        out.append(c)
    return tuple(out)


def from_label(text: str) -> str | None:
    """The spec a printed label stands for (``EASY-SPF-SPF T=1d`` is ``easy:SPF:SPF:T=1d``,
    ``PLAN2 N=5`` is ``plan2:N=5``), so that what the advisor prints can be given back to
    it; None when ``text`` is not a label (a spec has a ':', a '/' or a '+' between parts,
    and no label has)."""
    words = text.split()
    if words and ":" not in text and all("=" in w for w in words):
        return _settings_label(words)
    if not words or ":" in text or "+" in words or "/" in words[0] or "=" in words[0]:
        return None
    reg = registry()
    head = words[0].split("-")
    if len(head) >= 2 and all(head):
        spec = ":".join([head[0].lower(), *head[1:]])
    elif len(words) > 1 and reg.alias(words[0]) is not None:
        spec = words[0].lower()
    else:
        return None                   # one word: a short form already (easy, plan2)
    general = []
    for w in words[1:]:
        if "=" in w:
            spec += f":{w}"
            continue
        alias = reg.alias(w)
        named = [p for p in reg.plugins.values() if p.name == w.lower()
                 and p.family not in reg.short_families]
        if alias is not None:
            general.append(w.lower())
        elif len(named) == 1:
            general.append(named[0].key)
        else:
            return None
    return " + ".join([spec, *general])


def _settings_label(words: list[str]) -> str | None:
    """The spec of a label that is only settings (``bf_window=2880``, a native knob's):
    the one installed plugin of a family without a default member that has every key."""
    keys = {w.split("=", 1)[0] for w in words}
    reg = registry()
    owners = [p for p in reg.plugins.values()
              if getattr(reg.family(p.family), "default", None) is None
              and keys <= _fields(p)]
    if len(owners) != 1:
        return None
    return ":".join([owners[0].key, *words])


def parse_policy(text: str) -> Policy:
    """Parse a spec (either form, see the module docstring) or a label the advisor printed
    (``from_label``); BadInput naming the part that is wrong."""
    spec = from_label(text)
    if spec is not None:
        try:
            return replace(parse_policy(spec), spec=spec)
        except BadInput as e:
            raise BadInput(f"'{text}' read as the label of {spec}: {e}") from None
    parts = [p.strip() for p in text.split("+")]
    if not text.strip() or not all(parts):
        raise BadInput(f"empty policy; write e.g. {BASELINE}, or family/name[:key=value] "
                       "parts joined by + (see 'advisor policies')")
    reg = registry()
    chosen: dict[str, tuple[Plugin, dict]] = {}
    loose: list[str] = []
    given: set[tuple[str, str]] = set()      # (family, key) written in the text

    def once(p: Plugin, key: str) -> None:
        if (p.family, key) in given:
            raise BadInput(f"policy '{text}' gives {key} twice; give each parameter once")
        given.add((p.family, key))

    def choose(p: Plugin) -> dict:
        if p.family in chosen:
            raise BadInput(f"policy '{text}' names two {p.family} choices: "
                           f"{chosen[p.family][0].name} and {p.name}")
        chosen[p.family] = (p, {})
        return chosen[p.family][1]

    for i, part in enumerate(parts):
        tokens = [t.strip() for t in part.split(":") if t.strip()]
        words = [t for t in tokens[1:] if "=" not in t]
        settings = [t for t in tokens[1:] if "=" in t]
        alias = reg.alias(tokens[0])
        if alias is not None:
            tokens[0] = alias[0].key
        if "/" in tokens[0]:
            if words:
                raise BadInput(f"policy '{text}': '{words[0]}' in '{part}' is not "
                               "key=value; the general form is family/name[:key=value]")
            p = reg.plugin(*tokens[0].split("/", 1))
            values = choose(p)
            if alias is not None:
                values.update(alias[1])
            for s in settings:
                key, value = (x.strip() for x in s.split("=", 1))
                if key not in _fields(p):
                    raise BadInput(f"policy '{text}': {p.key} has no '{key}' parameter"
                                   f"{nearest(key, _fields(p))}; see 'advisor policies'")
                once(p, key)
                values[key] = parse_param(p.Params, key, value, _resolve)
            continue
        short = reg.short_families
        if i or not short:
            raise BadInput(f"policy '{text}': only its first part may be the short form "
                           f"({':'.join(f.upper() for f in short)}...); write '{part}' as "
                           "family/name[:key=value]")
        try:
            head = reg.plugin(short[0], tokens[0])
        except BadInput as e:        # the first word may have meant a short name
            aliases = sorted(a for p in reg.plugins.values() for a in p.aliases)
            hint = nearest(tokens[0].lower(), aliases)
            if not aliases:
                raise
            raise BadInput(f"{e}; or a short name{hint or ''}: {', '.join(aliases)}") from None
        if len(words) > len(short):
            raise BadInput(f"policy '{text}' names {len(words)} choices after "
                           f"{tokens[0]}; give at most {len(short)} "
                           f"({', '.join(short[1:])}, then one for its last word)")
        places = [head] + [reg.plugin(f, w) for f, w in zip(short[1:], words)]
        for p in places:
            choose(p)
        if len(words) == len(short):          # the last word: a short_extra's
            last = reg.plugin(short[-1], words[-1])
            owner = next((p for p in places if p.short_extra), None)
            if owner is not None:
                chosen[owner.family][1][owner.short_extra] = last.name
            elif last != places[-1]:
                raise BadInput(f"policy '{text}': {head.key} takes no word after its "
                               f"{short[-1]} ({words[-1]})")
        loose = settings
    for s in loose:
        key, value = (x.strip() for x in s.split("=", 1))
        owners = _owners({f: p for f, (p, _) in chosen.items()}, key)
        if len(owners) > 1:
            raise BadInput(f"'{key}' is a parameter of {', '.join(p.key for p in owners)}: "
                           f"write family/name:{key}=... to say which")
        if not owners:
            every = {k for p in reg.plugins.values() for k in _fields(p)}
            raise BadInput(f"policy '{text}': no '{key}' parameter for the plugins it names "
                           f"or, alone, for any other installed plugin{nearest(key, every)}; "
                           "see 'advisor policies', or write family/name:key=value")
        owner = owners[0]
        if owner.family in chosen and chosen[owner.family][0] != owner:
            raise BadInput(f"policy '{text}': '{key}' is {owner.key}'s, but it names "
                           f"{chosen[owner.family][0].key}")
        values = chosen[owner.family][1] if owner.family in chosen else choose(owner)
        once(owner, key)
        values[key] = parse_param(owner.Params, key, value, _resolve)
    try:
        choices = [Choice(p, p.Params(**values)) for p, values in chosen.values()]
    except (TypeError, ValueError) as e:
        raise BadInput(f"policy '{text}': {e}") from None
    return Policy.of(choices, spec=text)


def _resolve(family: str, name: str) -> str:
    return registry().plugin(family, name).name
