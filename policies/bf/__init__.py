"""The bf family: the backfill scheduler's SchedulerParameters, one at a time.

    plugin.py    bf/window, max_job_test, max_job_user, max_job_part, busy_nodes,
                 resolution, interval, continue, max_time: knobs
                 (``advisor.plugins.Knob``), their grid from the site's configuration
                 and queue
    inputs.py    what it reads of a snapshot: how far limits reach, who holds the
                 depth backfill tries

docs/native.md.
"""
