"""Work is bounded before it starts (issue 54): every option that scales a run's work or
memory has a stated bound, and a bad value (or a bad trace, or a moment outside it) ends the
run with exit 2 and one line naming it, before anything is simulated."""
import gzip
import os
import random

import pytest

import advisor.whatif.advise as advise_module
from advisor.cli import main
from advisor.errors import BadInput
from advisor.settings import MAX_CANDIDATES, Settings
from advisor.whatif.advise import MAX_PENDING, check_queue, fit_history
from advisor.whatif.runner import MAX_WORKERS_PER_CORE

KTH = ["recommend", "--from", "swf:KTH-SP2@150d", "--no-store"]


@pytest.fixture()
def nothing_simulated(monkeypatch):
    """A run that reaches a simulation fails the test."""
    def simulated(*args, **kwargs):
        raise AssertionError("a simulation started")
    monkeypatch.setattr(advise_module, "trace_snapshot", simulated)
    monkeypatch.setattr(advise_module, "recommend", simulated)


def _one_line(capsys, argv, *words):
    try:
        code = main(argv)
    except SystemExit as e:          # argparse's own exit, as a bad option's
        code = e.code
    assert code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("advisor: error: "), err
    for word in words:
        assert word in err, err


@pytest.mark.parametrize("option, value, words", [
    ("--samples", "100000000", ("--samples", "from 0 to 1000")),
    ("--horizon", "100000d", ("--horizon", "over the bound of 30d")),
    ("--horizon-max", "31d", ("--horizon-max", "over the bound of 30d")),
    ("--history-weeks", "100000", ("--history-weeks", "from 1 to 104")),
    ("--min-gain", "5", ("--min-gain", "from 0 to 1")),
    ("--horizon", "-1d", ("--horizon", "'-1d' is negative")),
    ("--workers", str(MAX_WORKERS_PER_CORE * (os.cpu_count() or 1) + 1),
     ("--workers", "over the bound of 4 per core")),
])
def test_each_bound_is_one_line_before_any_work(capsys, nothing_simulated, option, value,
                                                words):
    _one_line(capsys, [*KTH, f"{option}={value}" if value.startswith("-") else option,
                       *([] if value.startswith("-") else [value])], *words)


def test_candidates_are_bounded(capsys, nothing_simulated):
    many = [a for _ in range(MAX_CANDIDATES + 1) for a in ("--candidate", "easy:SPF")]
    _one_line(capsys, [*KTH, *many], "--candidate 1001 times is over its bound of 1000")


def test_a_moment_before_the_trace_is_named_as_a_date(capsys, nothing_simulated):
    _one_line(capsys, ["recommend", "--from", "swf:KTH-SP2@1990-01-01", "--no-store"],
              "1990-01-01 00:00:00 Europe/Stockholm", "before the trace's first job")


# (the same bytes in every worker of a parallel run: each collects the same tests)
NOISE = random.Random(0).randbytes(3000)


@pytest.mark.parametrize("name, content, words", [
    ("random.swf.gz", NOISE, ("named .gz but is not gzip data",)),
    ("random.swf", b"\0\1\2" + NOISE, ("is binary data, not an SWF trace",)),
    ("bad.swf.gz", gzip.compress(b"1 2 3\n", mtime=0), ("line 1", "expected 18 fields")),
], ids=["not-gzip", "binary", "bad-fields"])
def test_a_trace_that_is_not_one_is_named(capsys, tmp_path, name, content, words):
    (tmp_path / name).write_bytes(content)
    _one_line(capsys, ["replay", str(tmp_path / name)], *words)


def test_a_queue_over_the_bound_is_refused_before_any_simulation():
    from types import SimpleNamespace
    check_queue(SimpleNamespace(pending=[None] * MAX_PENDING))
    with pytest.raises(BadInput, match="holds 20,001 pending jobs, over the bound of 20,000"):
        check_queue(SimpleNamespace(pending=[None] * (MAX_PENDING + 1)))


def test_more_history_asked_than_there_is_uses_what_there_is():
    import pandas as pd
    week = 7 * 86400
    history = pd.DataFrame({"submit": [10 * week - 3 * week + 5, 10 * week - 100]})
    settings, note = fit_history(Settings(history_weeks=50), history, 10 * week)
    assert settings.history_weeks == 3
    assert note == "--history-weeks 50 asked, but the history holds 3 weeks (2 jobs): 3 used"
    same, none = fit_history(Settings(history_weeks=2), history, 10 * week)
    assert same.history_weeks == 2 and none == ""
