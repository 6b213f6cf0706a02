"""prio/*: priority/multifactor's own settings, one at a time (slurm.conf(5)).

* age: PriorityWeightAge and PriorityMaxAge, how much and how soon waiting raises a job;
* jobsize: PriorityWeightJobSize and PriorityFavorSmall;
* fairshare: PriorityWeightFairshare;
* qos, partition: PriorityWeightQOS, PriorityWeightPartition;
* decay: PriorityDecayHalfLife, how long past usage counts against an account;
* tres: PriorityWeightTRES, how much each TRES a job asks for counts;
* reset: PriorityUsageResetPeriod, when all past usage is forgotten at once.

The grid proposes them on a site whose priority is a policy (priority/multifactor with a
fair-share, QOS, association or partition weight that sets jobs apart:
``advisor.plugins.site_policy``), from its weights and its queue:
* the age weight at half and at the whole of the largest policy weight, and PriorityMaxAge
  cut to the oldest pending job's wait (in whole days) when that is under half of it (the
  age factor then spreads over the waits the queue has);
* a job-size weight of half the largest policy weight, favouring small jobs and large
  ones, where none is set (else half and twice the one set);
* the fair-share weight halved and doubled, and the half-life halved and doubled (within a
  day and four weeks), where fair share is played;
* the QOS and partition weights halved and doubled (the largest policy weight where 0) when
  the pending jobs' QOS priorities or their partitions' PriorityJobFactor differ;
* a TRES's weight, when the pending jobs ask for different amounts of it: a GRES that
  AccountingStorageTRES tracks at half the largest policy weight where unset (larger
  requests first, against backfill's lean to small ones), and a weight set (CPU's too)
  halved and doubled (a CPU weight where none is set would repeat prio/jobsize's larger
  jobs first);
* PriorityUsageResetPeriod where fair share is played with no decay (a half-life of 0:
  usage only grows unless reset): MONTHLY and QUARTERLY where none is set, else the
  periods either side of the one set.
Each changes the balance between the site's policy and waiting, which the fairness figures
judge beside the waits.
"""
from __future__ import annotations

from dataclasses import dataclass

from advisor.plugins import Context, Knob, param, site_policy
from advisor.policies.prio.inputs import (RESET_PERIODS, asked_tres, fair_share_played,
                                          oldest_wait, partition_factors, qos_levels,
                                          tres_text, tres_weights)

#: Slurm's weights are 32-bit [slurm.conf(5)]
MAX_WEIGHT = 4294967295
#: the half-lives the grid keeps to
MIN_HALF_LIFE, MAX_HALF_LIFE = 86400, 28 * 86400


def days(seconds: float) -> int:
    """``seconds`` rounded up to whole days, in seconds (at least one day)."""
    return max(int(-(-seconds // 86400)), 1) * 86400


class PrioKnob(Knob):
    """A priority/multifactor setting: it stands for the ordering and the backfilling the
    configuration in effect has."""

    family = "prio"
    replaces = ("backfill", "ordering")

    def halved_doubled(self, context: Context, top: int) -> list[dict]:
        """Half and twice the weight in effect (the first key), or ``top`` where it is 0."""
        key, weight = next(iter(self.SETS)), self.current(context)
        return [{key: top}] if weight == 0 else [{key: weight // 2}, {key: 2 * weight}]


class PolicyWeight(PrioKnob):
    """The weight of a factor that sets the pending jobs apart only when their ``levels``
    (QOS priorities, partition factors) differ: halved and doubled, or the largest policy
    weight where 0."""

    def levels(self, context: Context) -> set:
        raise NotImplementedError

    def propose(self, context: Context) -> list[dict]:
        top = _top(context)
        if not top or len(self.levels(context)) < 2:
            return []
        return self.halved_doubled(context, top)


def _weight(default: int, what: str):
    return param(default, f"{what} (slurm.conf; Slurm's default {default})", min=0,
                 max=MAX_WEIGHT)


def _top(context: Context) -> int:
    """The largest weight of the site's policy (0: its priority is no policy)."""
    return max(site_policy(context.config, context.cluster).values(), default=0)


@dataclass(frozen=True)
class AgeParams:
    PriorityWeightAge: int = _weight(0, "the age factor's weight")
    PriorityMaxAge: int = param(7 * 86400, "the wait at which the age factor reaches 1 "
                                "(Slurm's default 7 days)", min=60, kind="duration")


class Age(PrioKnob):
    name, rank, Params = "age", 60, AgeParams
    summary = "PriorityWeightAge, PriorityMaxAge: how much and how soon waiting counts"
    SETS = {"PriorityWeightAge": "priority_weight_age", "PriorityMaxAge": "priority_max_age"}

    def propose(self, context: Context) -> list[dict]:
        top = _top(context)
        if not top:
            return []
        out = [{"PriorityWeightAge": w} for w in (top // 2, top)]
        oldest = oldest_wait(context.snapshot)
        if 0 < oldest and days(oldest) <= context.config.priority_max_age // 2:
            out.append({"PriorityMaxAge": days(oldest)})
        return out


@dataclass(frozen=True)
class JobSizeParams:
    PriorityWeightJobSize: int = _weight(0, "the job-size factor's weight")
    PriorityFavorSmall: bool = param(False, "yes: the smaller the job, the higher its "
                                     "job-size factor (Slurm's default no)")


class JobSize(PrioKnob):
    name, rank, Params = "jobsize", 61, JobSizeParams
    summary = "PriorityWeightJobSize, PriorityFavorSmall: small or large jobs first"
    SETS = {"PriorityWeightJobSize": "priority_weight_job_size",
            "PriorityFavorSmall": "priority_favor_small"}

    def propose(self, context: Context) -> list[dict]:
        top = _top(context)
        if not top:
            return []
        if self.current(context) == 0:
            return [{"PriorityWeightJobSize": top // 2, "PriorityFavorSmall": small}
                    for small in (True, False)]
        return self.halved_doubled(context, top)


@dataclass(frozen=True)
class FairshareParams:
    PriorityWeightFairshare: int = _weight(0, "the fair-share factor's weight")


class Fairshare(PrioKnob):
    name, rank, Params = "fairshare", 62, FairshareParams
    summary = "PriorityWeightFairshare: how much an account's past usage counts"
    SETS = {"PriorityWeightFairshare": "priority_weight_fairshare"}

    def propose(self, context: Context) -> list[dict]:
        if not fair_share_played(context.snapshot):
            return []
        return self.halved_doubled(context, 0)


@dataclass(frozen=True)
class QosParams:
    PriorityWeightQOS: int = _weight(0, "the QOS factor's weight")


class Qos(PolicyWeight):
    name, rank, Params = "qos", 63, QosParams
    summary = "PriorityWeightQOS: how much a job's QOS priority counts"
    SETS = {"PriorityWeightQOS": "priority_weight_qos"}

    def levels(self, context: Context) -> set:
        return qos_levels(context.snapshot)


@dataclass(frozen=True)
class PartitionParams:
    PriorityWeightPartition: int = _weight(0, "the partition factor's weight")


class PartitionWeight(PolicyWeight):
    name, rank, Params = "partition", 64, PartitionParams
    summary = "PriorityWeightPartition: how much a partition's PriorityJobFactor counts"
    SETS = {"PriorityWeightPartition": "priority_weight_partition"}

    def levels(self, context: Context) -> set:
        return partition_factors(context.snapshot)


@dataclass(frozen=True)
class DecayParams:
    PriorityDecayHalfLife: int = param(7 * 86400, "the half-life of past usage (Slurm's "
                                       "default 7 days; 0: no decay)", min=0,
                                       kind="duration")


class Decay(PrioKnob):
    name, rank, Params = "decay", 65, DecayParams
    summary = "PriorityDecayHalfLife: how long past usage counts against an account"
    SETS = {"PriorityDecayHalfLife": "priority_decay_half_life"}

    def propose(self, context: Context) -> list[dict]:
        half = context.config.priority_decay_half_life
        if not fair_share_played(context.snapshot) or half <= 0:
            return []
        return [{"PriorityDecayHalfLife": h} for h in (half // 2, 2 * half)
                if MIN_HALF_LIFE <= h <= MAX_HALF_LIFE]


@dataclass(frozen=True)
class TresParams:
    PriorityWeightTRES: str = param("", "each TRES's weight, as slurm.conf writes it "
                                    "(CPU=1000,GRES/gpu=2000; Slurm's default none)")


class Tres(PrioKnob):
    name, rank, Params = "tres", 66, TresParams
    summary = "PriorityWeightTRES: how much the CPUs and GPUs a job asks for count"
    SETS = {"PriorityWeightTRES": "priority_weight_tres"}

    def config_value(self, name: str, value):
        return tres_weights(value)

    def param_value(self, name: str, value):
        return tres_text(value)

    def propose(self, context: Context) -> list[dict]:
        top = _top(context)
        if not top:
            return []
        weights = dict(context.config.priority_weight_tres)
        out = []
        for tres in asked_tres(context.snapshot):
            now = weights.get(tres, 0)
            if now <= 0 and tres == "cpu":
                continue    # a CPU weight where none is: prio/jobsize's larger jobs first
            for w in ((top // 2,) if now <= 0 else (now // 2, 2 * now)):
                out.append({"PriorityWeightTRES": tres_text({**weights, tres: w})})
        return out


@dataclass(frozen=True)
class ResetParams:
    PriorityUsageResetPeriod: str = param("NONE", "when all usage is zeroed (Slurm's "
                                          "default NONE)", choices=RESET_PERIODS)


class Reset(PrioKnob):
    name, rank, Params = "reset", 67, ResetParams
    summary = "PriorityUsageResetPeriod: when all past usage is forgotten at once"
    SETS = {"PriorityUsageResetPeriod": "priority_usage_reset_period"}

    def propose(self, context: Context) -> list[dict]:
        if not fair_share_played(context.snapshot) or \
                context.config.priority_decay_half_life > 0:
            return []
        periodic = RESET_PERIODS[2:]
        now = context.config.priority_usage_reset_period
        if now not in periodic:
            return [{"PriorityUsageResetPeriod": p} for p in ("MONTHLY", "QUARTERLY")]
        k = periodic.index(now)
        return [{"PriorityUsageResetPeriod": p} for p in periodic[max(k - 1, 0):k + 2]
                if p != now]


AGE, JOBSIZE, FAIRSHARE, QOS, PARTITION, DECAY, TRES, RESET = (
    Age(), JobSize(), Fairshare(), Qos(), PartitionWeight(), Decay(), Tres(), Reset())
