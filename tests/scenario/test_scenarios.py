"""Screen-sized scenarios whose full start-time traces were worked out by hand.

Jobs are (submit, processors, runtime[, estimate]); estimates equal runtimes unless given.
"""
import pytest

from tests.helpers import starts

# ---- backfilling variants --------------------------------------------------------------
# Machine of 4. J1 holds 3 processors until 10. J2 (2 procs) is the blocked head: shadow 10,
# extra 4 - 2 = 2. J3 wants the whole machine. J4 (1 proc, 30 s) can run on an extra
# processor: EASY starts it at 3, which pushes J3 back to 33 (Mu'alem and Feitelson Property 1);
# the conservative schedule had already promised J3 the slot [20, 30), so J4 waits until 30.
BACKFILL = [(0, 3, 10), (1, 2, 10), (2, 4, 10), (3, 1, 30)]


@pytest.mark.parametrize("spec, expected", [
    # strict FCFS: J2 at 10 (J1 ends), J3 at 20 (J2 ends), J4 at 30 (J3 ends)
    ("none:FCFS", [0, 10, 20, 30]),
    # EASY: J4 backfills at 3 on the extra processors; J3 waits for J2 (20) and J4 (33)
    ("easy:FCFS:FCFS", [0, 10, 33, 3]),
    # conservative: reservations J2@10, J3@20; J4's earliest 30-s hole starts at 30
    ("conservative:FCFS", [0, 10, 20, 30]),
    # two reservations (J2, J3) protect J3 as conservative does
    ("depth:FCFS:FCFS:k=2", [0, 10, 20, 30]),
    # one reservation through the profile code path is EASY again
    ("depth:FCFS:FCFS:k=1", [0, 10, 33, 3]),
])
def test_backfilling_variants(spec, expected):
    assert starts(BACKFILL, 4, spec) == expected


# Machine of 4, t=1: J1 (1 proc) and J2 (2 procs) both end at 10, 1 processor free. The head
# J3 needs 2: J1's release (1 proc, sorted first by size) already satisfies it, so the shadow
# time is 10. Textbook EASY also counts J2 (ending at 10 too): extra = 1 + 1 + 2 - 2 = 2, and
# J4 (1 proc, 100 s) backfills at 2. The 'first' rule stops at J1: extra = 0, J4 waits for 10.
SHADOW_TIE = [(0, 1, 10), (0, 2, 10), (1, 2, 5), (2, 1, 100)]


def test_shadow_ties_textbook_counts_every_job_ending_at_the_shadow_time():
    assert starts(SHADOW_TIE, 4, "easy:FCFS:FCFS") == [0, 0, 10, 2]


def test_shadow_ties_first_counts_up_to_the_first_satisfying_job():
    assert starts(SHADOW_TIE, 4, "easy:FCFS:FCFS:shadow=first") == [0, 0, 10, 10]


# ---- orderings -------------------------------------------------------------------------
# Machine of 4; J0 holds it until 100. Then a, b, c, d (3 or 4 processors: never two at
# once) run one after another, in the order the policy picks at each completion.
#   a: submit 1, 3 procs, 40 s   b: submit 2, 4 procs, 10 s
#   c: submit 3, 3 procs, 20 s   d: submit 95, 4 procs, 30 s
# EXP at 100: a 3.48, b 10.8, c 5.85, d 1.17 -> b; at 110: a 3.73, c 6.35, d 1.5 -> c;
# at 130: a 4.23, d 2.17 -> a; then d.
ORDERING = [(0, 4, 100), (1, 3, 40), (2, 4, 10), (3, 3, 20), (95, 4, 30)]


@pytest.mark.parametrize("order, expected_abcd", [
    ("FCFS", [100, 140, 150, 170]),
    ("LCFS", [160, 150, 130, 100]),
    ("SPF", [160, 100, 110, 130]),
    ("LPF", [100, 190, 170, 140]),
    ("SQF", [100, 160, 140, 170]),   # a, c (3 procs, by submit), then b, d
    ("LQF", [140, 100, 180, 110]),   # b, d (4 procs, by submit), then a, c
    ("EXP", [130, 100, 110, 170]),
])
@pytest.mark.parametrize("backfill", ["none", "easy", "depth"])
def test_each_ordering(order, expected_abcd, backfill):
    spec = f"{backfill}:{order}" if backfill == "none" else f"{backfill}:{order}:{order}"
    assert starts(ORDERING, 4, spec) == [0] + expected_abcd


@pytest.mark.parametrize("order", ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "EXP"])
def test_conservative_keeps_the_reservation_each_job_got_at_submission(order):
    # a, b, c arrive alone while J0 runs: each is promised the next slot as it arrives
    # (a@100, b@140, c@150), and d (95) the slot after them: no ordering can reorder
    # promises, compression only moves jobs earlier.
    assert starts(ORDERING, 4, f"conservative:{order}") == [0, 100, 140, 150, 170]


def test_queue_threshold_puts_long_waiters_first_in_submit_order():
    # SPF at 100 picks b, at 110 c; at 130 a has waited 129 s > T = 120 s and jumps ahead
    # of d (SPF would pick d); then d.
    assert starts(ORDERING, 4, "easy:SPF:SPF:T=120") == [0, 130, 100, 110, 170]
    # T = 90: at 100 a, b and c have all waited longer: FCFS among them, then d.
    assert starts(ORDERING, 4, "easy:SPF:SPF:T=90") == [0, 100, 140, 150, 170]


def test_primary_and_backfill_orders_are_independent():
    # Machine of 4; J0 (3 procs) runs until 10; head J1 needs 4 (shadow 10, extra 0).
    # J2 (1 proc, 8 s) and J3 (1 proc, 5 s) arrive together at 2; both would end by 10 but
    # only one fits on the free processor. FCFS backfill takes J2 (then J3 waits for J1,
    # which ends at 15); SPF backfill takes J3.
    jobs = [(0, 3, 10), (1, 4, 5), (2, 1, 8), (2, 1, 5)]
    assert starts(jobs, 4, "easy:FCFS:FCFS") == [0, 10, 2, 15]
    assert starts(jobs, 4, "easy:FCFS:SPF") == [0, 10, 15, 2]


def test_same_instant_rule_completions_then_arrivals_then_one_pass():
    # Machine of 2. J1 (2 procs) ends at 10 exactly when J2 (2 procs, 5 s) and J3 (1 proc)
    # arrive. Completion first frees the machine; both arrivals are queued; one pass starts
    # J2 (FCFS head) and J3 waits for it.
    jobs = [(0, 2, 10), (10, 2, 5), (10, 1, 5)]
    assert starts(jobs, 2, "easy:FCFS:FCFS") == [0, 10, 15]


def test_overrunning_job_is_expected_to_end_one_second_from_now():
    # Machine of 2. J1 asked for 5 s but runs 20. At 10 (J2's arrival, needs 2) the shadow
    # is 11 (J1 is overdue); J3 (1 proc, 1 s, arrives 10) ends by 11 and backfills at 10.
    jobs = [(0, 1, 20, 5), (10, 2, 5), (10, 1, 1)]
    assert starts(jobs, 2, "easy:FCFS:FCFS") == [0, 20, 10]


def test_one_pass_per_event_is_the_named_alternative():
    # Machine of 1, SPF. J1 ends at 10 when J2 (50 s) and J3 (5 s) arrive together. One pass
    # after all of them sees both and starts the shorter J3; a pass per event starts J2 as
    # soon as it arrives, before J3 is even queued.
    jobs = [(0, 1, 10), (10, 1, 50), (10, 1, 5)]
    assert starts(jobs, 1, "easy:SPF:SPF") == [0, 15, 10]
    assert starts(jobs, 1, "easy:SPF:SPF", batch=False) == [0, 10, 60]
