"""The advice against what a site would pick by hand, on windows kept apart from its tuning.

Each window is 4 weeks of warm-up under the baseline (EASY-FCFS-FCFS) then WEEKS weeks
judged, of one trace at a load factor. On every window, over the jobs submitted in the
judged weeks:
* the baseline, and every candidate of the default grid, kept fixed over all 4 + WEEKS
  weeks (re-enacted at each daily cut, as ``advisor.whatif.hindsight.fixed_starts``), the
  knobs among them as the grid proposed each on the latest warm-up day it proposed any
  (``pick_snapshots``; ``--no-knobs``: none, in the advice's grid either);
* the oracle: the best of those in hindsight within the risk limit (MaxWait and p95 wait
  at most ``risk`` times the baseline's over the judged weeks);
* the site's pick: the best within the risk limit over the 4 warm-up weeks (each candidate
  kept fixed there), put in effect at the first judged day and kept;
* the rolling pick: the same rule re-applied every week on the 4 weeks before, an automated
  hand-tuner (it reads each candidate's fixed run over those weeks: the jobs still running
  then count with their ends, as a site replaying its log a few days later would);
* the advice (``online_replay``, a decision every day from the first judged day, its
  history the trace's jobs finished by then), once per seed.
Every run shares the warm-up and the daily cuts; the differences are paired by window.
With ``--fair-share`` (the traces' groups as accounts, fair share in effect) each run's
fairness is reported too: its fair-share deviation and its account wait against the
baseline's (``advisor.whatif.hindsight.fairness_columns``), and each change the advice
made, judged in hindsight on the jobs submitted while it was in effect
(``change_fairness``); a set's windows on traces without group numbers are left out.

    .venv/bin/python bench/advice.py run --set tuning --archive DIR [--seeds 0,1]
        [--cache DIR] [--jobs 2] [--out DIR] [--tag NAME] [Settings knobs...]
    .venv/bin/python bench/advice.py summary --out DIR [--tags a,b+c] [--set tuning]
    .venv/bin/python bench/advice.py unfinished --set tuning --archive DIR

(b+c: the runs tagged b and c, other seeds of one decision, as one.)

The windows were fixed once, before any decision was measured on them, by one rule: for
each trace, the 12 weeks starting at 30% and at 65% of its span, at its own load where
the baseline keeps a queue there, raised where it does not (Sandia-Ross x1.3, LLNL-Atlas
x1.2). The tuning set holds the five traces the decision had been shaped on before; the
validation set five it never saw. The holdout set came later, for a check no choice had
seen: the Archive's other traces with a queue worth deciding on. NASA-iPSC and UniLu-Gaia
span 13 weeks, so each has one window, from its start, with arrivals raised to offer about
80% of the CPUs (x1.6, x1.7; they offer 50% and 46%); lublin_256 (Lublin and Feitelson's
workload model) at its own load. Left out: OSC-Clust (7-16% of its CPUs offered), Jann
(6.7 weeks), LCG (a grid of one-CPU jobs), lublin-aaroh (3%), and RICC and CEA-Curie
(447,794 and 312,826 jobs on 8,192 and 93,312 CPUs: left out for the time their fixed runs
would take, not measured).

The wide set came last (issue 57), its rule written here before any of its results was
read. The 10 traces spanning more than one window (the tuning and validation sets' traces,
at their loads) are cut into slots of 12 x load weeks from their first week (slot k at
week k x ceil(12 x load)); a slot that shares a week with a tuning window is left out, and
so is one where the baseline keeps no queue worth deciding on (its mean wait over the
judged weeks under 10 minutes: LANL-CM5@60 and @84, Sandia-Ross@128x1.3). Of each trace's
slots left, in order, those at 10%, 50% and 90% of the list are taken (index nearest to
f x (n - 1), halves up; once each): 24 windows. Its windows may share weeks with the
validation set's, never with the tuning set's.

A file not bundled is looked up in ``--archive``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from advisor.adapters.swf import read_swf, resolve_trace  # noqa: E402
from advisor.model import SECONDS_PER_WEEK, trace_machine  # noqa: E402
from advisor.settings import Settings  # noqa: E402
from advisor.units import parse_duration  # noqa: E402
from advisor.whatif.online import trace_history  # noqa: E402
from advisor.whatif.hindsight import (ONLINE, ROLLING, SITE, advice_bench,  # noqa: E402
                                      fixed_runs, pick_snapshots, static_policies,
                                      warm_window)
from advisor.whatif.runner import make_executor  # noqa: E402
from advisor.whatif.trace_accounts import site_config, with_accounts  # noqa: E402

WEEKS, BEFORE, DAY = 8, 4, 86400
#: the longest wait the advice must hold, against the baseline's (issue 57)
HOLD = 1.5
SETS = {
    "tuning": ("KTH-SP2@14", "KTH-SP2@30", "CTC-SP2@14", "CTC-SP2@31", "SDSC-SP2@31",
               "SDSC-SP2@67", "SDSC-BLUE@41", "SDSC-BLUE@90", "HPC2N@54", "HPC2N@117"),
    "validation": ("SDSC-Par@15", "SDSC-Par@34", "LANL-CM5@30", "LANL-CM5@66",
                   "SDSC-DS@15", "SDSC-DS@34", "Sandia-Ross@48x1.3", "Sandia-Ross@105x1.3",
                   "LLNL-Atlas@8x1.2", "LLNL-Atlas@17x1.2"),
    # traces neither set uses, added after the decision was fixed (module docstring)
    "holdout": ("NASA-iPSC@0x1.6", "UniLu-Gaia@0x1.7", "lublin_256@0"),
    # the wide validation set (module docstring: its rule)
    "wide": ("KTH-SP2@0", "CTC-SP2@0", "SDSC-SP2@0", "SDSC-SP2@48", "SDSC-SP2@84",
             "SDSC-BLUE@12", "SDSC-BLUE@60", "SDSC-BLUE@108", "HPC2N@12", "HPC2N@84",
             "HPC2N@156", "SDSC-Par@0", "SDSC-Par@24", "SDSC-Par@36", "LANL-CM5@12",
             "LANL-CM5@36", "LANL-CM5@72", "SDSC-DS@0", "SDSC-DS@24", "SDSC-DS@36",
             "Sandia-Ross@16x1.3", "Sandia-Ross@64x1.3", "Sandia-Ross@112x1.3",
             "LLNL-Atlas@0x1.2"),
}
#: two-sided 95% Student t quantiles by degrees of freedom (1..30; beyond: 1.96)
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
        2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
        2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
#: --jobs: each window, its history, first judged moment and fixed runs (``fixed_for``),
#: loaded before the workers are forked
LOADED: dict[str, tuple] = {}
KNOBS = (("decision", str), ("horizon", str), ("horizon_max", str), ("min_gain", float),
         ("min_wins", float),
         ("risk", float), ("history_weeks", int), ("samples", int), ("dwell", str),
         ("race", int), ("steady", lambda v: v in ("1", "true")))


def trace_file(name: str, archive: Path | None) -> str:
    """A bundled trace's name, else the Archive file in ``archive`` whose name starts so."""
    try:
        return str(resolve_trace(name))
    except Exception:
        if archive is None:
            raise SystemExit(f"{name} is not bundled: give --archive DIR") from None
        found = (sorted(archive.glob(f"{name}-*.swf*"))
                 or sorted(archive.glob(f"{name}.swf*")))
        if not found:
            raise SystemExit(f"no {name}-*.swf* in {archive}") from None
        return str(found[0])


def window(spec: str, archive: Path | None, fair_share: bool = False):
    """A window TRACE@WEEK[xLOAD]: the played workload (4 warm-up weeks, then WEEKS judged
    weeks, from week WEEK of the trace's own clock, arrivals LOAD times as dense), the
    history before it, and its first judged moment; with ``fair_share``, its groups as
    accounts (``trace_accounts``: fair share in effect, the baseline the site's priority)."""
    name, _, rest = spec.partition("@")
    week, _, load = rest.partition("x")
    load = float(load or 1.0)
    whole = read_swf(trace_file(name, archive))
    if fair_share:
        whole = with_accounts(whole)
    a = int(whole.jobs["submit"].min()) + int(week) * SECONDS_PER_WEEK
    since = a + int(BEFORE * SECONDS_PER_WEEK * load)
    return warm_window(whole, since, since + int(WEEKS * SECONDS_PER_WEEK * load), load,
                       BEFORE)


def has_groups(spec: str, archive: Path | None) -> bool:
    """Whether the trace of window ``spec`` has group numbers: with ``--fair-share`` a set's
    windows on traces without (one account, nothing to share) are left out."""
    jobs = read_swf(trace_file(spec.partition("@")[0], archive)).jobs
    return bool((jobs["group"] >= 0).any())


def cached_fixed(spec: str, workload, history, first, executor, cache: Path | None,
                 knobs: bool = True) -> dict:
    """Every static policy kept fixed over the window (``static_policies``: with the
    knobs proposed on the days up to ``first`` unless ``knobs`` is off), those ``cache``
    holds read from it and the others run and added to it."""
    kind = "-fs" if workload.accounts is not None else ""
    path = cache / f"{spec.replace('/', '_')}-{WEEKS}w{kind}.npz" if cache else None
    stored = {}
    if path is not None and path.exists():
        data = np.load(path, allow_pickle=False)
        stored = {str(lab): (str(sp), data[f"start{k}"])
                  for k, (lab, sp) in enumerate(zip(data["labels"], data["specs"]))}
    policies = static_policies(trace_machine(workload), history, base=site_config(workload),
                               snapshots=pick_snapshots(workload, first, DAY) if knobs
                               else ())
    missing = [p for p in policies if p.label not in stored]
    if missing:
        stored.update(fixed_runs(workload, DAY, missing, executor, history=history))
    if missing and path is not None:
        cache.mkdir(parents=True, exist_ok=True)
        labels = list(stored)
        np.savez(path, labels=np.array(labels), specs=np.array([stored[k][0] for k in labels]),
                 **{f"start{k}": stored[lab][1] for k, lab in enumerate(labels)})
    return {p.label: stored[p.label] for p in policies}


def run(args) -> None:
    settings = _settings(args)
    args.out.mkdir(parents=True, exist_ok=True)
    specs = args.windows.split(",") if args.windows else SETS[args.set]
    if args.fair_share and not args.windows:
        specs = [s for s in specs if has_groups(s, args.archive)]
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.jobs > 1:
        # every window loaded and its fixed runs made first: the forked workers inherit them
        LOADED.update({spec: fixed_for(spec, args, args.workers, settings) for spec in specs})
        items = sorted(((spec, seed) for spec in specs for seed in seeds),
                       key=lambda item: -_cost(args.out, item[0]))
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            runs = dict(zip(items, pool.map(_one, items, [settings] * len(items))))
    else:
        runs = {}
        for spec in specs:
            loaded = fixed_for(spec, args, args.workers, settings)
            runs.update({(spec, seed): _advise(spec, seed, loaded, settings, args.workers)
                         for seed in seeds})
    for spec in specs:
        fields, _ = runs[spec, seeds[0]]
        doc = {"window": spec, "set": next((k for k, v in SETS.items() if spec in v), ""),
               "weeks": WEEKS, "settings": settings.as_dict(), **fields,
               "advice": [runs[spec, seed][1] for seed in seeds]}
        name = spec.replace("/", "_") + (f"-{args.tag}" if args.tag else "")
        (args.out / f"{name}.json").write_text(json.dumps(doc, indent=1))
    summary(args.out, [args.tag], specs)


def _settings(args) -> Settings:
    knobs = {}
    for name, kind in KNOBS:
        value = getattr(args, name)
        if value is not None:
            knobs[name] = parse_duration(value) if name in ("horizon", "horizon_max",
                                                             "dwell") else kind(value)
    if args.futures_only:
        knobs["past"] = False
    if args.no_knobs:
        knobs["knobs"] = False
    return Settings(objective="avg_wait", **knobs)


def fixed_for(spec: str, args, workers: int, settings: Settings):
    """The window of ``spec``, its history and first judged moment, and its fixed runs."""
    began = time.perf_counter()
    workload, prior, first = window(spec, args.archive, args.fair_share)
    history = trace_history(prior, settings.history_weeks)
    executor = make_executor(workers, "serial" if workers == 1 else "process")
    try:
        fixed = cached_fixed(spec, workload, history, first, executor, args.cache,
                             settings.knobs)
    finally:
        executor.close()
    print(f"{spec}: fixed runs {time.perf_counter() - began:.0f} s", file=sys.stderr,
          flush=True)
    return workload, prior, first, fixed


def _cost(out: Path, spec: str) -> float:
    """The longest an earlier run in ``out`` took on ``spec`` (0: none): --jobs starts the
    longest first, so that no long window is left to run alone at the end."""
    walls = [a["wall_s"] for p in out.glob(spec.replace("/", "_") + "-*.json")
             for a in json.loads(p.read_text())["advice"]]
    return max(walls, default=0.0)


def _one(item: tuple[str, int], settings: Settings) -> tuple[dict, dict]:
    """One window under one seed in a process of its own (--jobs), its simulations serial."""
    spec, seed = item
    return _advise(spec, seed, LOADED[spec], settings, 1)


def _advise(spec: str, seed: int, loaded: tuple, settings: Settings, workers: int
            ) -> tuple[dict, dict]:
    """One window under one seed: the window's fixed figures, and the advice's."""
    workload, prior, first, fixed = loaded
    executor = make_executor(workers, "serial" if workers == 1 else "process")
    t = time.perf_counter()
    try:
        bench = advice_bench(workload, DAY, dataclasses.replace(settings, seed=seed),
                             executor, fixed=fixed, prior=prior, first=first)
    finally:
        executor.close()
    print(f"{spec} seed {seed}: {time.perf_counter() - t:.0f} s", file=sys.stderr,
          flush=True)
    rows = bench.table.set_index("name")
    by_spec = bench.table.drop_duplicates("spec").set_index("spec")
    fields = {"jobs": bench.total["jobs"], "oracle": bench.best_safe, "pick": bench.pick,
              "rolling": list(bench.rolling), "rolling_changes": bench.total["rolling_changes"],
              "runs": {"baseline": _row(rows.loc["baseline"]),
                       "oracle": _row(by_spec.loc[bench.best_safe]),
                       "site's pick": _row(rows.loc[SITE]),
                       "rolling pick": _row(rows.loc[ROLLING])},
              "static": {r["name"]: _row(r) for _, r in bench.table.iterrows()}}
    advice = {"seed": seed, "wall_s": time.perf_counter() - t, **_row(rows.loc[ONLINE]),
              "changes": bench.total["changes"],
              "change_fairness": bench.total.get("change_fairness", []),
              "decisions": [dataclasses.asdict(d) for d in bench.online.decisions]}
    return fields, advice


def _row(row) -> dict:
    return {k: float(row[k]) for k in ("avg_wait", "p95_wait", "max_wait", "avg_bsld", "r",
                                       "share_dev", "acct_wait") if k in row}


def interval(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval (Student t over the values)."""
    v = np.asarray(values, float)
    if len(v) < 2:
        return float(v.mean()), float("nan")
    se = v.std(ddof=1) / np.sqrt(len(v))
    return float(v.mean()), float(se * (T975[len(v) - 2] if len(v) <= 31 else 1.96))


REFERENCES = (("pick", "site's pick"), ("rolling", "rolling pick"), ("oracle", "oracle"),
              ("baseline", "baseline"))


def summary(out: Path, tags: list[str], specs: list[str]) -> None:
    """Per window and over windows: each advice's mean wait against each reference (per
    window the mean over its seeds; the interval over windows), and the tags side by side."""
    overall = []
    for tag in tags:
        docs = _load(out, tag, specs)
        if docs:
            overall.append((tag, len(docs), len(docs[0]["advice"]), *_report(tag, docs)))
    if len(overall) > 1:
        print("\n| advice | windows x seeds | vs site's pick | vs rolling pick | vs oracle | "
              f"vs baseline | worst vs pick | MaxWait / baseline (where the pick holds "
              f"{HOLD:g}) | changes / week |")
        print("|---|" + "---|" * 8)
        for tag, n, seeds, cols, worst, mx, held, per in overall:
            cells = " | ".join(f"{m:+.1%} ± {h:.1%}" for m, h in cols)
            print(f"| {tag} | {n} x {seeds} | {cells} | {worst:+.1%} | {mx:.2f} ({held:.2f}) "
                  f"| {per:.2f} |")


def _load(out: Path, tag: str, specs: list[str]) -> list[dict]:
    """The windows' runs of ``tag`` ("a+b": the runs of tags a and b, other seeds of one
    decision, as one)."""
    docs = []
    for spec in specs:
        found = [out / (spec.replace("/", "_") + (f"-{t}" if t else "") + ".json")
                 for t in tag.split("+")]
        found = [json.loads(p.read_text()) for p in found if p.exists()]
        if found:
            found[0]["advice"] = [a for d in found for a in d["advice"]]
            docs.append(found[0])
    return docs


def _window(d: dict) -> dict:
    """One window's figures: the advice (the mean over its seeds) against each reference,
    the rolling pick against the others, the longest waits against the baseline's."""
    r, adv = d["runs"], d["advice"]
    base_max = max(r["baseline"]["max_wait"], 1.0)
    weeks = len(adv[0]["decisions"]) / 7     # daily decisions: the judged weeks
    return {
        "wait": float(np.mean([x["avg_wait"] for x in adv])),
        "changes": float(np.mean([x["changes"] for x in adv])),
        "gains": {k: float(np.mean([x["avg_wait"] / r[n]["avg_wait"] - 1 for x in adv]))
                  for k, n in REFERENCES},
        "rolling": {k: r["rolling pick"]["avg_wait"] / r[n]["avg_wait"] - 1
                    for k, n in REFERENCES if k != "rolling"},
        "max": max(x["max_wait"] for x in adv) / base_max,
        "pick_max": r["site's pick"]["max_wait"] / base_max,
        "rolling_max": r["rolling pick"]["max_wait"] / base_max,
        # where every candidate kept fixed breaks the limit, the table says so
        "all_over": all(v["max_wait"] / base_max > HOLD for k, v in d["static"].items()
                        if k not in ("baseline", "site's pick", "rolling pick", "online")),
        "per_week": float(np.mean([x["changes"] for x in adv])) / weeks,
        "rolling_per_week": d["rolling_changes"] / weeks}


def _report(tag: str, docs: list[dict]) -> tuple:
    """The table of ``docs``' windows and the figures over them; returns the intervals
    against each reference, the worst window against the site's pick, the largest MaxWait
    ratio (anywhere, and where the site's pick holds ``HOLD``) and the changes a week."""
    print(f"\n## {tag or 'advice'}: {len(docs)} windows, {WEEKS} weeks judged each, "
          f"mean wait (s); gains < 0: the advice waits less\n")
    print("| window | jobs | baseline | oracle | site's pick | rolling pick (changes) "
          "| advice (changes) | vs pick | vs rolling | vs oracle | vs baseline "
          "| MaxWait / baseline: pick, rolling, advice |")
    print("|---|" + "---|" * 11)
    rows = [_window(d) for d in docs]
    for d, w in zip(docs, rows):
        r, g = d["runs"], w["gains"]
        notes = ("" if w["pick_max"] <= HOLD else " (pick over)") + \
            (" (all over)" if w["all_over"] else "")
        print(f"| {d['window']} | {d['jobs']:,} | {r['baseline']['avg_wait']:,.0f} | "
              f"{r['oracle']['avg_wait']:,.0f} {d['oracle']} | "
              f"{r[SITE]['avg_wait']:,.0f} {d['pick']} | "
              f"{r['rolling pick']['avg_wait']:,.0f} ({d['rolling_changes']}) | "
              f"{w['wait']:,.0f} ({w['changes']:g}) | {g['pick']:+.1%} | "
              f"{g['rolling']:+.1%} | {g['oracle']:+.1%} | {g['baseline']:+.1%} | "
              f"{w['pick_max']:.2f}, {w['rolling_max']:.2f}, {w['max']:.2f}{notes} |")
    print()
    gains = {k: [w["gains"][k] for w in rows] for k, _ in REFERENCES}
    for key, values in gains.items():
        m, h = interval(values)
        print(f"* advice vs {key}: {m:+.1%} ± {h:.1%} (95%, {len(values)} windows)"
              f"; worst window {max(values):+.1%}")
    for key in rows[0]["rolling"]:
        m, h = interval([w["rolling"][key] for w in rows])
        print(f"* rolling pick vs {key}: {m:+.1%} ± {h:.1%}")
    held = [w["max"] for w in rows if w["pick_max"] <= HOLD]
    most = max(w["max"] for w in rows)
    print(f"* advice MaxWait / baseline's: at most {most:.2f}; where the site's pick holds "
          f"it to {HOLD:g}x ({len(held)} windows), at most "
          f"{max(held, default=float('nan')):.2f}, over {HOLD:g}x in "
          f"{sum(x > HOLD for x in held)}")
    print(f"* advice better than the baseline's mean wait in "
          f"{sum(g < 0 for g in gains['baseline'])} of {len(docs)} windows")
    per_week = [w["per_week"] for w in rows]
    print(f"* changes per week: advice {np.mean(per_week):.2f} (at most {max(per_week):.2f})"
          f"; rolling pick {np.mean([w['rolling_per_week'] for w in rows]):.2f}")
    if all("share_dev" in d["runs"]["baseline"] for d in docs):
        _fairness(docs)
    return ([interval(v) for v in gains.values()], max(gains["pick"]), most,
            max(held, default=float("nan")), float(np.mean(per_week)))


def _fairness(docs: list[dict]) -> None:
    """With accounts: the fair-share deviation of the advice and of the references (mean
    over the windows, the advice's over its seeds first), and the largest account wait
    against the baseline's (``advisor.whatif.hindsight.fairness_columns``)."""
    def per_window(name: str, key: str) -> list[float]:
        return [float(np.mean([x[key] for x in (d["advice"] if name == "advice"
                                                 else [d["runs"][name]])])) for d in docs]

    refs = ("baseline", SITE, "rolling pick")
    devs = ", ".join(f"{n} {np.mean(per_window(n, 'share_dev')):.3f}" for n in refs)
    waits = ", ".join(f"{n} {max(per_window(n, 'acct_wait')):.2f}" for n in refs)
    print(f"* fair-share deviation (mean over windows): advice "
          f"{np.mean(per_window('advice', 'share_dev')):.3f}; {devs}")
    print(f"* account wait against the baseline's (largest window): advice "
          f"{max(per_window('advice', 'acct_wait')):.2f}; {waits}")
    changes = [c for d in docs for x in d["advice"] for c in x.get("change_fairness", [])]
    risk = docs[0]["settings"]["risk"]
    for name in ("acct_wait", SITE, "rolling pick"):
        got = [c[name] for c in changes if name in c]
        if not got:
            continue
        who = "the advice's changes" if name == "acct_wait" else f"the {name}, same jobs"
        print(f"* account wait in hindsight over each change's jobs, {who}: over "
              f"{risk:g} for {sum(g > risk for g in got)} of {len(got)}, median "
              f"{np.median(got):.2f}, largest {max(got):.2f}")


def unfinished(specs: list[str], archive: Path | None) -> None:
    """Per window, under the baseline: at each week's first daily decision (when the
    advisor replays the 4 clock weeks before), the share of those weeks' jobs not finished
    yet, which the history lacks (``advisor.whatif.past.unfinished`` replays them)."""
    from advisor.engine import Estimates, job_arrays
    from advisor.plugins.spec import parse_policy
    from advisor.whatif.hindsight import FixedTask, fixed_starts
    from advisor.whatif.past import week_start
    from advisor.whatif.trace_accounts import baseline_spec
    week = SECONDS_PER_WEEK
    for spec in specs:
        workload, _, first = window(spec, archive)
        start = fixed_starts(FixedTask(workload, Estimates(), DAY,
                                       parse_policy(baseline_spec(workload))))
        arrays = job_arrays(workload, Estimates())
        submit, end_at = arrays.submit, start + arrays.runtime
        counts = np.zeros(4, int)          # jobs, unfinished; last week's jobs, unfinished
        for end in sorted({week_start(first + k * DAY) for k in range(WEEKS * 7)}):
            t = next(first + k * DAY for k in range(WEEKS * 7)
                     if week_start(first + k * DAY) == end)
            replayed = (submit >= end - BEFORE * week) & (submit < end)
            last = replayed & (submit >= end - week)
            not_done = replayed & ((start < 0) | (end_at > t))
            counts += [replayed.sum(), not_done.sum(), last.sum(), (not_done & last).sum()]
        print(f"{spec}: not finished at the week's replay: {counts[1] / counts[0]:.1%} of "
              f"the {BEFORE} weeks' jobs, {counts[3] / counts[2]:.1%} of the last week's")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--set", choices=SETS, default="tuning")
    r.add_argument("--windows", help="windows instead of a set (TRACE@WEEK[xLOAD],...)")
    r.add_argument("--archive", type=Path, help="folder of the Archive's SWF files")
    r.add_argument("--seeds", default="0")
    r.add_argument("--workers", type=int, default=2)
    r.add_argument("--jobs", type=int, default=1, help="windows x seeds run at once, each "
                   "in a process of its own, its simulations serial")
    r.add_argument("--cache", type=Path, help="keeps each window's fixed runs")
    r.add_argument("--out", type=Path, default=Path("advice-bench"))
    r.add_argument("--tag", default="")
    r.add_argument("--futures-only", action="store_true", help="Settings.past = False")
    r.add_argument("--no-knobs", action="store_true", help="Settings.knobs = False: the "
                   "grids (the advice's and the static one) without the knobs")
    r.add_argument("--fair-share", action="store_true", help="the traces' groups as "
                   "accounts, fair share in effect (use a --tag apart)")
    for name, _ in KNOBS:
        r.add_argument("--" + name.replace("_", "-"), help="Settings." + name)
    u = sub.add_parser("unfinished", help=unfinished.__doc__.split(":")[0])
    u.add_argument("--set", choices=SETS, default="tuning")
    u.add_argument("--archive", type=Path)
    s = sub.add_parser("summary")
    s.add_argument("--out", type=Path, default=Path("advice-bench"))
    s.add_argument("--tags", default="")
    s.add_argument("--set", choices=SETS, default="tuning")
    args = ap.parse_args()
    if args.command == "unfinished":
        unfinished(list(SETS[args.set]), args.archive)
    elif args.command == "run":
        run(args)
    else:
        summary(args.out, args.tags.split(","), list(SETS[args.set]))


if __name__ == "__main__":
    main()
