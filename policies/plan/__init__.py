"""The plan family (Zheng et al.): plan-based scheduling by simulated annealing.

    plugin.py    plan/sa: its parameters, grid, engine setting and Slurm form (site factors)
    kernel.py    the compiled annealing and the replay that re-plans at every event
    mechanic.py  the textbook engine's setting (``Plans``), which runs the kernel
    study.py     the paper's study over a trace (``advisor plans``), and how Slurm runs a plan
    view.py      the study for the terminal, and its heatmaps
    command.py   the ``advisor plans`` command
    bench.py     the study over whole traces, beside the paper's tables
"""
