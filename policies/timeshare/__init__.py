"""The timeshare family (Frachtenberg et al.): a time-sliced partition for the jobs that idle
their CPUs, and the process-level model of coscheduling it is checked against.

    plugin.py          timeshare/gang: its parameters, grid and Slurm form (a partition with
                       OverSubscribe=FORCE:mpl under PreemptMode=GANG, job_submit.lua routing)
    inputs.py          each user's class by CPU efficiency, from the history
    player.py          the slurm mode's play of the time-sliced partition (``PLAYER``)
    kernel_gang.py     the job-level gang partition, compiled
    kernel_cosched.py  the process-level model (FCFS, GS, SB, FCS), compiled: its event loop
    kernel_cosched_state.py   its state and event heap
    kernel_cosched_cpu.py     its local scheduler, one CPU's
    kernel_cosched_events.py  what each of its events does
    kernel_matrix.py   its Ousterhout matrix
    study.py           a time-sliced partition over a trace (``advisor timeshare``)
    study_cosched.py   the paper's scenarios on the model (``advisor coscheduling``)
    view.py            the studies and the classes for the terminal
    command.py         ``advisor classes``, ``advisor coscheduling``, ``advisor timeshare``
    bench.py           the dynamic workload of the paper's §5 on the model
"""
