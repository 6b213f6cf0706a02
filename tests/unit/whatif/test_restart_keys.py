"""Which slurm.conf changes need slurmctld restarted (up to 23.02), so that --apply refuses
them and the written commands say so."""
from __future__ import annotations

import pytest

from advisor.whatif.slurmconf import needs_restart


@pytest.mark.parametrize("key", ["PriorityType", "SchedulerType", "SelectType", "PreemptType",
                                 "PreemptMode", "SchedulerTimeSlice"])
def test_plugin_and_gang_settings_need_a_restart_up_to_23_02(key):
    assert needs_restart([key], "22.05.8")
    assert needs_restart([key], "23.02.7")
    assert needs_restart([key], "")                 # unknown: the safe answer
    assert not needs_restart([key], "23.11.1")      # reconfigure restarts the daemons


def test_scheduler_parameters_and_weights_only_need_a_reconfigure():
    assert not needs_restart(["SchedulerParameters", "PriorityWeightAge"], "22.05.8")
