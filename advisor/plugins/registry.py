"""The installed policy plugins: found through entry points, checked, then loaded.

Plugins register under the entry-point group ``advisor.policies`` as ``family/name``, the
built-in ones (``policies/``, see pyproject.toml) exactly as a site's own package does. As
flake8 does, the registry first finds every entry point, then loads each and checks it
against the contract (``advisor.plugins.contract``); as slurmctld refuses an "incomplete
plugin", a plugin missing a member, with a malformed ``Params`` or under a name that is not
its own is refused with one line naming its package, the plugin and what is wrong. Every
command that uses policies loads the registry before any long work.

Unknown names are refused, never mapped to another policy.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib.metadata import entry_points

from advisor.errors import BadInput, PluginRefused, nearest
from advisor.plugins.contract import OPTIONAL, REQUIRED, Context, Player, params_problems

GROUP = "advisor.policies"
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
#: a function named as an entry point names it: package.module:function
_ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Plugin:
    """A checked plugin: its contract members, and the object that implements them
    (``impl``), which may offer its family more (an ordering's ``key_range``)."""

    key: str
    family: str
    name: str
    summary: str
    Params: type = field(repr=False)
    rank: int
    default: bool
    bounds_wait: bool
    replaces: tuple[str, ...] = ()
    aliases: dict = field(default_factory=dict, compare=False, hash=False)
    compile_kernels: object = field(default=None, compare=False, repr=False)
    bench: object = field(default=None, compare=False, repr=False)
    player: object = field(default=None, compare=False, repr=False)
    short_slot: int | None = None
    short_extra: str = ""
    package: str = field(default="", compare=False)
    impl: object = field(default=None, compare=False, repr=False)

    def candidates(self, context: Context) -> tuple:
        return tuple(self.impl.candidates(context))

    def configure(self, config, params):
        return self.impl.configure(config, params)

    def enact(self, params, context: Context):
        return self.impl.enact(params, context)

    def in_grid(self, params, policy) -> bool:
        """Whether the default grid holds this choice in ``policy`` (optional member)."""
        keep = getattr(self.impl, "in_grid", None)
        return True if keep is None else bool(keep(params, policy))


@dataclass(frozen=True)
class Family:
    name: str
    members: tuple[Plugin, ...]          # by rank, then name

    @property
    def rank(self) -> int:
        return self.members[0].rank

    @property
    def default(self) -> Plugin | None:
        """The member a policy gets when it names none; None: the family is optional."""
        return next((m for m in self.members if m.default), None)


def check(impl: object, key: str, package: str) -> Plugin:
    """``impl`` as a Plugin, or PluginRefused saying what it lacks."""
    def refuse(problem: str):
        raise PluginRefused(f"policy plugin '{key}' from {package} is refused: {problem}; "
                            f"fix or uninstall {package}")

    missing = [m for m in REQUIRED if not hasattr(impl, m)]
    if missing:
        refuse(f"it has no {', '.join(repr(m) for m in missing)} (see "
               "advisor.plugins.contract)")
    for member in ("candidates", "configure", "enact", "in_grid"):
        if hasattr(impl, member) and not callable(getattr(impl, member)):
            refuse(f"its '{member}' is not a method")
    family, name = impl.family, impl.name
    if not (isinstance(family, str) and _NAME.match(family) and isinstance(name, str)
            and _NAME.match(name)):
        refuse("its family and name must be lower-case words (a-z, 0-9, _ and -)")
    if key != f"{family}/{name}":
        refuse(f"it is registered as '{key}' but calls itself '{family}/{name}'")
    if not isinstance(impl.summary, str) or not impl.summary:
        refuse("its summary is empty")
    problems = params_problems(impl.Params)
    if not problems:
        try:
            impl.Params()
        except Exception as e:  # a Params whose defaults do not construct
            problems = [f"Params() fails: {e}"]
    if problems:
        refuse(problems[0])
    extra = {m: getattr(impl, m, default) for m, default in OPTIONAL.items()}
    if not isinstance(extra["rank"], int) or isinstance(extra["rank"], bool):
        refuse("its rank is not a whole number")
    if extra["compile_kernels"] is not None and not callable(extra["compile_kernels"]):
        refuse("its compile_kernels is not a function")
    bench = extra["bench"]
    if bench is not None and not (isinstance(bench, str) and _ENTRY.match(bench)):
        refuse("its bench does not name a function as 'package.module:function'")
    slot = extra["short_slot"]
    if slot is not None and (not isinstance(slot, int) or isinstance(slot, bool) or slot < 0):
        refuse("its short_slot is not a place (0, 1, ..) or None")
    if extra["short_extra"] and extra["short_extra"] not in {
            f.name for f in dataclasses.fields(impl.Params)}:
        refuse(f"its short_extra '{extra['short_extra']}' is not one of its parameters")
    if extra["player"] is not None and not isinstance(extra["player"], Player):
        refuse("its player has no 'claims' and 'starts' methods (see "
               "advisor.plugins.contract.Player)")
    if not all(isinstance(extra[m], bool) for m in ("default", "bounds_wait")):
        refuse("its default and bounds_wait must be True or False")
    extra["replaces"] = tuple(extra["replaces"]) if isinstance(
        extra["replaces"], (tuple, list)) else None
    if extra["replaces"] is None or not all(isinstance(f, str) for f in extra["replaces"]):
        refuse("its replaces is not a list of family names")
    if family in extra["replaces"]:
        refuse("it replaces its own family")
    aliases = extra["aliases"]
    if not isinstance(aliases, dict) or not all(
            isinstance(a, str) and _NAME.match(a) and isinstance(v, dict)
            for a, v in aliases.items()):
        refuse("its aliases must map lower-case names to parameter values")
    for alias, values in aliases.items():
        try:
            impl.Params(**values)
        except Exception as e:
            refuse(f"its alias '{alias}' gives parameters Params refuses ({e})")
    extra["aliases"] = dict(aliases)
    return Plugin(key=key, family=family, name=name, summary=impl.summary,
                  Params=impl.Params, package=package, impl=impl, **extra)


@dataclass(frozen=True)
class Registry:
    plugins: dict[str, Plugin]
    families: tuple[Family, ...]         # by rank
    #: the families whose names make a spec's short form, by place (contract.short_slot)
    short_families: tuple[str, ...] = ()

    def alias(self, name: str) -> tuple[Plugin, dict] | None:
        """The plugin and parameter values a spec's short name stands for, or None."""
        return next(((p, dict(p.aliases[name.lower()])) for p in self.plugins.values()
                     if name.lower() in p.aliases), None)

    @cached_property
    def players(self) -> tuple:
        """Each family's player (``contract.Player``), once."""
        out = []
        for p in self.plugins.values():
            if p.player is not None and all(p.player is not q for q in out):
                out.append(p.player)
        return tuple(out)

    def family(self, name: str) -> Family | None:
        return next((f for f in self.families if f.name == name), None)

    def family_rank(self, name: str, fallback: int) -> int:
        family = self.family(name)
        return family.rank if family else fallback

    def plugin(self, family: str, name: str) -> Plugin:
        """The plugin ``family/name``; BadInput naming the installed ones if none."""
        key = f"{family}/{name.lower()}"
        if key in self.plugins:
            return self.plugins[key]
        known = self.family(family)
        if known is None:
            names = [f.name for f in self.families]
            raise BadInput(f"no policy family '{family}' is installed{nearest(family, names)};"
                           f" installed: {', '.join(names)}")
        names = [m.name for m in known.members]
        raise BadInput(f"unknown {family} policy '{name}'{nearest(name.lower(), names)}; "
                       f"installed: {', '.join(names)}")


def build(plugins: list[Plugin]) -> Registry:
    """A registry of checked plugins: families ordered by rank, at most one default each."""
    by_family: dict[str, list[Plugin]] = {}
    for p in plugins:
        by_family.setdefault(p.family, []).append(p)
    families = []
    for name, members in by_family.items():
        members.sort(key=lambda m: (m.rank, m.name))
        defaults = [m for m in members if m.default]
        if len(defaults) > 1:
            raise PluginRefused(f"policy plugins {defaults[0].key} (from "
                                f"{defaults[0].package}) and {defaults[1].key} (from "
                                f"{defaults[1].package}) both claim to be the default "
                                f"{name}; uninstall one of their packages")
        families.append(Family(name, tuple(members)))
    families.sort(key=lambda f: (f.rank, f.name))
    seen: dict[str, Plugin] = {}
    for p in plugins:
        for alias in p.aliases:
            if any(alias == q.name for q in plugins):
                raise PluginRefused(f"policy plugin {p.key} (from {p.package}) calls a "
                                    f"choice '{alias}', the name of a plugin")
            if alias in seen:
                raise PluginRefused(f"policy plugins {seen[alias].key} and {p.key} both "
                                    f"call a choice '{alias}'; uninstall one of their "
                                    "packages")
            seen[alias] = p
        unknown = [f for f in p.replaces if f not in by_family]
        if unknown:
            raise PluginRefused(f"policy plugin {p.key} (from {p.package}) replaces the "
                                f"family '{unknown[0]}', which no installed plugin is of")
    return Registry({p.key: p for p in plugins}, tuple(families), _short_families(families))


def _short_families(families: list[Family]) -> tuple[str, ...]:
    """The families of the short form by place; PluginRefused when the members of one
    disagree on its place, or the places leave a gap or repeat. A member that gives none
    (a site's own ordering) takes its family's."""
    places = {}
    for family in families:
        slots = {m.short_slot for m in family.members} - {None}
        if len(slots) > 1:
            raise PluginRefused(f"the {family.name} plugins give their family different "
                                f"places in the short form ({sorted(slots)}); uninstall "
                                "the package of the one that differs")
        slot = slots.pop() if slots else None
        if slot is not None:
            if slot in places:
                raise PluginRefused(f"families {places[slot]} and {family.name} both take "
                                    f"place {slot} of the short form")
            places[slot] = family.name
    if sorted(places) != list(range(len(places))):
        raise PluginRefused(f"the short form's places {sorted(places)} leave a gap")
    return tuple(places[k] for k in sorted(places))


@lru_cache(maxsize=1)
def registry() -> Registry:
    """Every installed plugin, checked (loaded once per process)."""
    found: dict[str, Plugin] = {}
    for ep in entry_points(group=GROUP):
        package = f"{ep.dist.name} {ep.dist.version}" if ep.dist else "an unknown package"
        if ep.name in found:
            raise PluginRefused(f"policy plugin '{ep.name}' is registered twice, by "
                                f"{found[ep.name].package} and by {package}; uninstall one")
        try:
            impl = ep.load()
        except Exception as e:  # a broken third-party module must be named, not a traceback
            raise PluginRefused(f"policy plugin '{ep.name}' from {package} ({ep.value}) "
                                f"failed to load: {type(e).__name__}: {e}; fix or "
                                f"uninstall {package}") from e
        found[ep.name] = check(impl, ep.name, package)
    if not found:
        raise BadInput("no policy plugins are registered: install the package "
                       "(pip install -e .) so that its entry points exist")
    return build(list(found.values()))


def plugin(family: str, name: str) -> Plugin:
    return registry().plugin(family, name)
