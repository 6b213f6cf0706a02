"""The command line's grammar: every command's options, help with an example, the version,
and the defaults that configuration files give (adapters/config.py). No work is done here.
"""
from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

from advisor.plugins.contract import LONG_QUEUE

#: one example per command, shown at the end of its --help
EXAMPLES = {
    "replay": "advisor replay CTC-SP2 --policy easy:FCFS:FCFS --policy easy:SPF:SPF:T=20h",
    "plans": "advisor plans SDSC-BLUE --since 2000-07-01 --until 2000-08-01 --bins 'PLAN 2'",
    "tune": "advisor tune KTH-SP2 --weeks 50 --threshold 20h --plot tune.png",
    "queues": "advisor queues KTH-SP2 --trigger 100 --weeks-ahead 2 --plot queues.png",
    "classes": "advisor classes SDSC-BLUE --busy 0.9 --idle 0.5",
    "coscheduling": "advisor coscheduling --json",
    "timeshare": "advisor timeshare SDSC-BLUE --since 2001-03-01 --until 2001-04-01 --mpl 2",
    "snapshot": "advisor snapshot --from swf:KTH-SP2@1996-12-09T13:00",
    "recommend": "advisor recommend --from swf:KTH-SP2@150d --write change/",
    "report": "advisor report --last 10 --plot report.png",
    "history": "advisor history --since 30d --out site.swf.gz",
    "policies": "advisor policies --json",
    "bench": "advisor bench --skip-tune",
}


def package_version() -> str:
    try:
        return version("slurm-policy-advisor")
    except PackageNotFoundError:         # a source tree that was never installed
        return "unknown"


def _window_options(p: argparse.ArgumentParser, verb: str, since_note: str = "") -> None:
    p.add_argument("--since", metavar="MOMENT", help=f"first submission to {verb}: a date "
                   f"(2000-05-01) or seconds since the trace's start (default: its start)"
                   f"{since_note}")
    p.add_argument("--until", metavar="MOMENT", help=f"{verb} the jobs submitted before this "
                   "(default: all)")


def _class_options(p: argparse.ArgumentParser) -> None:
    """The CPU-efficiency thresholds of the job classes (studies.share_classes)."""
    p.add_argument("--busy", type=float, default=0.9, help="efficiency at or above which a "
                   "job is CS-like: busy, dedicated (default 0.9)")
    p.add_argument("--idle", type=float, default=0.5, help="efficiency below which a job is "
                   "DC-like: idle over half of its CPU time (default 0.5)")


def _trace_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", nargs="?", help="an SWF trace (.swf or .swf.gz), or the name of a "
                   "bundled one (KTH-SP2, CTC-SP2, SDSC-SP2, SDSC-BLUE, LLNL-Atlas); default: "
                   "KTH-SP2")
    p.add_argument("--procs", type=int, help="machine size (default: the header's MaxProcs)")
    p.add_argument("--drop-overruns", action="store_true",
                   help="drop jobs that ran longer than they requested (the filter of "
                        "Lelong et al.'s tuning study)")
    p.add_argument("--drop-oversize", action="store_true",
                   help="drop jobs wider than the machine (the same study's filter)")
    p.add_argument("--keep-invalid", action="store_true",
                   help="keep jobs with no processors or a negative runtime (they fail)")
    p.add_argument("--estimates", default="user",
                   help="runtime estimates: user (the request), exact, or f=N (Mu'alem and "
                        "Feitelson's badness factor: uniform in [r, N*r])")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _slurm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--slurm-bin", metavar="DIR", help="directory of Slurm's commands "
                   "(default: PATH)")
    p.add_argument("--slurm-timeout", type=float, default=30.0, metavar="S",
                   help="seconds each Slurm command may take (default 30)")


def _source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source", default="slurm", metavar="SOURCE",
                   help="slurm (pyslurm when installed, else the commands), slurm:cli, "
                        "slurm:pyslurm, or swf:TRACE@TIME with TIME in seconds since the "
                        "trace's start (10d, 36h) or a date (1996-10-01T12:00)")
    p.add_argument("--policy", metavar="SPEC", help="swf sources: the policy the trace is "
                   "replayed under, in effect at the moment (default EASY-FCFS-FCFS)")
    _slurm_options(p)


def _recommend_options(p: argparse.ArgumentParser) -> None:
    """How candidates are simulated and judged: recommend, and replay --online."""
    p.add_argument("--candidate", action="append", metavar="SPEC", help="simulate this "
                   "policy (repeatable; default: the grid of 'advisor policies')")
    p.add_argument("--objective", default="avg_bsld",
                   help="avg_bsld (default), avg_wait, p95_wait or utilization")
    p.add_argument("--samples", type=int, default=8, help="sampled futures (default 8)")
    p.add_argument("--horizon", default="1d", help="simulated future (default 1d)")
    p.add_argument("--horizon-max", default="3d", help="the horizon grows to the queue's "
                   "drain time (its jobs' limits in CPU-seconds over the CPUs) up to this "
                   "(default 3d; 0: fixed)")
    p.add_argument("--risk", type=float, default=1.5, help="MaxWait and p95 wait may grow "
                   "to this factor of the configuration in effect's (or --reference's), and "
                   "no job's wait past its longest wait by more (default 1.5)")
    p.add_argument("--reference", metavar="SPEC", help="risk limits against this policy "
                   "(default: the configuration in effect; replay --online: its --policy "
                   "baseline), and no lower than --risk times its MaxWait and p95 wait on "
                   "the last --history-weeks of history, replayed")
    p.add_argument("--no-history-floor", action="store_true", help="risk limits against "
                   "the reference's futures alone, not floored by its replayed history")
    p.add_argument("--min-gain", type=float, default=0.05, help="relative gain needed "
                   "(default 0.05)")
    p.add_argument("--min-wins", type=float, default=0.75, help="share of samples the gain "
                   "must hold in (default 0.75)")
    p.add_argument("--trigger", type=float, metavar="T", help="simulate only when the "
                   "queue's bounded slowdown exceeds T (Lawson and Smirni's trigger)")
    p.add_argument("--history-weeks", type=int, default=4, help="weeks of finished jobs "
                   "that futures are drawn from (default 4)")
    p.add_argument("--conservative-up-to", type=int, default=LONG_QUEUE, metavar="N",
                   help="the default grid simulates conservative backfilling and plans "
                   f"only while at most N jobs are pending (default {LONG_QUEUE}: beyond, "
                   "seconds per simulation or plan)")
    p.add_argument("--executor", default="auto", choices=EXECUTORS,
                   help="where simulations run (auto: Ray if installed, else processes)")
    p.add_argument("--workers", type=int, help="local workers (default: all cores)")
    p.add_argument("--ray-address", metavar="ADDR", help="an existing Ray cluster "
                   "(default: an embedded local one)")
    p.add_argument("--ray-dashboard", action="store_true", help="the embedded Ray starts "
                   "its dashboard too (default: not)")


EXECUTORS = ("auto", "serial", "process", "ray")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="advisor", description=(
        "Which Slurm scheduling configuration serves your cluster best, proven by "
        "simulation. Defaults come from /etc/slurm-policy-advisor/advisor.toml, then "
        "$XDG_CONFIG_HOME/slurm-policy-advisor/advisor.toml, then the options given."),
        epilog="example: " + EXAMPLES["recommend"])
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s (slurm-policy-advisor) {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                              epilog="example: " + EXAMPLES[name])

    p = command("replay", "simulate a trace under one or many policies")
    _trace_options(p)
    p.add_argument("--policy", action="append", metavar="SPEC",
                   help="BACKFILL[:PRIMARY[:SECONDARY]][:key=value], e.g. easy:SPF:SPF, "
                        "easy:FCFS:FCFS:T=20h, conservative:FCFS, or family/name[:key=value] "
                        "parts joined by + (repeatable; see 'advisor policies')")
    p.add_argument("--jobs-out", metavar="FILE",
                   help="per-job results, CSV or .parquet (.parquet needs the [parquet] "
                        "extra; one file per policy: the policy's label is added to the "
                        "name when there are several)")
    p.add_argument("--swf-out", metavar="FILE", help="the simulated schedule as an SWF log")
    p.add_argument("--pass-per-event", action="store_true",
                   help="one scheduling pass after every event, instead of one after all "
                        "completions and arrivals of the same second")
    p.add_argument("--online", metavar="EVERY", help="Lawson and Smirni's online replay: "
                   "run the advisor every EVERY (1d, 1w) on what the simulated system knows "
                   "then, follow its recommendations, and compare with --policy kept "
                   "throughout (default EASY-FCFS-FCFS) in the engine's slurm mode")
    p.add_argument("--against-static", action="store_true", help="--online: also play every "
                   "candidate kept fixed over the same decision points, and rank the advice "
                   "against the best of them (docs/advice.md)")
    p.add_argument("--plot", metavar="PNG", help="--against-static: write the average wait "
                   "per week of the baseline, the best static runs and the advice")
    _window_options(p, "replay", "; with --online, the jobs finished before it are the "
                    "advisor's history at the start, as sacct's would be")
    p.add_argument("--load", type=float, default=1.0, metavar="F", help="divide the "
                   "inter-arrival times by F (1.2: arrivals 1.2 times as dense; default 1)")
    _recommend_options(p)

    p = command("tune", "Lelong et al.'s tuning study: choose policies on resampled "
                "weeks of one half of a trace, test them on the other")
    _trace_options(p)
    p.add_argument("--weeks", type=int, default=250, help="weeks resampled per half")
    p.add_argument("--threshold", action="append", default=[], metavar="T",
                   help="also evaluate the 49 policies with this queue threshold (e.g. 20h)")
    p.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    p.add_argument("--plot", metavar="PNG", help="write a plot of every policy's train and "
                   "test results, the best named")

    p = command("queues", "Lawson and Smirni's study: runtime-class queues, fixed and chosen "
                "online, against one queue, week by week")
    _trace_options(p)
    p.add_argument("--trigger", type=float, default=10.0, metavar="T",
                   help="queue bounded slowdown that triggers a test (default 10)")
    p.add_argument("--weeks-ahead", type=int, default=1, metavar="L",
                   help="weeks each test simulates (default 1)")
    p.add_argument("--parts", type=int, default=4, help="the fixed number of queues "
                   "compared (default 4)")
    p.add_argument("--setting", choices=("paper", "honest"), default="paper",
                   help="paper: the tests replay the trace's own future (hindsight); "
                        "honest: futures drawn from the finished jobs only")
    p.add_argument("--samples", type=int, default=4, help="honest: futures per test")
    p.add_argument("--plot", metavar="PNG", help="write R per week as a plot")

    p = command("plans", "Zheng et al.'s study: plans by simulated annealing (PLAN 1-3) "
                "against EASY-FCFS-FCFS, month by month")
    _trace_options(p)
    p.add_argument("--policy", action="append", metavar="SPEC", help="a plan or any policy "
                   "to compare (repeatable; default plan1, plan2, plan3)")
    _window_options(p, "replay")
    p.add_argument("--bins", metavar="NAME", help="also list Fig. 6's bins (wait by size "
                   "and runtime) of this run against FCFS, e.g. 'PLAN 2'")
    p.add_argument("--plot", metavar="PNG", help="write Fig. 6's heatmaps (of --bins, "
                   "default PLAN 2)")

    p = command("classes", "which jobs would share CPUs: the job classes of a trace by CPU "
                "efficiency (SWF field 6 over the runtime), a heuristic for seed 003's")
    _trace_options(p)
    _class_options(p)

    p = command("coscheduling", "seed 003's four synthetic scenarios on the process-level "
                "model (FCFS, gang, spin-block, flexible coscheduling) against its tables")
    p.add_argument("--seed", type=int, default=0, help="seed of the local schedulers' noise")
    p.add_argument("--json", action="store_true", help="print one JSON document")

    p = command("timeshare", "what a gang-scheduled partition for the DC-like users would "
                "do to waits and response times, against the whole machine space-shared")
    _trace_options(p)
    _window_options(p, "play", "; users are classed by the jobs before")
    p.add_argument("--share", type=float, default=0.25, help="fraction of the CPUs given "
                   "to the time-sliced partition (default 0.25)")
    p.add_argument("--mpl", type=int, default=2, help="jobs per node (OverSubscribe=FORCE:N,"
                   " default 2)")
    p.add_argument("--slice", type=float, default=30.0, help="SchedulerTimeSlice in seconds "
                   "(default 30, Slurm's)")
    p.add_argument("--switch", type=float, default=0.5, help="progress lost at each switch "
                   "of a shared node, in seconds (default 0.5)")
    p.add_argument("--route", default="DC", help="classes sent to the time-sliced partition:"
                   " DC, F+DC, ... (default DC)")
    _class_options(p)

    p = command("snapshot", "the state the advisor sees: a live Slurm cluster, or a trace "
                "replayed up to a moment")
    _source_options(p)
    p.add_argument("--top", type=int, default=10, help="pending jobs shown")
    p.add_argument("--out", metavar="FILE", help="also write the snapshot as JSON")
    p.add_argument("--json", action="store_true", help="print the snapshot as JSON")

    p = command("recommend", "simulate candidate configurations from a snapshot and "
                "recommend the change that wins (exit 10) or none (exit 0)")
    _source_options(p)
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    _recommend_options(p)
    p.add_argument("--store", metavar="DB", help="SQLite history (default: "
                   "$XDG_STATE_HOME/slurm-policy-advisor/advisor.sqlite)")
    p.add_argument("--no-store", action="store_true", help="do not record this run")
    p.add_argument("--lock", metavar="FILE", help="lock file that keeps two runs from "
                   "overlapping (default: the store's path with .lock)")
    p.add_argument("--write", metavar="DIR", help="when a change is recommended, make DIR "
                   "hold its advisor.conf, job_submit.lua (if needed) and commands.sh, and "
                   "nothing else (the set replaces DIR's as a whole)")
    p.add_argument("--apply", action="store_true", help="live sources: enact the change "
                   "(include fragment and job_submit.lua written atomically with a .bak, "
                   "scontrol reconfigure, checked with scontrol show config, rolled back on "
                   "failure)")
    p.add_argument("--include", metavar="FILE", help="--apply: the fragment that slurm.conf "
                   "includes last (default: advisor.conf beside slurm.conf)")
    p.add_argument("--json", action="store_true", help="print one JSON document")

    p = command("report", "the admin's view: the latest recommendation in full (cluster, "
                "candidates, decision, change) and the past ones")
    p.add_argument("--store", metavar="DB", help="SQLite history (default as recommend)")
    p.add_argument("--last", type=int, default=20, help="runs listed")
    p.add_argument("--plot", metavar="PNG", help="also write a PNG: the latest candidates "
                   "(objective against max wait) and the queue's slowdown over past runs")
    p.add_argument("--json", action="store_true")

    p = command("history", "finished jobs from slurmdbd (sacct) as an SWF trace")
    p.add_argument("--from", dest="source", default="slurm", choices=["slurm"],
                   help="where the history comes from")
    p.add_argument("--since", default="30d", help="how far back: 30d, 12h, or a date "
                   "(2026-11-01)")
    p.add_argument("--until", help="end of the window (a date; default: now)")
    p.add_argument("--out", required=True, metavar="FILE", help="the SWF file (.swf or "
                   ".swf.gz)")
    p.add_argument("--procs", type=int, help="the machine's CPUs for the SWF header "
                   "(default: the widest job; sacct does not know the machine)")
    _slurm_options(p)
    p.add_argument("--json", action="store_true", help="print a summary as JSON")

    p = command("policies", "list installed policy plugins and their parameters")
    p.add_argument("--json", action="store_true")

    p = command("bench", "print performance figures")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    p.add_argument("--skip-tune", action="store_true",
                   help="skip the tune figure (three runs, ~10 s)")
    p.add_argument("--skip-online", action="store_true",
                   help="skip the online replay's decisions (~15 s)")
    p.add_argument("--skip-compile", action="store_true",
                   help="skip the cold compilations (about a minute)")
    p.add_argument("--json", action="store_true")
    return parser


def apply_defaults(parser: argparse.ArgumentParser, defaults: dict) -> None:
    """Configuration-file defaults, for each command that has the option (options given on
    the command line still win)."""
    if defaults.get("executor", "auto") not in EXECUTORS:
        from advisor.errors import BadInput
        raise BadInput(f"executor = {defaults['executor']!r} in a configuration file: give "
                       f"one of {', '.join(EXECUTORS)}")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command in sub.choices.values():
        dests = {a.dest for a in command._actions}
        command.set_defaults(**{k: v for k, v in defaults.items() if k in dests})
