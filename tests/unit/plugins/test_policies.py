import pytest

from advisor.engine import EngineConfig
from advisor.errors import BadInput
from advisor.plugins.registry import registry
from advisor.units import parse_duration
from advisor.plugins.spec import parse_policy


def test_every_family_is_registered_through_entry_points():
    names = set(registry().plugins)
    assert {f"ordering/{o}" for o in ("fcfs", "lcfs", "spf", "lpf", "sqf", "lqf", "exp")} <= names
    assert {"backfill/none", "backfill/easy", "backfill/depth", "backfill/conservative",
            "threshold/queue"} <= names


@pytest.mark.parametrize("spec, label, config", [
    ("easy:SPF:SPF", "EASY-SPF-SPF", EngineConfig(primary="SPF")),
    ("easy:spf", "EASY-SPF-SPF", EngineConfig(primary="SPF")),
    ("easy:FCFS:FCFS:T=20h", "EASY-FCFS-FCFS T=20h", EngineConfig(threshold=72000)),
    ("conservative:FCFS", "CONSERVATIVE-FCFS", EngineConfig(backfill="conservative")),
    ("depth:LQF:EXP:k=3", "DEPTH-LQF-EXP k=3",
     EngineConfig(backfill="depth", depth=3, primary="LQF", secondary="EXP")),
    ("none", "NONE-FCFS", EngineConfig(backfill="none")),
    ("easy:FCFS:shadow=first", "EASY-FCFS-FCFS shadow=first", EngineConfig(shadow="first")),
])
def test_specs(spec, label, config):
    policy = parse_policy(spec)
    assert policy.label == label and policy.engine_config() == config


@pytest.mark.parametrize("spec, message", [
    ("", "empty policy"),
    ("greedy:FCFS", "unknown backfill policy 'greedy'"),
    ("easy:FIFO", "unknown ordering policy 'FIFO'"),
    ("easy:FCFS:SPF:LQF", "at most 2"),
    ("easy:FCFS:z=1", "no 'z' parameter"),
    ("depth:FCFS:k=0", "at least 1"),
    ("depth:FCFS:k=two", "whole number"),
    ("easy:FCFS:shadow=some", "choose one of all, first"),
    ("easy:FCFS:T=soon", "not a duration"),
])
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(BadInput, match=message):
        parse_policy(spec)


def test_durations():
    assert [parse_duration(x) for x in ("3600", "90m", "20h", "2d", "1.5h")] == \
        [3600, 5400, 72000, 172800, 5400]
