"""How a recommendation is judged (``Settings``), each setting with its default, bounds and
help in one place: the recommender reads them, and the command line makes its options and
their help from them (``advisor.cli_args``). Light on purpose
(no numpy, no engine), so that ``advisor --help`` imports nothing heavy."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from advisor.bounds import (LONG_QUEUE, MAX_CANDIDATES, MAX_HISTORY_WEEKS, MAX_HORIZON,
                            MAX_SAMPLES, MAX_SITE_CHECK)
from advisor.errors import BadInput

if TYPE_CHECKING:   # (above the plugins: they never import settings)
    from advisor.plugins.spec import Policy

OBJECTIVES = ("avg_bsld", "avg_wait", "p95_wait", "utilization")
DECISIONS = ("evidence", "rolling")


def option(default, help: str, kind: str = "", low=None, high=None, choices=(),
           flag: str = "", metavar: str = ""):
    """A setting the command line takes (``advisor.cli_args`` makes each option from this):
    its default, its help (``{default}`` is replaced by the default as a user writes it),
    its ``kind`` ("count", "number", "duration", "choice", "spec", "specs", "switch"), the
    bounds a value must keep (``low``, ``high``: at least, at most), and the option's name
    when it is not the setting's (``flag``: "--no-past" sets ``past`` to False)."""
    return field(default=default, metadata={
        "help": help, "kind": kind, "low": low, "high": high, "choices": choices,
        "flag": flag, "metavar": metavar})


@dataclass(frozen=True)
class Settings:
    objective: str = option("avg_bsld", "what to improve: {choices} (default {default})",
                            "choice", choices=OBJECTIVES)
    decision: str = option("evidence", "how the evidence decides: 'evidence' (a win on the "
                           "weeks replayed by --min-gain, the futures agreeing), or "
                           "'rolling' (the hand rule: the best within the risk limits on "
                           "the weeks replayed, at most once per --dwell, the futures a "
                           "check) (default {default})", "choice", choices=DECISIONS)
    samples: int = option(8, "sampled futures (default {default}; 0: the past replayed "
                          "alone; at most {high})", "count", 0, MAX_SAMPLES)
    horizon: int = option(86400, "simulated future (default {default}; at most {high})",
                          "duration", 60, MAX_HORIZON)
    horizon_max: int = option(3 * 86400, "the horizon grows to the queue's drain time (its "
                              "jobs' limits in CPU-seconds over the CPUs) up to this "
                              "(default {default}; 0: fixed; at most {high})", "duration", 0,
                              MAX_HORIZON)
    seed: int = option(0, "seed of every random draw", "count", 0)
    risk: float = option(1.5, "MaxWait and p95 wait may grow to this factor of the "
                         "configuration in effect's (or --reference's), no job's wait "
                         "past its longest wait by more, nor an account's mean wait past "
                         "its own (default {default})", "number", 1)
    min_gain: float = option(0.05, "relative gain needed, 0.05 for 5%% (default {default}; "
                             "at most 1: no wait is cut by more than all of it)", "number",
                             0, 1)
    min_wins: float = option(0.75, "share of the weeks replayed (and of the samples, for a "
                             "candidate without a replay) the gain must hold in, 0 to 1 "
                             "(default {default})", "number", 0, 1)
    trigger: float | None = option(None, "simulate only when the queue's bounded slowdown "
                                   "exceeds T (Lawson and Smirni's trigger)", "number", 0,
                                   metavar="T")
    history_weeks: int = option(4, "weeks of finished jobs that futures are drawn from and "
                                "that are replayed under each candidate (default {default}; "
                                "at most {high}; a history holding fewer is used whole, and "
                                "the report says so)", "count", 1, MAX_HISTORY_WEEKS)
    #: None: the default grid
    policies: tuple[Policy, ...] | None = option(
        None, "simulate this policy (repeatable, at most {high} times; default: the grid of "
        "'advisor policies')", "specs", high=MAX_CANDIDATES, flag="--candidate",
        metavar="SPEC")
    #: the default grid's long queue, in pending jobs
    conservative_up_to: int = option(
        LONG_QUEUE, "the candidates whose simulations cost seconds on a long queue "
        "('advisor policies' says which) are in the default grid only while at most N jobs "
        "are pending (default {default})", "count", 0, metavar="N")
    #: risk limits against this policy (None: the configuration in effect)
    reference: Policy | None = option(
        None, "risk limits against this policy (default: the configuration in effect; "
        "replay --online: its --policy baseline), and no lower than --risk times its "
        "MaxWait and p95 wait on the last --history-weeks of history, replayed", "spec",
        metavar="SPEC")
    #: ... and no lower than it gives on the history
    history_floor: bool = option(True, "risk limits against the reference's futures alone, "
                                 "not floored by its replayed history", "switch",
                                 flag="--no-history-floor")
    #: the last history_weeks replayed under each candidate, weighed
    past: bool = option(True, "judge on the sampled futures alone, not also on the last "
                        "--history-weeks replayed", "switch", flag="--no-past")
    #: a change at most this often, unless the evidence overwhelms
    dwell: int = option(7 * 86400, "recommend a change at most this often unless the "
                        "evidence is overwhelming (default {default}; 0: any day)",
                        "duration", 0)
    #: futures for the best this many by the past (0: for all)
    race: int = option(6, "sample futures only for the N candidates best on the past "
                       "replayed (and the configuration in effect and the reference), drop "
                       "those clearly behind after 2 samples (default {default}; 0: no "
                       "race, all on every sample)", "count", 0, metavar="N")
    #: the past's gain must hold in min_wins of its weeks (no option: a study's knob)
    steady: bool = True
    #: candidates may change the site's fair-share, QOS, association or partition weights
    replace_site_policy: bool = option(
        False, "let candidates change the site's fair-share, QOS, association or partition "
        "priority weights (default: such candidates are left out, never recommended)",
        "switch")
    #: a job_submit.lua candidate over the best knob only by this much more gain
    lua_margin: float = option(
        0.05, "on a priority/multifactor site, a candidate enacted through job_submit.lua "
        "is recommended over the best change of slurm.conf alone (a knob, docs/native.md) "
        "only when its gain is larger by this, 0.05 for 5 points (default {default})",
        "number", 0, 1)
    #: the knobs (native slurm.conf changes, ``advisor.plugins.Knob``) in the default grid
    knobs: bool = option(True, "leave the native slurm.conf changes (the knobs: priority "
                         "weights, the half-life, bf_* settings) out of the default grid",
                         "switch", flag="--no-knobs")
    #: fairness on the futures: the deviation over the reference's by at most this
    share_slack: float = option(
        0.05, "a candidate's fair-share deviation (half the CPU-time share its accounts "
        "received away from their normalized shares) may exceed the reference's by this, "
        "0 to 1 (default {default}); each account's mean wait may grow to --risk times "
        "its own", "number", 0, 1)

    #: the site's own past replayed first (``advisor check``), and the trust it must earn
    site_check: int = option(
        86400, "replay this much of a live cluster's own past before deciding (advisor "
        "check: its accounting, the state rebuilt every 6 h) and say how faithfully the "
        "simulation reproduced it (default {default}; 0: no check; at most {high})",
        "duration", 0, MAX_SITE_CHECK)
    fidelity_floor: float = option(
        0.5, "recommend no change while that check starts fewer than this share of the "
        "site's jobs within max(2 s, bf_interval) of their real start, 0 to 1 (default "
        "{default}; 0: trust it whatever it finds)", "number", 0, 1)

    def __post_init__(self):
        self.check()     # a Settings is checked once, when made: none exists out of bounds

    def check(self) -> None:
        self._check_bounds()
        if self.objective not in OBJECTIVES:
            raise BadInput(f"unknown objective '{self.objective}'; use one of "
                           f"{', '.join(OBJECTIVES)}")
        if self.decision not in DECISIONS:
            raise BadInput(f"unknown decision '{self.decision}'; use one of "
                           f"{', '.join(DECISIONS)}")
        if self.decision == "rolling" and (not self.past or
                                           self.objective == "utilization"):
            raise BadInput("--decision rolling picks on the past replayed: it needs the "
                           "past (no --no-past) and an objective it can judge (not "
                           "utilization)")
        if self.samples < 0 or self.horizon < 60 or self.horizon_max < 0:
            raise BadInput("--samples must be at least 0, --horizon at least 60 s and "
                           "--horizon-max at least 0")
        if self.samples == 0 and (not self.past or self.objective == "utilization"):
            raise BadInput("--samples 0 judges on the past replayed alone: it needs the "
                           "past (no --no-past) and an objective it can judge (not "
                           "utilization)")
        if self.risk < 1 or not 0 <= self.min_wins <= 1 or self.min_gain < 0:
            raise BadInput("--risk must be >= 1, --min-wins in [0, 1], --min-gain >= 0")
        if self.conservative_up_to < 0:
            raise BadInput("--conservative-up-to must be a number of pending jobs, >= 0")
        if self.history_weeks < 1:
            raise BadInput("--history-weeks must be at least 1")
        if self.dwell < 0 or self.race < 0:
            raise BadInput("--dwell must be a duration >= 0 and --race a count >= 0")

    def _check_bounds(self) -> None:
        """Every setting within the bounds its option states: one line naming the option,
        the value and the bound."""
        for f in fields(self):
            meta, value = f.metadata, getattr(self, f.name)
            if not meta or value is None or meta["high"] is None:
                continue
            size = len(value) if meta["kind"] == "specs" else value
            if size > meta["high"]:
                flag = meta["flag"] or "--" + f.name.replace("_", "-")
                shown = f"{len(value)} times" if meta["kind"] == "specs" else f"{value:g}"
                bound = (f"{meta['high'] // 86400} days" if meta["kind"] == "duration"
                         else f"{meta['high']:g}")
                raise BadInput(f"{flag} {shown} is over its bound of {bound}: a run takes "
                               f"at most that (see advisor recommend --help)")

    def as_dict(self) -> dict:
        """JSON-ready: the policies as their specs."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "policies":
                out["specs"] = [p.spec for p in value] if value else None
            elif f.name == "reference":
                out["reference"] = value.spec if value else None
            else:
                out[f.name] = value
        return out


#: the defaults, for the parser and its help
DEFAULTS = Settings()
