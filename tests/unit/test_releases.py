"""The table of Slurm releases (advisor/releases.py): each version read and played as its
row says, the behaviours from the micro release they appear in, a version the table does
not know played as its nearest older row with a note, and the harness running exactly the
releases the table calls tested."""
import pytest

from advisor.adapters import slurm_json
from advisor.releases import (BEHAVIOURS, RELEASES, SCHEMAS, TESTED, parse_version,
                              release_of, schema_release)
from tests.integration.slurm_release import RELEASES as HARNESS


def test_rows_and_schemas_ascend_and_each_schema_names_one_release():
    versions = [r.version() for r in RELEASES]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert list(SCHEMAS) == sorted(SCHEMAS) and len(set(SCHEMAS)) == len(SCHEMAS)
    for r in RELEASES:
        assert schema_release(r.schema) is r
        doc = {"meta": {"plugin": {"data_parser": f"data_parser/{r.schema}"}}}
        assert slurm_json.schema(doc, "squeue --json") == r.schema


def test_the_harness_runs_the_tested_releases():
    assert TESTED == HARNESS


@pytest.mark.parametrize("version,row,plays,note", [
    ("22.05.8", "22.05", set(), ""),
    ("24.11.5", "24.11", {"resv_end_rounded_up"}, ""),
    ("25.05.0", "25.05", {"resv_end_rounded_up"}, "not run by the advisor's tests"),
    ("25.05.3", "25.05", {"resv_end_rounded_up", "start_at_relevant_end"}, "between 24.11"),
    ("26.05.5", "26.05", {"resv_end_rounded_up", "start_at_relevant_end",
                          "one_node_first_fit"}, ""),
    ("27.05.1", "26.05", {"resv_end_rounded_up", "start_at_relevant_end",
                          "one_node_first_fit"}, "played as 26.05"),
    ("21.08.8", "22.05", set(), "older than any release"),
    ("", "22.05", set(), ""),
])
def test_a_version_is_read_and_played_as_its_row(version, row, plays, note):
    played = release_of(version)
    assert played.release.name == row
    assert set(played.behaviours) == plays
    assert (note in played.note) if note else played.note == ""


def test_behaviours_name_a_version_and_a_source():
    for b in BEHAVIOURS:
        assert parse_version(b.since) is not None and b.source and b.what
