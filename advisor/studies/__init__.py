"""Studies of traces: offline replay, Lelong et al.'s tuning, sim-to-real validation, benchmarks.
"""
