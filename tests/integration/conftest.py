"""The real Slurm cluster, started once per session (see slurm_cluster.py)."""
import os

import pytest

from tests.integration.slurm_cluster import SlurmCluster


@pytest.fixture(scope="session")
def slurm():
    if os.geteuid() != 0:
        pytest.skip("the Slurm integration tests start munge, mariadb, slurmdbd, slurmctld "
                    "and slurmd, which needs root: run the tests as root (CI does)")
    cluster = SlurmCluster().start()
    print(f"\nSlurm test cluster up in {cluster.timings['start']:.1f} s "
          f"({', '.join(f'{k} {v:.1f} s' for k, v in cluster.timings.items())})")
    yield cluster
    cluster.stop()


@pytest.fixture()
def clean_queue(slurm):
    """An empty queue before and after the test."""
    slurm.cancel_all()
    yield slurm
    slurm.cancel_all()
