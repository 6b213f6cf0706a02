"""The real Slurm clusters, one per release, each started once per session (see
slurm_cluster.py and slurm_release.py): every test that uses one runs against each release
in ``$ADVISOR_SLURM_RELEASES`` (default: all); in a parallel run each release's tests keep
to one worker, and the clusters are up at once."""
import os
import time

import pytest

from tests.integration.slurm_cluster import SlurmCluster
from tests.integration.slurm_release import release, wanted


@pytest.fixture(scope="session", params=[
    # each release's tests on one worker of a parallel run, so that one cluster per release
    # runs (two of one tree release would share its munged's socket)
    pytest.param(name, marks=pytest.mark.xdist_group(f"slurm-{name}")) for name in wanted()])
def slurm(request):
    if os.geteuid() != 0:
        pytest.skip("the Slurm integration tests start munge, mariadb, slurmdbd, slurmctld "
                    "and slurmd, which needs root: run the tests as root (CI does)")
    cluster = SlurmCluster(release=release(request.param)).start()
    print(f"\nSlurm {request.param} test cluster up in {cluster.timings['start']:.1f} s "
          f"({', '.join(f'{k} {v:.1f} s' for k, v in cluster.timings.items())})")
    yield cluster
    cluster.stop()


@pytest.fixture()
def clean_queue(slurm):
    """An empty queue before and after the test."""
    slurm.cancel_all()
    yield slurm
    slurm.cancel_all()


@pytest.fixture()
def included(clean_queue):
    """slurm.conf with ``Include advisor.conf`` as its last line; afterwards the cluster's
    own configuration again (no fragment, no job_submit.lua)."""
    slurm = clean_queue
    etc = slurm.root / "etc"
    conf, fragment, lua = etc / "slurm.conf", etc / "advisor.conf", etc / "job_submit.lua"
    original = conf.read_text()
    fragment.write_text("")
    conf.write_text(original + f"Include {fragment}\n")
    slurm.run("scontrol", "reconfigure")
    try:
        yield slurm, fragment, lua
    finally:
        slurm.cancel_all()
        conf.write_text(original)
        for path in (fragment, lua, *etc.glob("*.bak")):
            path.unlink(missing_ok=True)
        slurm.run("scontrol", "reconfigure")
        time.sleep(2)
