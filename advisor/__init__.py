"""slurm-policy-advisor: which Slurm scheduling configuration serves a cluster best now,
proven by simulation. The command line is ``advisor`` (``advisor.cli``)."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("slurm-policy-advisor")
except PackageNotFoundError:         # a source tree that was never installed
    __version__ = "unknown"
