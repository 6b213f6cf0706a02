"""The contract of a policy plugin, in one place (like Slurm's ``src/interfaces/<type>.h``).

A *policy* is one choice per *family*: an ordering, a backfilling, and, when present, a
starvation threshold, and so on. Each choice is a *plugin* of its family (``ordering/spf``,
``backfill/depth``, ``threshold/queue``) with the values of its ``Params``. A plugin owns
everything about its axis, so that the core composes families without naming any:

* identity: ``family``, ``name`` (registered as ``family/name``) and a one-line ``summary``;
* ``Params``: a frozen dataclass whose fields all have defaults; ``param()`` declares one
  with its help, bounds and choices (defaults and bounds are the module's named constants);
* ``candidates(context)``: the points of its axis worth simulating for this snapshot. The
  default grid is the product of every family's candidates (an optional family may also be
  absent), keeping the policies Slurm can express that bound every job's wait;
* ``configure(config, params) -> EngineConfig``: its textbook engine setting;
* ``enact(params, context) -> Enactment``: what Slurm is told (``advisor.plugins.enactment``),
  or ``NoSlurmForm`` when Slurm cannot express it. The slurm mode simulates exactly this.

Optional members: ``rank`` (100: where it lists; a family nests in the grid and composes by
its lowest rank), ``default`` (False: True makes it the member a policy gets when it names
none of its family; a family with a default member is required, the others optional),
``bounds_wait`` (False: True when a policy with this choice bounds every job's wait by
itself, as FCFS or a starvation threshold does), ``in_grid(params, policy)`` (True: False
keeps a combination out of the default grid, for a family worth simulating with some of the
others' choices only; a spec may still name it), ``replaces`` ((): the families a choice
of it stands in for, as a plan orders the whole queue instead of an ordering and a
backfilling: a policy holding it has none of theirs) and ``aliases`` ({}: short names a
spec may use for it with some parameters, ``{"plan2": {"cost": "squared"}}``; a label
uses them too) and ``compile_kernels`` (None: a function that compiles, or loads, the
numba kernels the family keeps in its folder, so that ``advisor compile`` does it ahead of
the first run) and ``player`` (None: a ``Player``, for a family whose Slurm form holds a
partition the slurm mode does not play itself). The short form of a spec, Lelong et al.'s
``easy:SPF:SPF``, is what plugins declare: ``short_slot`` (None: the place of its family's
name in it, 0 first; every member of a family gives the same, and the places run 0, 1, ..)
and ``short_extra`` (""; a parameter naming another plugin that the word after the last
place fills, as EASY's ``order`` takes the backfill queue's ordering). A member that gives
no place takes its family's: a site's own ordering is written ``easy:SAF``.

A family that needs more than a plugin keeps it in its folder (``policies/<family>/``;
docs/plugins.md): the scheduler it brings to the textbook engine (an
``advisor.engine.Mechanic`` its ``configure`` sets), its player, and the inputs it derives
from the context's snapshot and history (``Context.derived``).

Plugins need not subclass anything: the registry checks members when it loads a plugin
(``advisor.plugins.registry``). ``PluginBase`` gives the optional members their defaults.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from advisor.bounds import LONG_QUEUE
from advisor.errors import BadInput, nearest
from advisor.model import Cluster, Job, SchedulingConfig, Snapshot
from advisor.units import format_duration, parse_duration

if TYPE_CHECKING:
    import pandas as pd

    from advisor.engine import EngineConfig
    from advisor.plugins.enactment import Enactment
    from advisor.plugins.spec import Policy

#: how faithfully Slurm runs a choice: as the named policy, nearly, or not at all
FIDELITIES = ("exact", "approximate", "none")
#: the members every plugin must have, and the optional ones with their defaults
REQUIRED = ("family", "name", "summary", "Params", "candidates", "configure", "enact")
OPTIONAL = {"rank": 100, "default": False, "bounds_wait": False, "replaces": (),
            "aliases": {}, "compile_kernels": None, "player": None, "short_slot": None,
            "short_extra": "", "bench": None}
#: what a ``param()`` may say about a field
PARAM_KEYS = frozenset({"help", "kind", "min", "max", "choices", "family", "renamed",
                        "quiet"})
#: the kinds of parameter values: a duration (20h, 2d or seconds) or another plugin's name
KINDS = frozenset({"duration", "plugin"})


class NoSlurmForm(BadInput):
    """Slurm cannot be told to run this choice (or these choices together)."""


T = TypeVar("T")


@dataclass(frozen=True)
class Context:
    """What a plugin sees when it proposes candidates or enacts a choice: the cluster and
    its configuration, and, when the advice has them, the snapshot and the history of
    finished jobs (``advisor.model.HISTORY_COLUMNS``, and the accounting and efficiency
    columns a source gives), from which each family derives its own inputs."""

    cluster: Cluster                               # nodes and partitions
    config: SchedulingConfig = SchedulingConfig()  # the configuration in effect
    pending: int = 0                               # jobs pending now
    long_queue: int | None = LONG_QUEUE            # see LONG_QUEUE; None: no queue is long
    policy: Policy | None = None                   # enact: the policy the choice is part of
    snapshot: Snapshot | None = field(default=None, compare=False, repr=False)
    history: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    #: what ``derived`` computed, shared by the contexts ``with_policy`` makes
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def queue_is_long(self) -> bool:
        return self.long_queue is not None and self.pending > self.long_queue

    def chosen(self, family: str):
        """The policy's choice of ``family`` (a ``Choice``), or None."""
        return self.policy.choice(family) if self.policy is not None else None

    def derived(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, once per context (and the contexts made from it): a family's
        inputs from the snapshot or the history, which every candidate's enactment asks
        for. ``key``: the family's name and what it computes ("queues.limits")."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    def with_policy(self, policy: Policy) -> Context:
        return dataclasses.replace(self, policy=policy)


@runtime_checkable
class Player(Protocol):
    """A family's play of a partition its Slurm form adds and the slurm mode does not play
    itself (a time-sliced one). The slurm mode lends it what it plays of the rest
    (``advisor.whatif.scenario.SlurmPlay``), so that its module needs only the engine."""

    def claims(self, machine: Cluster, config: SchedulingConfig) -> bool:
        """Whether this layout holds a partition it plays; BadInput for one it recognises
        but cannot play (saying what it plays)."""

    def starts(self, inp, cand, snap: Snapshot, runtimes: Mapping[int, int],
               arrivals: Sequence[Job], slurm) -> np.ndarray:
        """Each job's start under ``cand`` (``inp``: its slurm-mode input, in its order;
        ``slurm``: the slurm mode's play of the rest)."""


@runtime_checkable
class PolicyPlugin(Protocol):
    """A member of a policy family (see the module docstring)."""

    family: str
    name: str
    summary: str
    Params: type

    def candidates(self, context: Context) -> Iterable[Any]:
        """Params values worth simulating for this snapshot (none: the grid omits it)."""

    def configure(self, config: EngineConfig, params: Any) -> EngineConfig:
        """The textbook engine's settings with this choice."""

    def enact(self, params: Any, context: Context) -> Enactment:
        """What Slurm is told to run this choice; raise NoSlurmForm if it cannot be."""


class PluginBase:
    """Defaults of the optional members; subclassing it is a convenience, not a must."""

    rank: int = OPTIONAL["rank"]
    default: bool = OPTIONAL["default"]
    bounds_wait: bool = OPTIONAL["bounds_wait"]
    replaces: tuple[str, ...] = OPTIONAL["replaces"]
    aliases: dict[str, dict] = OPTIONAL["aliases"]
    compile_kernels = OPTIONAL["compile_kernels"]
    #: the family's benchmark, a script named as an entry point is ("package.module:main"):
    #: ``main(argv)`` prints its figures (``advisor bench --family FAMILY -- OPTIONS``); named,
    #: not imported, for a benchmark may import anything and the plugin only the seam
    bench = OPTIONAL["bench"]
    player = OPTIONAL["player"]
    short_slot: int | None = OPTIONAL["short_slot"]
    short_extra: str = OPTIONAL["short_extra"]


@dataclass(frozen=True)
class NoParams:
    """No parameters."""


def param(default, help: str, **bounds):
    """A Params field: its default, what it means, and any of ``min``, ``max``,
    ``choices``, ``kind`` ("duration", or "plugin" with ``family``: another plugin's
    name), ``renamed`` ({old value: its choice now}: a spec written, or stored, before a
    choice was renamed still parses, to the new name), ``quiet`` (True: a spec writes it
    only when it differs from its default, a default that will not change: specs written
    before the parameter existed stay as they were)."""
    return field(default=default, metadata={"help": help, **bounds})


def params_problems(Params) -> list[str]:
    """What is wrong with a Params class (empty when nothing is)."""
    if not (isinstance(Params, type) and dataclasses.is_dataclass(Params)):
        return ["Params is not a dataclass"]
    if not Params.__dataclass_params__.frozen:
        return ["Params is not frozen (@dataclass(frozen=True))"]
    problems = []
    for f in dataclasses.fields(Params):
        if f.default is dataclasses.MISSING:
            problems.append(f"Params.{f.name} has no default")
            continue
        meta = f.metadata
        unknown = set(meta) - PARAM_KEYS
        if unknown:
            problems.append(f"Params.{f.name} says {', '.join(sorted(unknown))}, which "
                            f"param() does not know ({', '.join(sorted(PARAM_KEYS))})")
        if meta.get("kind") not in (None, *KINDS):
            problems.append(f"Params.{f.name} has an unknown kind '{meta['kind']}'")
        if meta.get("kind") == "plugin" and not meta.get("family"):
            problems.append(f"Params.{f.name} names a plugin but no family")
        if "choices" in meta and f.default not in meta["choices"]:
            problems.append(f"Params.{f.name}'s default {f.default!r} is not one of its "
                            "choices")
        if "min" in meta and f.default < meta["min"]:
            problems.append(f"Params.{f.name}'s default is below its min {meta['min']}")
        if "max" in meta and f.default > meta["max"]:
            problems.append(f"Params.{f.name}'s default is above its max {meta['max']}")
    return problems


def parse_param(Params, key: str, text: str, resolve=None):
    """The value of ``key=text`` for ``Params``, checked against its field's bounds;
    ``resolve(family, name)`` checks a plugin name (and may normalise it)."""
    fields = {f.name: f for f in dataclasses.fields(Params)}
    f = fields[key]
    meta = f.metadata
    kind = type(f.default)
    if meta.get("kind") == "duration":
        value = parse_duration(text)
    elif meta.get("kind") == "plugin":
        value = resolve(meta["family"], text) if resolve else text.lower()
    elif kind is bool:
        if text.lower() not in ("yes", "no", "true", "false", "1", "0"):
            raise BadInput(f"{key}={text}: {key} takes yes or no")
        value = text.lower() in ("yes", "true", "1")
    elif kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            raise BadInput(f"{key}={text}: {key} takes a "
                           f"{'whole ' if kind is int else ''}number") from None
    else:
        value = meta.get("renamed", {}).get(text, text)
    if "choices" in meta and value not in meta["choices"]:
        raise BadInput(f"{key}={text}: choose one of {', '.join(meta['choices'])}"
                       f"{nearest(str(value), meta['choices'])}")
    if "min" in meta and value < meta["min"]:
        raise BadInput(f"{key}={text}: {key} must be at least {show_value(f, meta['min'])}")
    if "max" in meta and value > meta["max"]:
        raise BadInput(f"{key}={text}: {key} must be at most {show_value(f, meta['max'])}")
    return value


def show_value(f: dataclasses.Field, value) -> str:
    """A parameter's value as a spec writes it (durations as 20h, 1d)."""
    if f.metadata.get("kind") == "duration" and isinstance(value, int):
        return format_duration(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def describe_params(Params) -> list[dict]:
    """Each parameter's name, default, bounds and help (for ``advisor policies``);
    durations as 20h, 1d."""
    def shown(f, value):
        return show_value(f, value) if f.metadata.get("kind") == "duration" else value

    out = []
    for f in dataclasses.fields(Params):
        meta = dict(f.metadata)
        for bound in ("min", "max"):
            if bound in meta:
                meta[bound] = shown(f, meta[bound])
        out.append({"name": f.name, "default": shown(f, f.default), **meta})
    return out
