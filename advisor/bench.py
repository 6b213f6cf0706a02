"""Performance figures (``advisor bench``). Measured, never asserted by tests.

Each trace is measured in a fresh process so that its peak memory is its own:
* parse: reading and cleaning the SWF file (Lelong et al.'s filter);
* first call: the first simulation of the process, which loads the compiled engine from the
  on-disk cache (or compiles it, the first time ever);
* sim: the median over ``repeat`` runs of one simulation, parse and JIT excluded;
* compile: cold JIT compilations (the textbook core; every kernel), each in a process
  given an empty numba cache directory.
Whole-command figures time ``advisor replay`` and ``advisor tune`` as processes (with their
peak memory), and a CTC-SP2 replay against ``advisor.plain_easy``, a plain-Python EASY that
gives the same schedule (checked before it is timed). The slurm-mode orderings are kept
fixed over a window as the advice benchmark keeps them (``fixed_starts``), and an online
replay's decisions are timed between its progress calls. ``TARGETS``: issue 23's, and
issue 41's for a cluster's GPUs, memory and limits (``features_figures``).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from rich.console import Group

from advisor.plugins.spec import BASELINE
from advisor.views.fit import Col, FitTable

TRACES = ("KTH-SP2", "CTC-SP2", "SDSC-BLUE")
POLICIES = (BASELINE, "easy:SPF:SPF")
#: the slurm-mode orderings timed kept fixed: a window of SDSC-BLUE (weeks, first week)
ORDERINGS, ORDERING_WINDOW = ("easy:SPF:SPF", "easy:SQF:SQF", "easy:LQF:LQF"), (12, 10)
#: the online replay timed: a bundled trace of a large machine, its first week, daily
ONLINE = ("LLNL-Atlas", 10, 7)
#: fair share timed: windows (trace, first week, weeks) of bundled traces whose groups
#: become accounts, a small machine with many accounts and a large one
FAIR_SHARE = (("KTH-SP2", 14, 12), ("SDSC-BLUE", 10, 12))
#: (figure, target, unit): each figure is below its target when met
TARGETS = (("CTC-SP2 EASY-FCFS-FCFS", 0.020, "s"), ("SDSC-BLUE EASY-FCFS-FCFS", 0.040, "s"),
           ("slurm mode ÷ textbook on CTC-SP2", 2.0, "x"),
           ("SQF/LQF ÷ SPF in the slurm mode", 1.5, "x"),
           ("replay KTH-SP2 process", 0.5, "s"), ("replay process peak RSS", 150, "MiB"),
           ("replay CTC-SP2 ÷ plain-Python EASY", 1 / 3, "x"),
           ("tune KTH-SP2 process", 3.0, "s"), ("online decision", 0.5, "s"),
           ("cold compile, every kernel", 60.0, "s"),
           ("slurm mode, GPUs + memory + limits ÷ none, same schedule", 2.0, "x"),
           ("slurm mode, fair share ÷ none, same window", 2.0, "x"))


def trace_figures(name: str, repeat: int) -> dict:
    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.cleaning import CleaningOptions
    from advisor.engine import job_arrays, run
    from advisor.plugins.spec import parse_policy

    t0 = time.perf_counter()
    workload = read_swf(resolve_trace(name),
                        cleaning=CleaningOptions(drop_overruns=True, drop_oversize=True))
    arrays = job_arrays(workload)
    parse = time.perf_counter() - t0
    configs = {spec: parse_policy(spec).engine_config() for spec in POLICIES}
    t0 = time.perf_counter()
    run(arrays, configs[POLICIES[0]])
    first = time.perf_counter() - t0
    sims = {spec: _median_times(repeat, lambda c=config: run(arrays, c))[0]
            for spec, config in configs.items() if spec != POLICIES[0]}
    # the slurm mode on the trace's machine (1-CPU nodes), EASY-like Slurm defaults, timed
    # in turn with the textbook EASY so that both see the same machine load
    from advisor.engine.slurm import run_slurm, with_backfill, workload_input
    from advisor.model import SchedulingConfig
    inp = workload_input(workload, with_backfill(SchedulingConfig(),
                                                 bf_job_part_count_reserve=1))
    run_slurm(inp)
    sims[POLICIES[0]], slurm_s = _median_times(repeat, lambda: run(arrays, configs[POLICIES[0]]),
                                               lambda: run_slurm(inp))
    return {"trace": name, "jobs": len(arrays), "parse_s": parse, "first_call_s": first,
            "sim_s": sims, "jobs_per_s": {k: len(arrays) / v for k, v in sims.items()},
            "slurm_easy_s": slurm_s}


#: every process the bench starts runs through this: ``-m MODULE ARGS`` as ``python -m``
#: would, or ``-c CODE``; at exit it writes its peak memory since the exec (VmHWM; not
#: ru_maxrss, in which Linux counts the parent's memory at the fork) to standard error.
#: Standard library only, so it adds next to nothing to what it measures.
_REPORTING = """
import atexit, re, runpy, sys
def report():
    with open("/proc/self/status") as status:
        kib = re.search(r"VmHWM:\\s+(\\d+)", status.read()).group(1)
    sys.stderr.write(f"\\npeak_rss_mib={int(kib) / 1024}\\n")
atexit.register(report)
flag, target, sys.argv = sys.argv[1], sys.argv[2], sys.argv[2:]
if flag == "-m":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    exec(compile(target, "<bench>", "exec"), {"__name__": "__main__"})
"""


def _median_times(repeat: int, *calls) -> list[float]:
    """The median wall time of ``repeat`` calls of each, the calls taken in turn, in
    seconds."""
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for call, out in zip(calls, times):
            t0 = time.perf_counter()
            call()
            out.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def _run(argv: list[str], env: dict | None = None) -> tuple[str, float, float]:
    """A Python process (``-m MODULE ...`` or ``-c CODE``, through ``_REPORTING``): its
    standard output, wall time (s) and peak RSS (MiB)."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _REPORTING, *argv], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, check=True)
    seconds = time.perf_counter() - t0
    return done.stdout, seconds, float(done.stderr.rsplit("peak_rss_mib=", 1)[1])


def _python(code: str, env: dict | None = None) -> str:
    return _run(["-c", code], env)[0]


def _process(argv: list[str], repeat: int) -> dict:
    """A command run ``repeat`` times as a process: the median wall time (s), the largest
    peak RSS (MiB), and its standard output."""
    runs = [_run(argv) for _ in range(repeat)]
    return {"command": " ".join(argv), "seconds": statistics.median(r[1] for r in runs),
            "peak_rss_mib": max(r[2] for r in runs), "stdout": runs[-1][0]}


def _advisor(argv: list[str], repeat: int) -> dict:
    out = _process(["-m", "advisor.cli", *argv], repeat)
    return {**out, "command": "advisor " + " ".join(argv), "stdout": None}


#: what any process of the engine imports before its own code: the floor under the replay
#: figures (docs/performance.md)
IMPORT_FLOOR = "import numba, pandas"


def replay_against_plain(trace: str, repeat: int) -> dict:
    """A whole ``advisor replay`` process against the plain-Python EASY's, on the same
    trace, once their schedules are checked equal."""
    from advisor.adapters.swf import resolve_trace
    path = str(resolve_trace(trace))
    ours = _python("from advisor.adapters.swf import read_swf; "
                   "from advisor.engine import job_arrays, run, EngineConfig; "
                   f"s, _ = run(job_arrays(read_swf({path!r})), EngineConfig()); "
                   "print(' '.join(map(str, s)))").split()
    theirs = _process(["-m", "advisor.plain_easy", path, "--starts"], 1)["stdout"].split()
    if ours != theirs:
        raise RuntimeError("advisor.plain_easy's schedule differs from the engine's")
    plain = _process(["-m", "advisor.plain_easy", path], repeat)
    replay = _advisor(["replay", trace, "--policy", BASELINE, "--json"], repeat)
    return {"trace": trace, "replay": replay, "plain": {**plain, "stdout": None},
            "ratio": replay["seconds"] / plain["seconds"]}


def _window(trace: str, first_week: int, seconds: int, accounts: bool = False):
    """The benchmark window of a bundled trace from its week ``first_week`` on, and the
    history before it (``bench_window``); with ``accounts``, its groups as accounts
    (``trace_accounts``: fair share in effect)."""
    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.model import SECONDS_PER_WEEK
    from advisor.whatif.hindsight import bench_window
    from advisor.whatif.trace_accounts import with_accounts
    whole = read_swf(resolve_trace(trace))
    if accounts:
        whole = with_accounts(whole)
    t0 = int(whole.jobs["submit"].min()) + first_week * SECONDS_PER_WEEK
    return bench_window(whole, t0, t0 + seconds)


def orderings_figures() -> dict:
    """Each of ORDERINGS kept fixed over SDSC-BLUE's window in the slurm mode (daily
    cuts, as the advice benchmark), timed once the engine is loaded."""
    from advisor.engine import Estimates
    from advisor.model import SECONDS_PER_WEEK
    from advisor.plugins.spec import parse_policy
    from advisor.settings import DEFAULTS
    from advisor.whatif.hindsight import FixedTask, fixed_starts
    from advisor.whatif.online import trace_history

    weeks, first = ORDERING_WINDOW
    window, prior = _window("SDSC-BLUE", first, weeks * SECONDS_PER_WEEK)
    history = trace_history(prior, DEFAULTS.history_weeks)
    tasks = {spec: FixedTask(window, Estimates(), 86400, parse_policy(spec), history)
             for spec in ORDERINGS}
    fixed_starts(tasks[ORDERINGS[0]])
    seconds = {}
    for spec, task in tasks.items():
        t = time.perf_counter()
        fixed_starts(task)
        seconds[spec] = time.perf_counter() - t
    return {"trace": "SDSC-BLUE", "weeks": weeks, "first_week": first,
            "jobs": len(window), "seconds": seconds,
            "worst_vs_spf": max(seconds.values()) / seconds[ORDERINGS[0]]}


def fair_share_figures(repeat: int = 3) -> dict:
    """Each FAIR_SHARE window kept fixed in the slurm mode under the site's own priority
    (daily cuts, as the advice benchmark), with the trace's groups as accounts (fair share
    in effect, and priority/multifactor's age) and without (Slurm's defaults): the median
    of ``repeat`` runs each, the two taken in turn. Their schedules differ, as fair share
    reorders the queue; the ratio is what judging a candidate with fair share costs."""
    from advisor.engine import Estimates
    from advisor.model import SECONDS_PER_WEEK
    from advisor.plugins.spec import parse_policy
    from advisor.settings import DEFAULTS
    from advisor.whatif.hindsight import FixedTask, fixed_starts
    from advisor.whatif.online import trace_history
    from advisor.whatif.trace_accounts import baseline_spec

    windows = []
    for trace, first, weeks in FAIR_SHARE:
        tasks = []
        for accounts in (False, True):
            window, prior = _window(trace, first, weeks * SECONDS_PER_WEEK, accounts)
            tasks.append(FixedTask(window, Estimates(), 86400,
                                   parse_policy(baseline_spec(window)),
                                   trace_history(prior, DEFAULTS.history_weeks)))
        for task in tasks:
            fixed_starts(task)
        plain_s, fair_s = _median_times(repeat, *(lambda t=t: fixed_starts(t)
                                                  for t in tasks))
        windows.append({"trace": trace, "first_week": first, "weeks": weeks,
                        "jobs": len(tasks[0].workload),
                        "associations": len(tasks[1].workload.accounts.associations),
                        "without_s": plain_s, "with_s": fair_s, "ratio": fair_s / plain_s})
    return {"windows": windows, "worst": max(w["ratio"] for w in windows)}


def features_figures(trace: str = "CTC-SP2", count: int = 20000,
                     node_cpus: int = 16) -> dict:
    """The slurm mode on ``count`` jobs of a trace with a production cluster's features and
    without, all from an empty machine of the same nodes: ``node_cpus`` CPUs and 64 GB each
    (memory consumable, 2 GB per CPU by default), a quarter of them with 4 GPUs.

    * binding: every 10th job of at most a node's CPUs asks for a GPU, every 7th other
      for 48 GB per node, and each user may run 8 jobs at once: a busier schedule (longer
      queues), whose cost is the schedule's as much as the features';
    * same schedule: every job asks for 1 MB and a GPU of nodes with a million, under a
      limit of a million jobs: the features are played and never bind, so the schedule is
      the plain one's and the ratio is their cost alone."""
    from dataclasses import replace

    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.engine.slurm import run_slurm, slurm_input
    from advisor.model import (Accounting, Cluster, Job, Node, Partition, Qos,
                               SchedulingConfig, Snapshot)

    workload = read_swf(resolve_trace(trace))
    nodes = -(-workload.machine.procs // node_cpus)
    names = tuple(f"n{i}" for i in range(nodes))
    plain_nodes = tuple(Node(n, node_cpus, memory=65536) for n in names)
    gpu_nodes = tuple(replace(n, gres={"gpu": 4}) if i % 4 == 0 else n
                      for i, n in enumerate(plain_nodes))
    many_gpus = tuple(replace(n, gres={"gpu": 10**6}) for n in plain_nodes)
    part = (Partition("batch", names, default=True),)
    plain, binding, loose, runtimes = [], [], [], {}
    for k, row in enumerate(workload.jobs.head(count).itertuples()):
        job = Job(job_id=int(row.job_id), user=str(row.user), partition="batch",
                  cpus=int(min(row.procs, nodes * node_cpus)), state="PENDING",
                  submit_time=int(row.submit), time_limit=int(max(row.estimate, 1)),
                  partitions=("batch",), qos="normal")
        gpu = k % 10 == 9 and job.cpus <= node_cpus
        plain.append(job)
        binding.append(replace(job, memory_per_node=49152 if k % 7 == 6 and not gpu else 0,
                               gres_per_node={"gpu": 1} if gpu else {}))
        loose.append(replace(job, memory_per_node=1, gres_per_node={"gpu": 1}))
        runtimes[job.job_id] = int(max(row.runtime, 1))
    config = replace(SchedulingConfig(), select_type_parameters="CR_Core_Memory",
                     def_mem_per_cpu=2048, accounting_enforce=("limits",))
    t0 = int(workload.jobs["submit"].min()) - 1

    def made(machine, jobs, cfg, limit):
        accounting = Accounting(qos=(Qos("normal", max_jobs_per_user=limit),)) if limit \
            else Accounting()
        return slurm_input(Snapshot(t0, Cluster(trace, machine, part), (), (), cfg,
                                    accounting=accounting), runtimes, jobs, timing=None)

    runs = (made(plain_nodes, plain, SchedulingConfig(), 0),
            made(gpu_nodes, binding, config, 8), made(many_gpus, loose, config, 10**6))
    for inp in runs:
        run_slurm(inp)
    plain_s, binding_s, loose_s = _median_times(3, *(lambda i=i: run_slurm(i) for i in runs))
    return {"trace": trace, "jobs": len(plain), "nodes": nodes, "without_s": plain_s,
            "binding_s": binding_s, "same_schedule_s": loose_s,
            "binding_ratio": binding_s / plain_s, "ratio": loose_s / plain_s}


def online_figures() -> dict:
    """An online replay (daily decisions, the default settings and executor) over ONLINE's
    window: each decision's wall time, from one progress call to the next."""
    from advisor.whatif.online import online_replay
    from advisor.settings import Settings
    from advisor.whatif.runner import make_executor

    trace, first, days = ONLINE
    window, prior = _window(trace, first, days * 86400)
    stamps = []
    executor = make_executor(None)
    try:
        online_replay(window, 86400, Settings(), executor, prior=prior,
                      on_progress=lambda done, total: stamps.append(time.perf_counter()))
    finally:
        executor.close()
    each = [b - a for a, b in zip(stamps, stamps[1:])]  # (the first includes the setup)
    return {"trace": trace, "cpus": window.machine.procs, "first_week": first, "days": days,
            "decisions": len(stamps), "seconds": each, "median_s": statistics.median(each),
            "max_s": max(each)}


def cold_compile() -> dict:
    """Cold JIT compilations, each in a process given an empty numba cache directory: the
    textbook core alone, and every kernel as a cold first run compiles them
    (``warmup.compile_all``: the slurm mode's in a second process when there are two
    cores)."""
    textbook = ("import time\n"
                "from advisor.engine import make_arrays, run, EngineConfig\n"
                "a = make_arrays([0, 1], [5, 5], [5, 5], [1, 1], 1)\n"
                "t = time.perf_counter(); run(a, EngineConfig()); "
                "print(time.perf_counter() - t)\n")
    every = ("import time\n"
             "from advisor.plugins.warmup import compile_all\n"
             "t = time.perf_counter(); compile_all(); print(time.perf_counter() - t)\n")
    out = {}
    for key, code in (("textbook_s", textbook), ("all_s", every)):
        with tempfile.TemporaryDirectory() as cache:
            out[key] = float(_python(code, {"NUMBA_CACHE_DIR": cache}).strip())
    return out


def _in_process(function: str) -> dict:
    """A figure function of this module, run in a fresh process, with that process's peak
    memory (``peak_rss_mib``)."""
    out, _, peak = _run(["-c", f"import json; from advisor import bench; "
                               f"print(json.dumps(bench.{function}))"])
    return {**json.loads(out), "peak_rss_mib": peak}


def bench(repeat: int = 5, tune: bool = True, online: bool = True,
          compile: bool = True) -> dict:
    figures = {"cpus": os.cpu_count(), "compile": cold_compile() if compile else None,
               "traces": []}
    for name in TRACES:
        figures["traces"].append(_in_process(f"trace_figures({name!r}, {repeat})"))
    figures["replay_process"] = _advisor(["replay", "KTH-SP2", "--policy", BASELINE,
                                          "--json"], repeat)
    figures["against_plain"] = replay_against_plain("CTC-SP2", min(repeat, 3))
    figures["import_floor"] = {**_process(["-c", IMPORT_FLOOR], repeat), "stdout": None}
    figures["slurm_orderings"] = _in_process("orderings_figures()")
    figures["features"] = _in_process("features_figures()")
    figures["fair_share"] = _in_process(f"fair_share_figures({min(repeat, 3)})")
    if tune:
        figures["tune_process"] = _advisor(["tune", "KTH-SP2", "--weeks", "250", "--json"],
                                           min(repeat, 3))
    if online:
        figures["online"] = _in_process("online_figures()")
    figures["targets"] = targets(figures)
    return figures


def targets(f: dict) -> list[dict]:
    """Each of TARGETS with the figure measured (None: not measured in this run)."""
    by_trace = {t["trace"]: t for t in f["traces"]}
    ctc = by_trace["CTC-SP2"]
    measured = {
        "CTC-SP2 EASY-FCFS-FCFS": ctc["sim_s"][BASELINE],
        "SDSC-BLUE EASY-FCFS-FCFS": by_trace["SDSC-BLUE"]["sim_s"][BASELINE],
        "slurm mode ÷ textbook on CTC-SP2": ctc["slurm_easy_s"] / ctc["sim_s"][BASELINE],
        "SQF/LQF ÷ SPF in the slurm mode": f["slurm_orderings"]["worst_vs_spf"],
        "replay KTH-SP2 process": f["replay_process"]["seconds"],
        "replay process peak RSS": f["replay_process"]["peak_rss_mib"],
        "replay CTC-SP2 ÷ plain-Python EASY": f["against_plain"]["ratio"],
        "tune KTH-SP2 process": f.get("tune_process", {}).get("seconds"),
        "online decision": f.get("online", {}).get("median_s"),
        "cold compile, every kernel": (f["compile"] or {}).get("all_s"),
        "slurm mode, GPUs + memory + limits ÷ none, same schedule":
            f.get("features", {}).get("ratio"),
        "slurm mode, fair share ÷ none, same window": f.get("fair_share", {}).get("worst")}
    return [{"figure": name, "target": target, "unit": unit, "measured": measured[name],
             "met": None if measured[name] is None else measured[name] < target}
            for name, target, unit in TARGETS]


def bench_table(f: dict) -> Group:
    table = FitTable(f"Engine, Lelong et al.'s filter, {f['cpus']} CPUs (medians)",
                     [Col("trace", figure=False), *map(Col, (
                         "jobs", "parse", "FCFS", "SPF", "slurm", "÷ FCFS", "RSS"))])
    for t in f["traces"]:
        table.add_row(t["trace"], f"{t['jobs']:,}", f"{t['parse_s']:.2f} s",
                      *(f"{t['sim_s'][p] * 1000:.1f} ms" for p in POLICIES),
                      f"{t['slurm_easy_s'] * 1000:.0f} ms",
                      f"{t['slurm_easy_s'] / t['sim_s'][POLICIES[0]]:.1f}x",
                      f"{t['peak_rss_mib']:.0f} MiB")
    goals = FitTable("Targets", [Col("figure", figure=False), *map(Col, (
        "measured", "target", "met"))])
    for g in f["targets"]:
        show = _show(g["unit"])
        goals.add_row(g["figure"], "-" if g["measured"] is None else show(g["measured"]),
                      f"< {show(g['target'])}",
                      {True: "yes", False: "no", None: "-"}[g["met"]])
    lines = [f"cold compile: the textbook core {f['compile']['textbook_s']:.1f} s, every "
             f"kernel {f['compile']['all_s']:.0f} s"] if f["compile"] else []
    lines += [f"{f[k]['command']}: {f[k]['seconds']:.2f} s, {f[k]['peak_rss_mib']:.0f} MiB"
              for k in ("replay_process", "tune_process") if k in f]
    if "features" in f:
        x = f["features"]
        lines.append(f"slurm mode, {x['jobs']:,} jobs of {x['trace']} on {x['nodes']} nodes: "
                     f"{x['without_s']:.2f} s; with GPUs, memory and limits "
                     f"{x['same_schedule_s']:.2f} s on the same schedule, "
                     f"{x['binding_s']:.2f} s where they bind "
                     f"({x['binding_ratio']:.2f}x, its queues longer)")
    for w in f.get("fair_share", {}).get("windows", ()):
        lines.append(f"fair share, {w['trace']} weeks {w['first_week']}-"
                     f"{w['first_week'] + w['weeks']} ({w['jobs']:,} jobs, "
                     f"{w['associations']} associations) kept fixed under the site's "
                     f"priority: {w['with_s']:.2f} s, without {w['without_s']:.2f} s "
                     f"({w['ratio']:.2f}x)")
    plain = f["against_plain"]
    lines.append(f"advisor.plain_easy {plain['trace']}: {plain['plain']['seconds']:.2f} s, "
                 f"{plain['plain']['peak_rss_mib']:.0f} MiB (same schedule)")
    if "import_floor" in f:
        lines.append(f"{IMPORT_FLOOR} alone: {f['import_floor']['seconds']:.2f} s, "
                     f"{f['import_floor']['peak_rss_mib']:.0f} MiB")
    return Group(table, goals, *lines)


def _show(unit: str):
    if unit == "s":
        return lambda v: f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"
    if unit == "x":
        return lambda v: f"{v:.2f}x"
    return lambda v: f"{v:.0f} {unit}"
