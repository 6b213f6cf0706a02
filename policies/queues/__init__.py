"""The queues family (Lawson and Smirni): P runtime-class queues, multiple-queue backfilling.

    plugin.py    queues/runtime: its parameters, grid, engine setting and Slurm form
                 (partitions by MaxTime, job_submit.lua routing)
    kernel.py    the compiled multiple-queue backfilling
    mechanic.py  the textbook engine's setting (``RuntimeClasses``), which runs the kernel
    study.py     the paper's online study over a trace (``advisor queues``)
    view.py      the study for the terminal, and its plot
    command.py   the ``advisor queues`` command
    bench.py     the study on the paper's four traces, beside its Tables 2 and 3
"""
