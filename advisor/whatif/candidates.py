"""Candidates in Slurm's terms: each candidate policy *is* the configuration that enacts it.

A ``Candidate`` holds the full ``SchedulingConfig`` it would put in effect and the site-factor
rule its job_submit.lua would apply; the simulator plays exactly that (engine slurm mode),
and ``advisor.whatif.slurmconf`` renders exactly that. Each part comes from the policy plugins'
``to_slurm`` (ordering, backfill, threshold), with its fidelity and caveats. The
configuration in effect is candidate 0, ``current``: simulated as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

from advisor.errors import BadInput
from advisor.model import Cluster, SchedulingConfig, Snapshot
from advisor.plugins import plugin
from advisor.policy import Policy, parse_policy

CURRENT = "current"
#: the grid simulated by default: four reservation depths (EASY, 2, 4, conservative) under
#: FCFS, and under each ordering with a key, each with one of three starvation ramps. Only
#: candidates that bound a job's wait are in it: an ordering without a ramp (and LCFS, which
#: no ramp can bound in Slurm) may leave a job behind every later one for good, and each
#: decision, comparing finite futures, cannot see it (measured on SDSC-SP2: a 64-CPU job
#: waited 294 days through a run of LCFS decisions). They stay available by --candidate.
ORDERINGS = ("FCFS", "SPF", "LPF", "SQF", "LQF")
BACKFILLS = ("easy", "depth:k=2", "depth:k=4", "conservative")
RAMPS = ("4h", "12h", "24h")
#: the default grid leaves conservative backfilling out when more jobs than this are pending
#: (``--conservative-up-to``): it simulates what Slurm does, every pending job re-planned
#: every cycle, and that costs seconds per simulation on a wide machine with a long queue,
#: against tens of milliseconds for EASY and depth-k (CEA-Curie's 11,520 CPUs, one sample:
#: 0.7-2.6 s at 500 pending, 1.3-3.1 s at 1,000, 2-4 s at 2,000; bench/recommend_scale.py
#: --profile). The largest queues of SDSC-SP2 and CTC-SP2 replayed under EASY or
#: conservative FCFS hold 376 and 608 jobs. The configuration in effect is always simulated.
CONSERVATIVE_UP_TO = 1000


@dataclass(frozen=True)
class Candidate:
    spec: str                     # a policy spec (easy:SPF:T=12h), or "current"
    label: str
    config: SchedulingConfig
    site: object | None = None    # policies.ordering.SiteRule, or None: keep site factors
    fidelity: str = "exact"       # how faithfully Slurm enacts the named policy
    caveats: tuple[str, ...] = ()

    @property
    def is_current(self) -> bool:
        return self.spec == CURRENT

    @property
    def enacts(self) -> tuple:
        """What Slurm would run: the configuration and the site-factor rule (two candidates
        with equal ``enacts`` are one; configs hold dicts, so compare, do not hash)."""
        return (self.config, self.site.name if self.site else None)

    def as_dict(self) -> dict:
        return {"spec": self.spec, "label": self.label, "fidelity": self.fidelity,
                "caveats": list(self.caveats),
                "site_factor": self.site.name if self.site else None}


def current_candidate(config: SchedulingConfig, site: object | None = None) -> Candidate:
    """The configuration in effect; ``site``: the site-factor rule its job_submit.lua
    applies, when known (an online replay's), else pending jobs keep theirs."""
    note = ("the configuration in effect; pending jobs keep their site factors and new jobs "
            "get none") if site is None else "the configuration in effect"
    return Candidate(CURRENT, "in effect", config, site, "exact", (note,))


def slurm_candidate(policy: Policy, base: SchedulingConfig, cluster: Cluster) -> Candidate:
    """The Slurm form of ``policy`` over ``base`` (the configuration in effect: settings a
    candidate does not name stay as they are). BadInput if Slurm cannot express it."""
    if policy.secondary != policy.primary and policy.backfill not in ("none",
                                                                     "conservative"):
        raise BadInput(f"{policy.label}: Slurm backfills in its one priority order, so the "
                       "backfill ordering must equal the primary one (MAPPING.md §2)")
    ordering = plugin("ordering", policy.primary)
    form = ordering.to_slurm(base, cluster)
    if form is None:
        raise BadInput(f"{policy.label}: Slurm has no form of {policy.primary.upper()} "
                       "ordering (it would need a site-factor plugin)")
    config, slurm = form
    fidelity, caveats = slurm.fidelity, list(slurm.caveats)
    config, fid, cav = plugin("backfill", policy.backfill).to_slurm(config,
                                                                   policy.backfill_params)
    fidelity = _worst(fidelity, fid)
    caveats += cav
    if policy.threshold:
        band = slurm.age_band(cluster)
        if band <= 0:
            raise BadInput(f"{policy.label}: a threshold on {policy.primary.upper()} has no "
                           f"Slurm form ({slurm.no_threshold})")
        config, fid, cav = plugin("threshold", policy.threshold).to_slurm(
            config, policy.threshold_params, band)
        fidelity = _worst(fidelity, fid)
        caveats += cav
    return Candidate(policy.spec, policy.label, config, slurm.site, fidelity, tuple(caveats))


def _worst(a: str, b: str) -> str:
    order = ("exact", "approximate", "none")
    return order[max(order.index(a), order.index(b))]


def grid_specs(backfills: tuple[str, ...] = BACKFILLS,
               ramps: tuple[str, ...] = RAMPS) -> list[str]:
    """FCFS, and each ordering with a key under each ramp, under each backfill."""
    specs = []
    for order in ORDERINGS:
        for bf in backfills:
            name, _, extra = bf.partition(":")
            base = f"{name}:{order}" + (f":{extra}" if extra else "")
            specs += [base] if order == "FCFS" else [f"{base}:T={r}" for r in ramps]
    return specs


def default_specs(pending: int, conservative_up_to: int = CONSERVATIVE_UP_TO
                  ) -> tuple[list[str], str]:
    """The default grid for a queue of ``pending`` jobs, and what it leaves out and why
    ("" when nothing)."""
    grid = grid_specs()
    if pending <= conservative_up_to:
        return grid, ""
    kept = grid_specs(tuple(b for b in BACKFILLS if b != "conservative"))
    return kept, (f"{len(grid) - len(kept)} conservative candidates not simulated: {pending} "
                  f"jobs pending, more than --conservative-up-to {conservative_up_to} (on a "
                  "long queue each of their simulations takes seconds); name one with "
                  "--candidate, e.g. conservative:FCFS, to simulate it")


def candidates_for(snapshot: Snapshot, specs: list[str] | None = None,
                   site: object | None = None) -> list[Candidate]:
    """The configuration in effect (with its site-factor rule ``site``, when known), then
    each spec's Slurm form (default: the grid). Candidates identical to the one in effect
    are left out."""
    out = [current_candidate(snapshot.config, site)]
    for spec in specs or grid_specs():
        c = slurm_candidate(parse_policy(spec), snapshot.config, snapshot.machine)
        if all(c.enacts != o.enacts for o in out):
            out.append(c)
    return out

