"""The job-level what-if of a time-sliced partition (studies.timeshare) on SDSC-BLUE."""
from __future__ import annotations

import numpy as np
import pytest

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.cleaning import trace_window
from advisor.errors import BadInput
from advisor.policies.timeshare.inputs import ClassRule, user_classes
from advisor.policies.timeshare.study import TimeShare, timeshare_study
from advisor.units import parse_moment


@pytest.fixture(scope="module")
def blue():
    return read_swf(resolve_trace("SDSC-BLUE"))


def test_a_month_split_between_gang_and_space_sharing(blue):
    since = parse_moment("2001-03-01", blue.header)
    until = parse_moment("2001-03-08", blue.header)
    setting = TimeShare(share=0.5, mpl=4)
    before = blue.jobs[blue.jobs.submit < since]
    study = timeshare_study(trace_window(blue, since, until), setting, before)
    g, r = study.partition_cpus
    assert g + r == blue.machine.procs and g == 576
    j = study.jobs
    assert not study.hindsight and study.window == ("2001-03-01", "2001-03-07")
    # the routed users are the "idle" ones by their jobs before the window
    dc = set(user_classes(before, ClassRule()).loc[lambda c: c == "idle"].index)
    window = blue.jobs[(blue.jobs.submit >= since) & (blue.jobs.submit < until)]
    routed = window.user.isin(dc).to_numpy() & (window.procs.to_numpy() <= g)
    assert (j.side == "shared").sum() >= routed.sum() > 0
    for layout in ("baseline", "split"):
        assert (j[f"{layout}_start"] >= j.submit).all()
        assert (j[f"{layout}_end"] >= j[f"{layout}_start"] + j.runtime - 1e-6).all()
    space = j[j.side == "space"]
    assert np.allclose(space.split_end - space.split_start, space.runtime)
    m = study.metrics()
    assert set(m.group) == {"all jobs", "time-sliced", "space-shared"}
    assert (m[m.group == "all jobs"].jobs == len(j)).all()


def test_bad_settings_are_refused(blue):
    with pytest.raises(BadInput, match="share"):
        TimeShare(share=0.8)                     # timeshare/gang's share: at most 0.75
    with pytest.raises(BadInput, match="mpl"):
        TimeShare(mpl=1)
    with pytest.raises(BadInput, match="mpl"):
        TimeShare(mpl=9)                         # and its mpl: 2 to 8 jobs per CPU
    with pytest.raises(BadInput, match="slice"):
        TimeShare(slice_s=2)
    with pytest.raises(BadInput, match="route"):
        TimeShare(route=("XX",))
    kth = read_swf(resolve_trace("KTH-SP2"))
    with pytest.raises(BadInput, match="field 6") as e:
        timeshare_study(kth)
    assert "start the window later" not in str(e.value)     # no job of KTH-SP2 gives it
    with pytest.raises(BadInput, match="start the window later"):
        early = blue.jobs[blue.jobs.submit < blue.jobs.submit.min() + 1].assign(avg_cpu=-1)
        timeshare_study(trace_window(blue, until=parse_moment("2000-05-01", blue.header)),
                        TimeShare(), early)
