"""The ordering family (Lelong et al.): the queue's order, which the compiled core plays by
name or by a key, and the study that tunes it.

    plugin.py   ordering/*: FCFS, LCFS, SPF, LPF, SQF, LQF, EXP and their Slurm forms
    study.py    the tuning study over a trace's weeks (``advisor tune``)
    view.py     the study for the terminal, and its plot
    command.py  the ``advisor tune`` command
"""
