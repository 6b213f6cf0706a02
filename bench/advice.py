"""The advice against the best static policy (issue 22's benchmark): on windows of real
traces, the online advisor (daily decisions by default, objective avg_wait, 4 samples, risk
limits against EASY-FCFS-FCFS) against EASY-FCFS-FCFS and against every candidate of the
default grid kept fixed over the same decision points (``advisor.whatif.hindsight``). One
row per trace: the baseline, the best static candidate in hindsight, the best within the
risk limit, the advice; AvgWait, MaxWait, and the ratios the issue judges; and the advice
against the site's pick: the best within risk over the weeks before the window
(``past_pick``), what a site tuning by hand on its log would fix.

    .venv/bin/python bench/advice.py [--traces SPEC,...] [--weeks 12] [--every 1d]
                                     [--samples 4] [--workers 2] [--out DIR] [--cache DIR]
                                     [--seeds 0,1,2] [--horizon 1d] [--min-gain G] ...

SPEC is TRACE@WEEK[xLOAD]: a bundled trace's name or an SWF file, the window's first week
(counted from the trace's first submission) and the factor its arrivals are made denser by.
--out writes each trace's JSON document and weekly PNG there; --cache keeps the runs kept
fixed (they do not depend on the advisor's settings), so that a change to the decision is
measured in the time of its online replays alone.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from advisor.adapters.swf import read_swf, resolve_trace  # noqa: E402
from advisor.model import SECONDS_PER_WEEK, trace_machine  # noqa: E402
from advisor.plugins.spec import parse_policy  # noqa: E402
from advisor.units import parse_duration  # noqa: E402
from advisor.views.hindsight import advice_bench_png  # noqa: E402
from advisor.whatif.hindsight import (advice_bench, bench_window, fixed_runs,  # noqa: E402
                                      past_pick, static_policies)
from advisor.whatif.candidates import history_limits  # noqa: E402
from advisor.settings import Settings  # noqa: E402
from advisor.whatif.runner import make_executor  # noqa: E402

TRACES = ("CTC-SP2@10", "SDSC-SP2@10", "KTH-SP2@20", "SDSC-BLUE@10")


@dataclass(frozen=True)
class Window:
    trace: str
    week: int
    load: float

    @classmethod
    def parse(cls, spec: str) -> "Window":
        trace, _, rest = spec.partition("@")
        week, _, load = rest.partition("x")
        return cls(trace, int(week or 0), float(load or 1.0))

    @property
    def name(self) -> str:
        return Path(self.trace).name.split("-19")[0].split("-20")[0].split(".swf")[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=",".join(TRACES))
    ap.add_argument("--weeks", type=int, default=12)
    ap.add_argument("--every", default="1d")
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, help="directory for each run's JSON and PNG")
    ap.add_argument("--cache", type=Path, help="directory keeping the runs kept fixed")
    ap.add_argument("--tag", default="", help="added to the names of the files written")
    ap.add_argument("--no-prior", action="store_true", help="the advisor's history starts "
                    "empty at the window's start (as before issue 22)")
    ap.add_argument("--seeds", default="0", help="the advisor's seeds, one run each "
                    "(comma-separated): one run per trace cannot tell a few per cent apart")
    for name, kind in (("horizon", str), ("horizon_max", str), ("min_gain", float),
                       ("min_wins", float), ("risk", float), ("history_weeks", int)):
        ap.add_argument("--" + name.replace("_", "-"), type=kind, help="Settings." + name)
    ap.add_argument("--no-history-floor", dest="history_floor", action="store_false",
                    default=None, help="the risk limits from the futures alone")
    ap.add_argument("--pick-weeks", type=int, default=4, help="the site's pick: the best "
                    "static candidate within risk over the weeks before the window (0: none)")
    ap.add_argument("--policies", help="the advice's only candidates (specs, comma-"
                    "separated; the runs kept fixed stay the whole grid)")
    args = ap.parse_args()
    knobs = {f.name: getattr(args, f.name) for f in dataclasses.fields(Settings)
             if getattr(args, f.name, None) is not None
             and f.name not in ("samples", "policies")}
    if args.policies:
        knobs["policies"] = tuple(parse_policy(p) for p in args.policies.split(","))
    for name in ("horizon", "horizon_max"):
        if name in knobs:
            knobs[name] = parse_duration(knobs[name])
    settings = Settings(objective="avg_wait", samples=args.samples, **knobs)
    every = parse_duration(args.every)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    out = Console(width=200)
    table = Table(title=f"The advice against the best static candidate: {args.weeks}-week "
                  f"windows, decisions every {args.every}, {args.samples} samples, avg_wait")
    for col in ("trace@week xload", "jobs", "baseline", "best static", "best within risk",
                "online", "vs best in risk", "vs site's pick", "MaxWait x base", "R",
                "changes", "wall"):
        table.add_column(col, justify="left" if col.startswith("trace") else "right")
    for spec in args.traces.split(","):
        w = Window.parse(spec)
        whole = read_swf(resolve_trace(w.trace))
        t0 = int(whole.jobs["submit"].min()) + w.week * SECONDS_PER_WEEK
        workload, prior = bench_window(whole, t0, t0 + args.weeks * SECONDS_PER_WEEK, w.load)
        limits = history_limits(prior)
        gaps, to_pick = [], []
        executor = make_executor(args.workers, "process")
        try:
            # the runs kept fixed do not depend on the advisor's seed: once per window
            began = time.perf_counter()
            fixed = cached_fixed(args.cache, spec, args.weeks, every, workload, limits,
                                 executor)
            print(f"{spec}: {len(fixed)} runs kept fixed, {time.perf_counter() - began:.0f} s",
                  file=sys.stderr)
            pick = ""
            if args.pick_weeks:
                # the candidate a site would fix by hand from its log of the weeks before
                past, _ = bench_window(whole, t0 - args.pick_weeks * SECONDS_PER_WEEK, t0,
                                       w.load)
                pick = past_pick(past, every, settings, limits, executor, cached_fixed(
                    args.cache, f"{spec}-before", args.pick_weeks, every, past, limits,
                    executor))
            for seed in [int(v) for v in args.seeds.split(",")]:
                seeded = dataclasses.replace(settings, seed=seed)
                began = time.perf_counter()
                bench = advice_bench(workload, every, seeded, executor, limits=limits,
                                     fixed=fixed, prior=None if args.no_prior else prior)
                wall = time.perf_counter() - began
                picked(bench, pick)
                gaps.append(bench.total["online_vs_best_safe"])
                to_pick.append(bench.total["online_vs_pick"])
                table.add_row(*row(w, seed, bench, wall))
                print(f"{spec} seed {seed}: {bench.total['jobs']} jobs, {wall:.0f} s",
                      file=sys.stderr)
                if args.out:
                    write(args.out / f"{w.name}-{w.week}-x{w.load:g}{args.tag}"
                          f"{'-seed%d' % seed if seed else ''}", w, args.weeks, wall, bench,
                          seeded)
        finally:
            executor.close()
        if len(gaps) > 1 and None not in gaps:
            table.add_row(f"{w.name}@{w.week} mean", "", "", "", "", "",
                          f"{sum(gaps) / len(gaps):+.1%}",
                          f"{sum(to_pick) / len(to_pick):+.1%}" if pick else "",
                          "", "", "", "")
    out.print(table)


def picked(bench, pick: str) -> None:
    """Adds the site's pick (``past_pick``) and the advice against it to ``bench.total``."""
    runs = bench.table.set_index("name")
    online = runs.iloc[-1]["avg_wait"]
    bench.total["pick"] = str(runs.loc[pick, "spec"]) if pick else None
    bench.total["online_vs_pick"] = (float(online / runs.loc[pick, "avg_wait"] - 1.0)
                                     if pick else None)


def row(w: Window, seed: int, bench, wall: float) -> list[str]:
    """One run's cells: the baseline, the two best static runs and the advice."""
    t, runs = bench.total, bench.table.set_index("spec")
    base, online = bench.table.iloc[0], bench.table.iloc[-1]
    best = runs.loc[bench.best]
    safe = runs.loc[bench.best_safe] if bench.best_safe else None
    return [f"{w.name}@{w.week} x{w.load:g} seed {seed}", str(t["jobs"]),
            f"{base.avg_wait:,.0f}", f"{best.avg_wait:,.0f} {bench.best}",
            f"{safe.avg_wait:,.0f} {bench.best_safe}" if safe is not None else "-",
            f"{online.avg_wait:,.0f}",
            f"{t['online_vs_best_safe']:+.1%}" if safe is not None else "-",
            f"{t['online_vs_pick']:+.1%} {t['pick']}" if t.get("pick") else "-",
            f"{t['max_wait_over_baseline']:.2f}", f"{online.r:+.2f}", str(t["changes"]),
            f"{wall:.0f} s"]


def write(stem: Path, w: Window, weeks: int, wall: float, bench, settings) -> None:
    """The run's JSON document and its weekly PNG."""
    doc = {"trace": w.trace, "week": w.week, "load": w.load, "weeks": weeks, "wall_s": wall,
           "settings": settings.as_dict(), **bench.as_dict()}
    stem.with_suffix(".json").write_text(json.dumps(doc, indent=1))
    stem.with_suffix(".png").write_bytes(advice_bench_png(bench, stem.name))


def cached_fixed(cache: Path | None, spec: str, weeks: int, every: int, workload, limits,
                 executor) -> dict:
    """The default grid kept fixed over the window; from ``cache`` those it holds (the
    others are run and added)."""
    path = cache / f"{spec.replace('/', '_')}-{weeks}w-{every}s.npz" if cache else None
    kept = {}
    if path is not None and path.exists():
        data = np.load(path, allow_pickle=False)
        kept = {str(label): (str(spec_), data[f"start{k}"])
                for k, (label, spec_) in enumerate(zip(data["labels"], data["specs"]))}
    policies = static_policies(trace_machine(workload), limits)
    missing = [p for p in policies if p.label not in kept]
    if not missing:
        return {p.label: kept[p.label] for p in policies}
    fresh = fixed_runs(workload, every, missing, executor, limits=limits)
    fixed = {p.label: kept.get(p.label) or fresh[p.label] for p in policies}
    if path is not None:
        cache.mkdir(parents=True, exist_ok=True)
        labels = list(fixed)
        np.savez(path, labels=np.array(labels), specs=np.array([fixed[k][0] for k in labels]),
                 **{f"start{k}": fixed[label][1] for k, label in enumerate(labels)})
    return fixed


if __name__ == "__main__":
    main()
