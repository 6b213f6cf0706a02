"""The command line's grammar: every command's options, help with an example, the version,
and the defaults that configuration files give (adapters/config.py). No work is done here.
"""
from __future__ import annotations

import argparse
from dataclasses import fields

from advisor import __version__
from advisor.cli_types import (Parser, count, date_moment, duration, estimates, moment,
                               number, one_of, since_moment)
from advisor.settings import Settings
from advisor.units import format_duration

def trace_options(p: argparse.ArgumentParser, since_note: str = "") -> None:
    """What every command that plays a trace takes, with the same meaning everywhere."""
    p.add_argument("trace", nargs="?", help="an SWF trace (.swf or .swf.gz), or the name of a "
                   "bundled one (KTH-SP2, CTC-SP2, SDSC-SP2, SDSC-BLUE, LLNL-Atlas, CEA-Curie); "
                   "default: "
                   "KTH-SP2")
    p.add_argument("--procs", type=count(1), help="machine size in CPUs (default: the "
                   "header's MaxProcs)")
    p.add_argument("--since", metavar="MOMENT", type=moment, help="play the jobs submitted "
                   "from this moment: a date in the trace's time zone (2000-05-01, "
                   "2000-05-01T08:00) or a time since its start (10d, 36h; default: its "
                   f"start){since_note}")
    p.add_argument("--until", metavar="MOMENT", type=moment, help="play the jobs submitted "
                   "before this moment (default: to the end)")
    p.add_argument("--load", type=number(0, above=True), default=1.0, metavar="F",
                   help="divide the inter-arrival times by F (1.2: arrivals 1.2 times as "
                   "dense, for a log without a queue; default 1)")
    p.add_argument("--estimates", default="user", type=estimates,
                   help="runtime estimates: user (the requested time; a job without one "
                        "gets its runtime, and the output says how many), exact, or f=N "
                        "(uniform between the runtime and N times it)")
    p.add_argument("--drop-overruns", action="store_true",
                   help="drop jobs that ran longer than they requested (the filter of "
                        "Lelong et al.'s tuning study)")
    p.add_argument("--drop-oversize", action="store_true",
                   help="drop jobs wider than the machine (the same study's filter)")
    p.add_argument("--keep-invalid", action="store_true",
                   help="keep jobs with no processors or a negative runtime (they fail)")
    p.add_argument("--seed", type=count(0), default=0, help="seed of every random draw")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _slurm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--slurm-bin", metavar="DIR", help="directory of Slurm's commands "
                   "(default: PATH)")
    p.add_argument("--slurm-timeout", type=number(0, above=True), default=30.0, metavar="S",
                   help="seconds each Slurm command may take (default 30)")


def _fair_share_options(p: argparse.ArgumentParser, where: str) -> None:
    """A trace's groups as accounts, so that fair share is played (whatif.trace_accounts)."""
    p.add_argument("--fair-share", action="store_true", help=f"{where}: play fair share "
                   "between the trace's groups, each an account of its users with equal "
                   "shares, on a site weighing fair share (PriorityWeightFairshare=10000) "
                   "over age (1000); the baseline is then that site's own priority")
    p.add_argument("--shares", metavar="FILE", help="with --fair-share: the accounts' "
                   "shares, one 'GROUP SHARES' line each (a group not named has 1)")


def _source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source", default="slurm", metavar="SOURCE",
                   help="slurm (pyslurm when installed, else the commands), slurm:cli, "
                        "slurm:pyslurm, swf:TRACE@TIME with TIME a time since the "
                        "trace's start (10d, 36h) or a date in its time zone "
                        "(1996-10-01T12:00), or snapshot:FILE, a snapshot advisor snapshot "
                        "--out wrote (no history: futures without arrivals)")
    p.add_argument("--policy", metavar="SPEC", help="swf sources: the policy the trace is "
                   "replayed under, in effect at the moment (default EASY-FCFS-FCFS; with "
                   "--fair-share, the site's own priority)")
    _fair_share_options(p, "swf sources")
    _slurm_options(p)


def _recommend_options(p: argparse.ArgumentParser) -> None:
    """How candidates are simulated and judged: recommend, and replay --online. One option
    per setting (``advisor.settings.option``), with its default, bounds and help."""
    for f in fields(Settings):
        meta = f.metadata
        flag = meta and (meta["flag"] or _flag(f.name))
        if not meta or flag in p._option_string_actions:
            continue       # a study's knob, or an option the command has already (--seed)
        shown = format_duration(f.default) if meta["kind"] == "duration" else \
            f"{f.default:g}" if isinstance(f.default, float) else f.default
        high = meta["high"]
        help = meta["help"].format(default=shown, choices=", ".join(meta["choices"]),
                                   high=format_duration(high) if meta["kind"] == "duration"
                                   and high else high)
        extra = {"metavar": meta["metavar"]} if meta["metavar"] else {}
        if meta["kind"] == "switch":
            p.add_argument(flag, dest=f.name, default=f.default, help=help,
                           action="store_false" if f.default else "store_true")
        elif meta["kind"] == "specs":
            p.add_argument(flag, dest=f.name, action="append", help=help, **extra)
        else:
            p.add_argument(flag, dest=f.name, default=f.default, help=help,
                           type=_TYPES[meta["kind"]](meta), **extra)
    p.add_argument("--executor", default="auto", type=one_of(*EXECUTORS),
                   help="where simulations run: auto (Ray with --ray-address, else local "
                   "processes, serial on one core), serial, process or ray (an embedded "
                   "one without --ray-address)")
    p.add_argument("--workers", type=count(1), help="local workers (default: all cores)")
    p.add_argument("--ray-address", metavar="ADDR", help="an existing Ray cluster "
                   "(default: an embedded local one)")
    p.add_argument("--ray-dashboard", action="store_true", help="the embedded Ray starts "
                   "its dashboard too (default: not)")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


#: each kind of setting's type: a checker of the value as written (``advisor.cli_types``)
_TYPES = {"count": lambda m: count(m["low"], m["high"]),
          "number": lambda m: number(m["low"], m["high"]),
          "duration": lambda m: duration(m["low"], m["high"]),
          "choice": lambda m: one_of(*m["choices"]),
          "spec": lambda m: str}

EXECUTORS = ("auto", "serial", "process", "ray")
#: what replay plays when no --policy is given
DEFAULT_REPLAY = ("easy:FCFS:FCFS", "easy:SPF:SPF", "easy:SPF:SPF:T=20h", "conservative:FCFS")


def build_parser(commands) -> argparse.ArgumentParser:
    """The parser of ``advisor`` with ``commands`` (``cli_plugins.commands()``: the
    built-in ones and the families', through one registry)."""
    parser = Parser(prog="advisor", description=(
        "Which Slurm scheduling configuration serves your cluster best, proven by "
        "simulation. Defaults come from /etc/slurm-policy-advisor/advisor.toml, then "
        "$XDG_CONFIG_HOME/slurm-policy-advisor/advisor.toml, then the options given."),
        epilog="example: " + next((c.example for c in commands if c.name == "recommend"),
                                  "advisor recommend"))
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s (slurm-policy-advisor) {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for c in commands:
        c.add_arguments(sub.add_parser(c.name, help=c.help, epilog="example: " + c.example,
                                       description=c.help[0].upper() + c.help[1:] + "."))
    return parser


def replay_arguments(p: argparse.ArgumentParser) -> None:
    trace_options(p, "; with --online, the jobs finished before it are the advisor's "
                   "history at the start, as sacct's would be")
    p.add_argument("--policy", action="append", metavar="SPEC",
                   help="a policy in its short form, e.g. easy:SPF:SPF, "
                        "easy:FCFS:FCFS:T=20h, conservative:FCFS, or family/name[:key=value] "
                        "parts joined by + (repeatable; see 'advisor policies'; the labels "
                        "the output prints, e.g. 'EASY-SPF-SPF T=20h', are accepted too; "
                        "default: " + ", ".join(DEFAULT_REPLAY) + ")")
    p.add_argument("--jobs-out", metavar="FILE",
                   help="per-job results, .csv or .parquet (.parquet needs the [parquet] "
                        "extra; one file per policy: the policy's label is added to the "
                        "name when there are several)")
    p.add_argument("--swf-out", metavar="FILE", help="the simulated schedule as an SWF log "
                   "(.swf or .swf.gz)")
    p.add_argument("--pass-per-event", action="store_true",
                   help="one scheduling pass after every event, instead of one after all "
                        "completions and arrivals of the same second")
    p.add_argument("--online", metavar="EVERY", type=duration(60),
                   help="run the advisor every EVERY (1d, 1w; at least 60 s) on what the "
                   "simulated system knows then, follow its recommendations, and compare "
                   "with --policy kept throughout (default EASY-FCFS-FCFS; with --fair-share, "
                   "the site's own priority), in the "
                   "engine's slurm mode (Lawson and Smirni's online replay)")
    p.add_argument("--against-static", action="store_true", help="--online: also play every "
                   "candidate kept fixed over the same decision points, the site's pick (the "
                   "best of them on the 4 weeks before --since, played as a warm-up) and the "
                   "rolling pick (the same re-picked weekly), and rank the advice against "
                   "them (docs/advice.md)")
    p.add_argument("--plot", metavar="PNG", help="--against-static: write the average wait "
                   "per week of the baseline, the best static runs, the picks and the advice")
    _fair_share_options(p, "--online")
    _recommend_options(p)


def snapshot_arguments(p: argparse.ArgumentParser) -> None:
    _source_options(p)
    p.add_argument("--top", type=count(0), default=10, help="pending jobs shown "
                   "(default 10)")
    p.add_argument("--out", metavar="FILE", help="also write the snapshot as JSON")
    p.add_argument("--json", action="store_true", help="print the snapshot as JSON")


def recommend_arguments(p: argparse.ArgumentParser) -> None:
    _source_options(p)
    p.add_argument("--seed", type=count(0), default=0, help="seed of every random draw")
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


def report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="DB", help="the SQLite history recommend keeps "
                   "(default as recommend); it must exist")
    p.add_argument("--last", type=count(0), default=20, help="past runs listed "
                   "(default 20)")
    p.add_argument("--plot", metavar="PNG", help="also write a PNG: the latest candidates "
                   "(objective against max wait) and the queue's slowdown over past runs")
    p.add_argument("--json", action="store_true", help="print the latest run and the past "
                   "ones as one JSON document")


def history_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source", default="slurm", type=one_of("slurm"),
                   help="where the history comes from (slurm)")
    p.add_argument("--since", default="30d", type=since_moment, help="how far back: 30d, "
                   "12h, or a local date (2026-11-01, 2026-11-01T08:00; default 30d)")
    p.add_argument("--until", type=date_moment, help="end of the window, a local date "
                   "(default: now)")
    p.add_argument("--out", required=True, metavar="FILE", help="the SWF file (.swf or "
                   ".swf.gz)")
    p.add_argument("--procs", type=count(1), help="the machine's CPUs for the SWF header "
                   "(default: the widest job; sacct does not know the machine)")
    _slurm_options(p)
    p.add_argument("--json", action="store_true", help="print a summary as JSON")


def policies_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print them as one JSON document")


def compile_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print where and how long as JSON")


def bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeat", type=count(1), default=5, help="timed runs per figure, "
                   "their median shown (default 5)")
    p.add_argument("--skip-tune", action="store_true",
                   help="skip the tune figure (three runs, ~10 s)")
    p.add_argument("--skip-online", action="store_true",
                   help="skip the online replay's decisions (~15 s)")
    p.add_argument("--skip-compile", action="store_true",
                   help="skip the cold compilations (about a minute)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON "
                   "document")
    p.add_argument("--family", metavar="FAMILY", help="run that policy family's own "
                   "benchmark instead, its options after -- (advisor bench --family FAMILY "
                   "-- --help lists them)")
    p.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def apply_config(parser: argparse.ArgumentParser, argv: list[str] | None,
                 args: argparse.Namespace, defaults, commands) -> None:
    """The configuration files' values (``adapters.config.Defaults``) for the options of
    ``args.command`` that the command line did not give, each checked as the option's own
    value is; a bad one names its file and key. A command that takes none of the files'
    options ignores them, and their problems."""
    from advisor.adapters.config import KEYS
    from advisor.errors import AdvisorError, BadInput
    command = _subparsers(parser)[args.command]
    actions = {a.dest: a for a in command._actions}
    if not any(k in actions for k in KEYS):
        return
    if defaults.problems:
        raise defaults.problems[0]
    given = set(vars(_given_only(commands).parse_args(argv)))
    for key, (value, path) in defaults.values.items():
        if key not in actions or key in given:
            continue
        action = actions[key]
        try:
            if isinstance(action, argparse._StoreTrueAction):    # a flag: true or false
                if not isinstance(value, bool):
                    raise argparse.ArgumentTypeError("give true or false")
            elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise argparse.ArgumentTypeError("give a string or a number")
            elif action.type is not None:
                value = action.type(str(value))
            elif not isinstance(value, str):
                raise argparse.ArgumentTypeError("give a string (in quotes)")
            if key == "reference":
                from advisor.plugins.spec import parse_policy
                parse_policy(value)
        except (argparse.ArgumentTypeError, AdvisorError) as e:
            raise BadInput(f"{path}: {key} = {value!r}: {e}") from None
        setattr(args, key, value)


def _subparsers(parser: argparse.ArgumentParser) -> dict:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def _given_only(commands) -> argparse.ArgumentParser:
    """A parser of the whole line whose options have no defaults: what it returns is what
    the line itself sets."""
    parser = build_parser(commands)
    for sub in _subparsers(parser).values():
        for action in sub._actions:
            action.default = argparse.SUPPRESS
            action.required = False
    return parser
