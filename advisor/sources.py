"""Any source of advice, opened by name without the command line: what ``--from`` takes.

    from advisor.sources import open_source
    from advisor.whatif.advise import advise
    advice = advise(open_source("swf:KTH-SP2@150d"))

``slurm`` (``slurm:cli``, ``slurm:pyslurm``) reads the live cluster now; ``swf:TRACE@TIME``
replays a trace to that moment (under ``policy``, by default the trace's own baseline);
``snapshot:FILE`` reads a snapshot ``advisor snapshot --out`` wrote (no history comes with
it: futures have no arrivals). Each is an ``advisor.whatif.advise.Source``.
"""
from __future__ import annotations

from advisor.adapters.slurm_cli import SlurmCommands
from advisor.adapters.sources import SourceOptions, TraceAt, read_source
from advisor.cleaning import CleaningOptions
from advisor.errors import BadInput
from advisor.model import Snapshot
from advisor.plugins.spec import Policy, parse_policy
from advisor.units import parse_moment
from advisor.whatif.advise import Source, StaticSource, TraceMoment
from advisor.whatif.trace_accounts import baseline_spec, with_accounts


def open_source(spec: str, policy: Policy | str | None = None, fair_share: bool = False,
                shares: dict[str, int] | None = None, commands: SlurmCommands | None = None,
                cleaning: CleaningOptions | None = None, procs: int | None = None) -> Source:
    """The source ``spec`` names. A trace's: ``fair_share`` makes its groups accounts (with
    ``shares``, each group's; 1 for a group not named), and ``cleaning`` and ``procs`` read
    it as ``advisor replay`` does. A live cluster's: ``commands`` runs Slurm's commands
    (default: from PATH, 30 s each)."""
    if isinstance(policy, str):
        policy = parse_policy(policy)
    if fair_share and not spec.startswith("swf:"):
        raise BadInput("--fair-share makes a trace's groups accounts; a live cluster has "
                       "its own (sshare): use it with --from swf:TRACE@TIME")
    opened = read_source(spec, SourceOptions(commands=commands or SlurmCommands(),
                                             cleaning=cleaning, procs=procs))
    if isinstance(opened, Snapshot):
        return StaticSource(spec, opened)
    if isinstance(opened, TraceAt):
        workload = with_accounts(opened.workload, shares) if fair_share else opened.workload
        return TraceMoment(opened.name, workload,
                           policy or parse_policy(baseline_spec(workload)),
                           parse_moment(opened.moment, workload.header))
    return opened
