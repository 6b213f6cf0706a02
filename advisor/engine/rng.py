"""A seeded generator for compiled kernels: xorshift64* with splitmix64 seeding.

The state is a one-element uint64 array passed along, so a kernel owns its stream and no
global random state is touched (numba's np.random is process-wide).
"""
from __future__ import annotations

import numpy as np
from numba import njit

_MULT = np.uint64(0x2545F4914F6CDD1D)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def seed_state(seed, stream):
    """A non-zero generator state for (seed, stream): splitmix64 of both."""
    z = np.uint64(seed) * _GOLDEN + np.uint64(stream) + np.uint64(1)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return z if z != np.uint64(0) else _GOLDEN


@njit(cache=True)
def uniform(state):
    """A float in [0, 1) from xorshift64*, advancing ``state`` (a one-element array)."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return float((x * _MULT) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
