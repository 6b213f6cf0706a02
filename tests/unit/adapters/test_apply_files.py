"""--apply's checks on slurm.conf and the fragment it writes (no cluster needed; the
apply itself is tested against the real slurmctld in tests/integration/test_apply.py)."""
import pytest

from advisor.adapters.slurm_apply import check_include, merged_fragment
from advisor.errors import BadInput
from advisor.whatif.slurmconf import SlurmChange


def _change(**diff):
    return SlurmChange("easy:SPF", "EASY-SPF", "exact", (), diff, "", "", (), False)


def test_include_must_exist_and_come_after_the_keys_it_overrides(tmp_path):
    conf, frag = tmp_path / "slurm.conf", tmp_path / "advisor.conf"
    keys = {"PriorityWeightAge": ("1000", "0")}
    conf.write_text("PriorityWeightAge=1000\n")
    with pytest.raises(BadInput, match="does not include .*advisor.conf: add 'Include"):
        check_include(conf, frag, keys)
    conf.write_text("PriorityWeightAge=1000\ninclude advisor.conf  # relative to slurm.conf\n")
    check_include(conf, frag, keys)
    conf.write_text(f"Include {frag}\nPriorityWeightAge=1000\n")
    with pytest.raises(BadInput, match="sets PriorityWeightAge after 'Include"):
        check_include(conf, frag, keys)
    conf.write_text(f"# Include {frag}\nPriorityWeightAge=1000\n")
    with pytest.raises(BadInput, match="does not include"):
        check_include(conf, frag, keys)


def test_fragment_keeps_earlier_keys_and_takes_new_values():
    old = "# slurm-policy-advisor: ...\nPriorityWeightAge=0\nSchedulerParameters=bf_interval=1\n"
    text = merged_fragment(old, _change(SchedulerParameters=("bf_interval=1", "bf_interval=1,"
                                                             "bf_job_part_count_reserve=1")))
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert body == ["PriorityWeightAge=0",
                    "SchedulerParameters=bf_interval=1,bf_job_part_count_reserve=1"]
    assert text.startswith("# slurm-policy-advisor: EASY-SPF (easy:SPF)")
