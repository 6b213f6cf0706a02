"""The plain-Python EASY that ``advisor bench`` times the replay against gives the compiled
engine's schedule, job for job: a second, independent implementation of the same rules."""
from advisor.adapters.swf import read_swf, resolve_trace
from advisor import plain_easy
from advisor.engine import EngineConfig, job_arrays, run


def test_plain_easy_gives_the_engines_schedule_on_kth_sp2():
    path = str(resolve_trace("KTH-SP2"))
    machine, jobs = plain_easy.read(path)
    workload = read_swf(path)
    assert machine == workload.machine.procs and len(jobs) == len(workload)
    engine, _ = run(job_arrays(workload), EngineConfig())
    plain = plain_easy.easy(machine, jobs)
    assert engine.tolist() == plain
    assert sum(s > j[0] for s, j in zip(plain, jobs)) > 1000  # jobs did wait: a real test
