"""usercap: a site's own policy family, a cap on the CPUs each user's jobs hold at once.

    plugin.py  usercap/cpus: its parameters, its grid, its Slurm form (a QOS limit set by
               sacctmgr, put back by a failed --apply)
    player.py  its mechanic in the slurm mode: the snapshot played with the cap in its QOS
"""
