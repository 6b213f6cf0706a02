"""Lawson and Smirni's Fig. 4 on the four traces it used (the local versions differ from the
paper's, so the signs are the test): four runtime classes against one queue, the aggregate
slowdown ratio R (per job (s_1 - s_4) / min(s_1, s_4), crashed jobs left out).

* Fig. 4a: exact runtimes as estimates, classes from each week's own runtimes (a priori):
  R > 0 on all four.
* Fig. 4b: user estimates, classes from the previous week's completed jobs: R < 0 on CTC,
  R > 0 on the other three.
The paper's figures are plots; its text gives the signs (and CTC > 1.2, Blue Horizon > 2.0
for 4a); the closing note of issue 19 gives ours beside them."""
from __future__ import annotations

import pytest

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.engine import Estimates, job_arrays
from advisor.policies.queues.kernel import a_priori_classes, run_queues
from advisor.metrics import schedule_table, slowdown_ratio

TRACES = ("KTH-SP2", "CTC-SP2", "SDSC-SP2", "SDSC-BLUE")


def aggregate_r(name: str, estimates: str, local: bool = True) -> float:
    workload = read_swf(resolve_trace(name))
    arrays = job_arrays(workload, Estimates(estimates))
    request = workload.jobs["req_time"].to_numpy()
    classes = a_priori_classes(arrays.submit, arrays.runtime, 4) if estimates == "exact" \
        else None
    one, _ = run_queues(arrays, 1, local=local)
    four, _ = run_queues(arrays, 4, classes, local=local)
    tables = [schedule_table(arrays.submit, start, arrays.runtime, arrays.procs) for start in
              (one, four)]
    return float(slowdown_ratio(*tables, request).mean())


@pytest.mark.parametrize("name", TRACES)
def test_fig4a_exact_runtimes_four_queues_win(name):
    assert aggregate_r(name, "exact") > 0


@pytest.mark.parametrize("name", TRACES)
def test_fig4b_user_estimates_lose_on_ctc_only(name):
    r = aggregate_r(name, "user")
    assert (r < 0) if name == "CTC-SP2" else (r > 0), r


def test_the_strict_reading_misses_fig4b():
    """Why the engine reads Fig. 2's (a) and (b) locally: read strictly, four queues still
    win on CTC with user estimates, against the paper."""
    assert aggregate_r("CTC-SP2", "user", local=False) > 0


#: the paper's Table 1: the threshold T and look-ahead L (weeks) chosen for each trace
TABLE1 = {"CTC-SP2": (2.5, 2), "KTH-SP2": (100, 2), "SDSC-SP2": (25, 1), "SDSC-BLUE": (10, 1)}


@pytest.mark.parametrize("name", TRACES)
def test_fig6_online_simulation_beats_four_fixed_queues(name):
    """Fig. 6 (c) > (b): with user estimates, the online choice of P (paper's setting, at
    Table 1's T and L) beats four queues kept throughout; and it tests at most once a week
    (Table 2), changing P only on a test."""
    from advisor.policies.queues.study import online_queue_counts
    workload = read_swf(resolve_trace(name))
    arrays = job_arrays(workload, Estimates("user"))
    request = workload.jobs["req_time"].to_numpy()
    one, _ = run_queues(arrays, 1)
    four, _ = run_queues(arrays, 4)
    online = online_queue_counts(arrays, *TABLE1[name])

    def r(start):
        tables = [schedule_table(arrays.submit, s, arrays.runtime, arrays.procs)
                  for s in (one, start)]
        return float(slowdown_ratio(*tables, request).mean())

    assert r(online.start) > r(four)
    assert 0 < online.tests <= online.weeks and online.changes <= online.tests
    assert sum(online.to_parts.values()) == online.changes


def test_honest_online_simulation_still_beats_one_queue_on_kth():
    """The online policy when its what-ifs see only futures drawn from the finished jobs
    (no hindsight), at Table 1's KTH setting (T=100, L=2): it still beats one queue (R > 0;
    measured +7.27 against the paper's-setting +10.38 and four fixed queues' +10.27), and the
    decisions it takes are tests of Table 2's kind."""
    from advisor.policies.queues.study import queue_count_study
    study = queue_count_study(read_swf(resolve_trace("KTH-SP2")), 100, 2, futures="sampled")
    assert study.r_online > 0
    t2 = study.table2()
    assert 0 < t2["tests"] <= t2["weeks"] and t2["changes"] <= t2["tests"]
