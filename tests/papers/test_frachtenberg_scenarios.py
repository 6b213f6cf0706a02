"""Frachtenberg et al., §3: the four synthetic scenarios on the process-level model, against the
paper's tables (tolerance 10% per value), with the overheads of studies.coscheduling.FITTED.

Where the model does not reach a value, the test asserts the paper's direction instead and
says why (docs/coscheduling.md gives both figures side by side):

- SB when a CPU also hosts CPU-bound processes (complementing, mixed): the model's local
  round robin serves the woken communicating process sooner than the paper's Linux did, so
  job 3 suffers less and the other jobs more.
- FCS, mixed, job 3: the paper's 155 s is less than a third share of the machine allows
  (60 s of work in its own slot of three); the model's job 3 ends at about 185 s.
- GS, mixed, jobs 1-3: the paper's row (185, 185, 305) has jobs 1 and 2, 120 s of dedicated
  work each, both done by 185 s, which no gang schedule allows; the model ends job 3 at 185
  and jobs 1 and 2 at 305, so only the turnaround is compared.
"""
from __future__ import annotations

from functools import partial

import pytest

from advisor.policies.timeshare.study_cosched import compare, dynamic_workload, orders, play_dynamic

TOLERANCE = 0.10
GAPS = {
    ("complementing", "SB"): {"job 1", "job 2", "job 3", "turnaround"},
    ("mixed", "SB"): {"job 1", "job 2", "job 3"},
    ("mixed", "FCS"): {"job 3"},
    ("mixed", "GS"): {"job 1", "job 2", "job 3", "mean response"},
}


@pytest.fixture(scope="module")
def table():
    return compare()


def _value(table, scenario, scheduler, column):
    row = table[(table.scenario == scenario) & (table.scheduler == scheduler)
                & (table.column == column)]
    return float(row.model.iloc[0])


def test_values_within_ten_percent_of_the_tables(table):
    compared = table[[row.column not in GAPS.get((row.scenario, row.scheduler), ())
                      for row in table.itertuples()]]
    assert len(compared) == len(table) - sum(len(v) for v in GAPS.values())
    off = compared[compared.error.abs() > TOLERANCE]
    assert off.empty, off.to_string()


@pytest.mark.parametrize("scenario", ["balanced", "imbalanced", "complementing"])
def test_schedulers_rank_as_in_the_paper(table, scenario):
    ranks = orders(table)
    ranks = ranks[ranks.scenario == scenario]
    assert list(ranks.model) == list(ranks.paper), ranks.to_string()


def test_directions_where_values_differ(table):
    v = partial(_value, table)
    # complementing: SB packs better than FCFS and GS, but slows job 3 more than FCS does
    assert v("complementing", "SB", "turnaround") < v("complementing", "FCFS", "turnaround")
    assert v("complementing", "SB", "turnaround") < v("complementing", "GS", "turnaround")
    assert v("complementing", "SB", "job 3") > v("complementing", "FCS", "job 3")
    # mixed: FCS and SB end the workload before FCFS and GS; FCS ends the CS job 3 first
    for scheduler in ("FCS", "SB"):
        assert v("mixed", scheduler, "turnaround") < v("mixed", "FCFS", "turnaround")
        assert v("mixed", scheduler, "turnaround") < v("mixed", "GS", "turnaround")
    assert v("mixed", "FCS", "job 3") < min(v("mixed", "FCS", "job 1"),
                                             v("mixed", "FCS", "job 2"))


def test_fcs_accepts_more_load_than_batch_on_a_dynamic_workload():
    """§5's finding, as a direction: offered the synthetic dynamic workload at load 1.0
    (200 jobs, 32 CPUs, MPL 6), FCS accepts more load than FCFS with EASY backfilling (more
    work done by the last arrival) and answers sooner. The paper's saturation points (FCFS
    about 78%, FCS about 88%) are not reproduced: on 400 jobs FCS's highest accepted load is
    0.898 against FCFS's 0.885 (docs/coscheduling.md gives the sweep)."""
    workload = dynamic_workload(200, seed=0)
    batch = play_dynamic(workload, 1.0, "FCFS")
    fcs = play_dynamic(workload, 1.0, "FCS")
    assert fcs["accepted"] > batch["accepted"], (fcs, batch)
    assert fcs["mean_response"] < batch["mean_response"], (fcs, batch)
