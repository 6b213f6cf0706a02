"""Who waits under fair share on a trace: each window played by the online replay's slurm
mode under EASY-FCFS-FCFS and under the site's own priority with the trace's groups as
accounts (``--fair-share``), and the mean wait of the jobs of the accounts that used the
least (three quarters of them) and of the heaviest quarter, by CPU-seconds in the window.

    .venv/bin/python bench/fair_share_waits.py [TRACE:FIRST:COUNT ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from advisor.adapters.swf import read_swf, resolve_trace  # noqa: E402
from advisor.engine import Estimates  # noqa: E402
from advisor.plugins.spec import parse_policy  # noqa: E402
from advisor.whatif.online import ReplaySystem  # noqa: E402
from advisor.whatif.trace_accounts import account_names, baseline_spec, with_accounts  # noqa: E402,E501

WINDOWS = ("KTH-SP2:0:1500", "KTH-SP2:3000:1500", "SDSC-SP2:0:2000", "SDSC-SP2:5000:2000")


def waits(workload) -> np.ndarray:
    system = ReplaySystem(workload, Estimates(), parse_policy(baseline_spec(workload)))
    return system.play(system.decision_points(86400), lambda t, s, h, c: c) - system.submit


def main() -> None:
    for spec in sys.argv[1:] or WINDOWS:
        name, first, count = spec.split(":")
        whole = read_swf(resolve_trace(name))
        w = whole.with_jobs(whole.jobs.iloc[int(first):int(first) + int(count)]
                            .reset_index(drop=True))
        plain, fair = waits(w), waits(with_accounts(w))
        account = account_names(w.jobs["group"].to_numpy())
        used = pd.Series(w.jobs["procs"] * w.jobs["runtime"]).groupby(account).sum()
        heavy = np.isin(account, used.nlargest(len(used) // 4).index)
        print(f"{spec}: {len(used)} accounts; light 3/4 mean wait {plain[~heavy].mean():,.0f}"
              f" -> {fair[~heavy].mean():,.0f} s; heaviest 1/4 {plain[heavy].mean():,.0f} -> "
              f"{fair[heavy].mean():,.0f} s (EASY-FCFS-FCFS -> fair share)")


if __name__ == "__main__":
    main()
