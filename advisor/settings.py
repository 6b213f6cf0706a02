"""How a recommendation is judged (``Settings``), with its defaults in one place: the
recommender, the command line's parser and its help all read them here. Light on purpose
(no numpy, no engine), so that ``advisor --help`` imports nothing heavy."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from advisor.errors import BadInput

if TYPE_CHECKING:
    from advisor.plugins.spec import Policy

OBJECTIVES = ("avg_bsld", "avg_wait", "p95_wait", "utilization")
#: a queue at least this long is long: families whose simulations cost seconds there (as
#: conservative backfilling's, which re-plans every job) propose nothing
LONG_QUEUE = 1000


@dataclass(frozen=True)
class Settings:
    objective: str = "avg_bsld"
    samples: int = 8
    horizon: int = 86400
    horizon_max: int = 3 * 86400  # the horizon grows to the queue's drain time, up to this
    seed: int = 0
    risk: float = 1.5
    min_gain: float = 0.05
    min_wins: float = 0.75
    trigger: float | None = None
    history_weeks: int = 4
    policies: tuple[Policy, ...] | None = None   # None: the default grid
    conservative_up_to: int = LONG_QUEUE   # the default grid's long queue, in pending jobs
    reference: Policy | None = None        # risk limits against this policy (None: current)
    history_floor: bool = True             # ... and no lower than it gives on the history
    past: bool = True          # the last history_weeks replayed under each candidate, weighed
    dwell: int = 7 * 86400     # a change at most this often, unless the evidence overwhelms
    race: int = 6              # futures for the best this many by the past (0: for all)
    steady: bool = True        # the past's gain must hold in min_wins of its weeks
    #: candidates may change the site's fair-share, QOS, association or partition weights
    replace_site_policy: bool = False

    def check(self) -> None:
        if self.objective not in OBJECTIVES:
            raise BadInput(f"unknown objective '{self.objective}'; use one of "
                           f"{', '.join(OBJECTIVES)}")
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
