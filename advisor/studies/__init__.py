"""Studies of traces: offline replay, seed 002's tuning, sim-to-real validation, benchmarks."""
