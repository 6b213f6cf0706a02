import numpy as np
import pytest

from advisor.engine import Estimates, job_arrays
from advisor.errors import BadInput


def test_estimate_models(trace):
    w = trace("KTH-SP2")
    user = job_arrays(w, Estimates("user"))
    exact = job_arrays(w, Estimates("exact"))
    assert np.array_equal(user.estimate, w.jobs["estimate"].to_numpy())
    assert np.array_equal(exact.estimate, exact.runtime)
    # Mu'alem and Feitelson §3.3: uniform in [r, f*r], drawn from the seed
    f4 = job_arrays(w, Estimates("badness", 4, seed=7))
    r = f4.runtime
    assert (f4.estimate >= r).all() and (f4.estimate <= np.rint(4 * r)).all()
    assert np.array_equal(f4.estimate, job_arrays(w, Estimates("badness", 4, seed=7)).estimate)
    assert not np.array_equal(f4.estimate,
                              job_arrays(w, Estimates("badness", 4, seed=8)).estimate)
    spread = (f4.estimate[r > 1000] / r[r > 1000]).mean()
    assert spread == pytest.approx(2.5, abs=0.05)  # the mean of U[1, 4]
    assert np.array_equal(job_arrays(w, Estimates("badness", 1)).estimate, r)
    with pytest.raises(BadInput, match="below 1"):
        job_arrays(w, Estimates("badness", 0.5))
