import gzip

import pandas as pd
import pytest

from advisor.adapters.swf import format_swf, read_swf, write_swf
from advisor.cleaning import CleaningOptions
from advisor.errors import BadInput, SourceUnavailable, TraceFormatError
from advisor.model import SWF_FIELDS
from advisor.adapters.swf import BUNDLED_TRACES
from tests.helpers import FIXTURES

#: the header and first 1,500 jobs of Archive logs with odd headers (their README)
HEADERS = FIXTURES / "archive-headers"

# Header lines as they stand in real PWA logs (CTC, SDSC-DS, UniLu-Gaia, Sandia-Ross, CEA).
ODD_HEADER = """; Version: SWF v2
;       MaxJobs: 3
; MaxNodes: 338 (batch partition; 512 total)
; MaxProcs: 1664 (72, 1368, 224)
; UnixStartTime: 835823160
; TimeZoneString: US/Eastern
; Partition: 1 \ufffd\ufffd odd bytes
; Note: uses the EASY scheduler
; Note: THIS IS A CLEANED VERSION OF THE LOG!
"""
JOBS = """1 0 5 100 4 -1 -1 4 200 -1 1 7 1 -1 1 -1 -1 -1
2 10 0 50 2 12.5 -1 -1 40 -1 1 8 1 -1 1 -1 -1 -1
3 20 3 -1 8 -1 -1 8 300 -1 0 7 1 -1 1 -1 -1 -1
4 30 0 10 2000 -1 -1 2000 60 -1 1 9 1 -1 1 -1 -1 -1
5 40 0 10 0 -1 -1 -1 -1 -1 1 9 1 -1 1 -1 -1 -1
"""


def write(tmp_path, text, name="t.swf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_header_oddities(tmp_path):
    w = read_swf(write(tmp_path, ODD_HEADER + JOBS))
    h = w.header
    assert (h.max_procs, h.max_nodes, h.unix_start_time) == (1664, 338, 835823160)
    assert h.time_zone_string == "US/Eastern"
    assert h.fields["MaxJobs"] == "3" and h.fields["Version"] == "SWF v2"
    assert h.notes == ("uses the EASY scheduler", "THIS IS A CLEANED VERSION OF THE LOG!")
    assert w.machine.procs == 1664


def test_fields_and_derived_columns(tmp_path):
    w = read_swf(write(tmp_path, ODD_HEADER + JOBS), cleaning=CleaningOptions(drop_invalid=False))
    j = w.jobs.set_index("job_id")
    assert list(w.jobs.columns[:18]) == list(SWF_FIELDS)
    assert j.loc[2, "avg_cpu"] == 12.5
    # processors: requested if > 0 else allocated; estimate: request, else runtime
    assert j.loc[2, "procs"] == 2 and j.loc[1, "procs"] == 4
    assert j.loc[1, "estimate"] == 200 and j.loc[5, "estimate"] == 10


def test_cleaning_rules_are_named_and_counted(tmp_path):
    opts = CleaningOptions(drop_oversize=True, drop_overruns=True)
    w = read_swf(write(tmp_path, ODD_HEADER + JOBS), procs=64, cleaning=opts)
    # job 3 has runtime -1, job 5 no processors: invalid; job 4 is wider than 64;
    # job 2 ran 50 s on a 40 s request.
    assert w.cleaning.removed == {"invalid": 2, "oversize": 1, "overruns": 1}
    assert w.jobs["job_id"].tolist() == [1]
    assert w.cleaning.jobs_read == 5 and w.cleaning.jobs_kept == 1


@pytest.mark.parametrize("line, field, problem", [
    ("6 50 0 10 1 -1 -1 1 60 -1 1 9 1 -1 1 -1 -1", "think_time", "expected 18 fields, found 17"),
    ("6 50 0 10 1 -1 -1 1 60 -1 1 9 1 -1 1 -1 -1 -1 7", "think_time", "found 19"),
    ("6 50 0 ten 1 -1 -1 1 60 -1 1 9 1 -1 1 -1 -1 -1", "runtime", "'ten' is not a number"),
    ("6 50 0 10 1.5 -1 -1 1 60 -1 1 9 1 -1 1 -1 -1 -1", "alloc_procs", "not an integer"),
    ("6 50 0 10 1 -1 -1 1 nan -1 1 9 1 -1 1 -1 -1 -1", "req_time", "not a finite number"),
])
def test_malformed_line_names_file_line_and_field(tmp_path, line, field, problem):
    path = write(tmp_path, ODD_HEADER + JOBS + line + "\n")
    with pytest.raises(TraceFormatError) as e:
        read_swf(path)
    assert e.value.line == ODD_HEADER.count("\n") + JOBS.count("\n") + 1
    assert e.value.field == field and problem in str(e.value) and str(path) in str(e.value)


def test_unknown_machine_size_and_missing_file(tmp_path):
    with pytest.raises(BadInput, match="--procs"):
        read_swf(write(tmp_path, JOBS))
    assert len(read_swf(write(tmp_path, JOBS), procs=4000, cleaning=CleaningOptions())) == 3
    with pytest.raises(SourceUnavailable):
        read_swf(tmp_path / "absent.swf")


def test_gzip_by_content(tmp_path):
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress((ODD_HEADER + JOBS).encode()))
    assert len(read_swf(path, cleaning=CleaningOptions(drop_invalid=False))) == 5


@pytest.mark.parametrize("name", ["KTH-SP2", "CTC-SP2", "SDSC-SP2"])
def test_round_trip_of_a_real_trace(tmp_path, name):
    src = next(BUNDLED_TRACES.glob(f"{name}*"))
    original = read_swf(src, cleaning=CleaningOptions(drop_invalid=False))
    out = tmp_path / "copy.swf.gz"
    write_swf(original, out)
    again = read_swf(out, cleaning=CleaningOptions(drop_invalid=False))
    pd.testing.assert_frame_equal(original.jobs, again.jobs)
    assert again.header.lines == original.header.lines
    assert format_swf(again) == format_swf(original)


def test_bundled_headers():
    sizes = {"KTH-SP2": 100, "CTC-SP2": 338, "SDSC-SP2": 128, "SDSC-BLUE": 1152}
    for name, procs in sizes.items():
        w = read_swf(next(BUNDLED_TRACES.glob(f"{name}*")))
        assert w.machine.procs == procs and w.header.unix_start_time > 8e8


@pytest.mark.parametrize("name, procs", [("CEA-Curie", 93312), ("UniLu-Gaia", 2004),
                                         ("RICC", 8192), ("Sandia-Ross", 1524)])
def test_odd_archive_headers(name, procs):
    w = read_swf(next(HEADERS.glob(f"{name}*.swf.gz")))
    assert w.machine.procs == procs and len(w) > 1000
