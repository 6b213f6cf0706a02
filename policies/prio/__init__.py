"""The prio family: priority/multifactor's own settings, one slurm.conf key at a time.

    plugin.py    prio/age, jobsize, fairshare, qos, partition, decay: knobs
                 (``advisor.plugins.Knob``), their grid from the site's weights and queue
    inputs.py    what it reads of a snapshot: the oldest wait, fair share played,
                 the pending jobs' QOS and partition factors

docs/native.md.
"""
