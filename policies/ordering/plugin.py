"""ordering/*: the seven queue orderings of Lelong et al. §3.2.

Each one orders the primary queue (start and reserve) and, unless the backfill plugin is
given another, the backfill queue. Ties are broken by submit time, then by job id. FCFS is
the family's default and, alone among them, bounds every job's wait by itself.

In Slurm (``enact``; docs/slurm-mapping.md, "Orderings") an ordering is the priority that
priority/multifactor computes, with every other weight at 0: FCFS is all weights 0 (ties
fall back to submit time); LCFS, SPF and LPF are a site factor that job_submit.lua sets at
submission (``SiteRule``; pending jobs get theirs by ``scontrol update``); SQF and LQF are
a CPU TRES weight of -1 or +1 with NO_NORMAL_TRES. EXP changes with time and has no Slurm
form (it would need a site-factor plugin).

On a site whose fair-share, QOS, association or partition weights are in use (its policy),
an ordering may instead be *added* to that policy (``scale`` N >= 1): the weights stay, and
the ordering's key spans N times the largest of them. SPF and LPF are a site factor from 0
to that span by the limit (within the band a threshold uses: a day, or the longest
MaxTime); LQF a normalized CPU TRES weight of the span; SQF the same weight negative, over
a constant site factor of the span so that no priority falls below the others'; FCFS adds
nothing: the site's own priority decides. The grid proposes N = 1 and 4 there.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from advisor.plugins import (LIMIT_MINUTES_LUA, NEUTRAL_WEIGHTS, Context, Enactment,
                             EngineConfig, JobColumns, LuaFragment, NoParams, NoSlurmForm,
                             param, site_policy)

#: LCFS: the site factor counts seconds from this epoch (2020-09-13), so that it stays within
#: Slurm's signed 31-bit range for decades; a trace's own clock starts at 0 instead
LCFS_EPOCH = 1_600_000_000
#: SPF: the site factor is this minus the limit in minutes (positive for limits under ~2000
#: years); LPF is the limit itself
SPF_BASE = 1 << 30
#: SQF: a base above any job's CPU count, so that base - CPUs stays above 1 (priorities below
#: 1 are raised to 1 and would tie)
SQF_BASE = 1 << 22
#: the strengths the grid proposes for an ordering added to a site's policy (``scale``)
GRID_SCALES = (1, 4)


@dataclass(frozen=True)
class AddedParams:
    scale: int = param(0, "0: replaces the site's priority weights; N: added to its "
                       "fair-share, QOS, association and partition weights, spanning N "
                       "times the largest", min=0, quiet=True)



def lcfs_factor(jobs: JobColumns, now: int) -> np.ndarray:
    """Seconds since LCFS_EPOCH on a live cluster's clock; a trace's clock needs no offset."""
    return jobs.submit - (LCFS_EPOCH if now > LCFS_EPOCH else 0)


def spf_factor(jobs: JobColumns, now: int) -> np.ndarray:
    return SPF_BASE - jobs.limit // 60


def lpf_factor(jobs: JobColumns, now: int) -> np.ndarray:
    return jobs.limit // 60


@dataclass(frozen=True)
class SiteRule:
    """A site factor set by job_submit.lua at submission (and on a limit change), and by
    ``scontrol update JobId=.. SiteFactor=..`` for jobs already pending (a ``JobRule``)."""

    name: str
    expr: str                 # a Lua expression of job_desc (and limit_minutes)
    factor: Callable[[JobColumns, int], np.ndarray]
    uses_limit: bool = False

    def values(self, jobs: JobColumns, now: int) -> np.ndarray:
        return self.factor(jobs, now)

    @property
    def lua(self) -> LuaFragment:
        modify = ("   if job_desc.time_limit ~= nil and job_desc.time_limit ~= slurm.NO_VAL "
                  f"then\n      job_desc.site_factor = {self.expr}\n   end\n"
                  if self.uses_limit else "")
        return LuaFragment(f"site factor for {self.name.upper()} ordering",
                           LIMIT_MINUTES_LUA if self.uses_limit else "",
                           f"   job_desc.site_factor = {self.expr}\n", modify)


LCFS_RULE = SiteRule("lcfs", f"os.time() - {LCFS_EPOCH}", lcfs_factor)
SPF_RULE = SiteRule("spf", f"{SPF_BASE} - limit_minutes(job_desc, part_list)", spf_factor, True)
LPF_RULE = SiteRule("lpf", "limit_minutes(job_desc, part_list)", lpf_factor, True)


@dataclass(frozen=True)
class ScaledLimit:
    """A site factor from 0 to ``span`` by the limit in minutes within ``band`` (``short``:
    the shortest gets the span, as SPF; else the longest, as LPF), rounded half up."""

    span: int
    band: int
    short: bool

    def __call__(self, jobs: JobColumns, now: int) -> np.ndarray:
        x = np.minimum(jobs.limit // 60, self.band) / self.band
        return np.floor(self.span * ((1 - x) if self.short else x) + 0.5).astype(np.int64)

    @property
    def expr(self) -> str:
        x = f"math.min(limit_minutes(job_desc, part_list), {self.band}) / {self.band}"
        return f"math.floor({self.span} * ({'1 - ' if self.short else ''}{x}) + 0.5)"


@dataclass(frozen=True)
class Constant:
    """The same site factor for every job."""

    value: int

    def __call__(self, jobs: JobColumns, now: int) -> np.ndarray:
        return np.full(len(jobs.submit), self.value, np.int64)


def limit_band(context: Context) -> int:
    """The limits (minutes) a limit order tells apart: the longest MaxTime, at least a day
    (beyond it, every limit ranks as the longest)."""
    limits = [p.max_time for p in context.cluster.partitions]
    longest = max(limits) // 60 if limits and None not in limits else 0
    return max(1440, longest)


def added_form(kind: str, scale: int, context: Context) -> Enactment:
    """Ordering ``kind`` (fcfs, spf, lpf, sqf, lqf) added to the site's policy at
    ``scale`` (see the module docstring); NoSlurmForm when no policy is in effect."""
    policy = site_policy(context.config, context.cluster)
    if not policy:
        raise NoSlurmForm(f"scale={scale} adds {kind.upper()} to the site's priority "
                          "policy, and none is in effect (no fair-share, QOS, association "
                          "or partition weight): give it without scale")
    span = scale * max(policy.values())
    keep = (f"added to the site's priority weights, which stay: its key spans {span} "
            f"priority points, {scale} x the largest of its policy weights "
            f"({max(policy.values())})")
    sets: dict = {}     # (a policy is in effect: priority/multifactor is already)
    rule = None
    if kind in ("spf", "lpf"):
        rule = ScaledLimit(span, limit_band(context), kind == "spf")
        rule = SiteRule(f"{kind}+{span}", rule.expr, rule, True)
    elif kind in ("sqf", "lqf"):
        tres = dict(context.config.priority_weight_tres)
        tres["CPU"] = float(-span if kind == "sqf" else span)
        sets["priority_weight_tres"] = tres
        if kind == "sqf":
            rule = SiteRule(f"sqf base {span}", str(span), Constant(span))
    caveats = (keep if kind != "fcfs" else "keeps the site's priority weights as they "
               "are: they decide, and submit time among equals",)
    if kind in ("sqf", "lqf"):
        caveats += ("by CPUs over the partition's CPUs (normalized TRES)",)
    return Enactment(sets=sets, site_factor=rule, caveats=caveats)


@dataclass(frozen=True)
class SlurmOrdering:
    """An ordering's Slurm form: weights to set, a site rule, its fidelity and caveats."""

    weights: tuple[tuple[str, object], ...] = ()
    site: SiteRule | None = None
    fidelity: str = "exact"
    caveats: tuple[str, ...] = ()
    #: the key's whole range, which a threshold's age slope gains per T ("cpus": the
    #: machine's CPUs; "limit": the longest partition MaxTime in minutes, at least a day);
    #: 0: no threshold form, ``no_threshold`` says why
    band: int | str = 0
    no_threshold: str = "all priorities are equal: age alone would order"
    #: its form added to a site's policy (``added_form``'s kind); "": none
    added: str = ""


@dataclass(frozen=True)
class Ordering:
    name: str
    summary: str
    rank: int
    engine: str                          # the core's name for it (advisor.engine.ORDERINGS)
    slurm: SlurmOrdering | None = None
    default: bool = False
    bounds_wait: bool = False
    family: str = "ordering"
    Params: type = NoParams
    #: the second word of a spec's short form (easy:SPF)
    short_slot: int = 1

    def candidates(self, context: Context) -> tuple:
        """Its one form; on a site with a priority policy, also added to it (``scale``)."""
        if self.Params is NoParams or not site_policy(context.config, context.cluster):
            return (self.Params(),)
        scales = GRID_SCALES[:1] if self.slurm.added == "fcfs" else GRID_SCALES
        return (self.Params(), *(self.Params(scale=n) for n in scales))

    def configure(self, config: EngineConfig, params) -> EngineConfig:
        return replace(config, primary=self.engine)

    def enact(self, params, context: Context) -> Enactment:
        """priority/multifactor ordering jobs this way, every other weight 0, and the site
        factor job_submit.lua sets."""
        if self.slurm is None:
            raise NoSlurmForm(f"Slurm has no form of {self.name.upper()} ordering (it would "
                              "need a site-factor plugin)")
        if getattr(params, "scale", 0):
            return added_form(self.slurm.added, params.scale, context)
        return Enactment(sets={"priority_type": "priority/multifactor",
                               **dict(self.slurm.weights)},
                         clears=NEUTRAL_WEIGHTS, site_factor=self.slurm.site,
                         fidelity=self.slurm.fidelity, caveats=self.slurm.caveats)

    def key_range(self, context: Context) -> int:
        """The priority range the key spans (a threshold's age slope gains it per T);
        0: a threshold on this ordering has no Slurm form (``no_threshold`` says why)."""
        chosen = context.chosen("ordering")
        scale = getattr(chosen.params, "scale", 0) if chosen is not None else 0
        policy = site_policy(context.config, context.cluster) if scale else {}
        if policy:
            # added to the site's policy: its key's span, and the most the site's own
            # weights (the policy's and job size's) set two jobs apart
            span = 0 if self.slurm.added == "fcfs" else scale * max(policy.values())
            return (span + sum(policy.values())
                    + max(context.config.priority_weight_job_size, 0))
        band = self.slurm.band if self.slurm else 0
        if band == "cpus":
            return max(context.cluster.cpus, 1)
        if band == "limit":
            return limit_band(context)
        return int(band)

    @property
    def no_threshold(self) -> str:
        return self.slurm.no_threshold if self.slurm else "it has no Slurm form"


_REPLACES = "replaces the site's priority weights (fair share, QOS, age, ...) with this order"

FCFS = Ordering("fcfs", "first come, first served: earliest submit first", 10, "FCFS",
                default=True, bounds_wait=True, Params=AddedParams, slurm=SlurmOrdering(
                    added="fcfs", caveats=(
                        "all priorities are 1: submit time, then job id, decide (F1)",
                        _REPLACES)))
LCFS = Ordering("lcfs", "last come, first served: latest submit first", 11, "LCFS",
                slurm=SlurmOrdering(site=LCFS_RULE, no_threshold=(
                    "an age ramp is bounded and LCFS's site factor grows with the clock, so a "
                    "waiting job falls behind every later one whatever the weight"), caveats=(
                    "1-second granularity: jobs of the same second run FCFS", _REPLACES)))
SPF = Ordering("spf", "smallest estimated processing time (requested time) first", 12, "SPF",
               Params=AddedParams, slurm=SlurmOrdering(site=SPF_RULE, band="limit",
                                                       added="spf", caveats=(
                   "by the limit in whole minutes; equal limits run FCFS",
                   "a job whose limit an administrator changes is re-ranked by "
                   "slurm_job_modify", _REPLACES)))
LPF = Ordering("lpf", "largest estimated processing time first", 13, "LPF",
               Params=AddedParams, slurm=SlurmOrdering(site=LPF_RULE, band="limit",
                                                       added="lpf", caveats=(
                   "by the limit in whole minutes; equal limits run FCFS", _REPLACES)))
SQF = Ordering("sqf", "smallest resource requirement (processors) first", 14, "SQF",
               Params=AddedParams, slurm=SlurmOrdering(band="cpus", added="sqf", weights=(
                   ("priority_weight_tres", {"CPU": -1.0}),
                   ("priority_flags", ("NO_NORMAL_TRES",)),
                   ("priority_weight_partition", SQF_BASE)), caveats=(
                   "a PriorityWeightPartition base keeps priorities positive: partitions "
                   "must share one PriorityJobFactor", _REPLACES)))
LQF = Ordering("lqf", "largest resource requirement first", 15, "LQF",
               Params=AddedParams, slurm=SlurmOrdering(band="cpus", added="lqf", weights=(
                   ("priority_weight_tres", {"CPU": 1.0}),
                   ("priority_flags", ("NO_NORMAL_TRES",))), caveats=(_REPLACES,)))
EXP = Ordering("exp", "largest expansion factor (wait + estimate) / estimate first", 16, "EXP")
