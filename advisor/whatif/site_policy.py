"""The site's own priority policy, and the candidates that would replace it.

A site running priority/multifactor with a fair-share, QOS, association or partition weight
has a policy: shares between groups, tiers for its funders, partitions that go first. A
candidate whose Slurm form changes one of those weights (every ordering zeroes them, so
that it alone orders) replaces that policy, and no admin applies a change that deletes
fair share for a few per cent of mean wait. So by default such a candidate is left out of
the grid, refused when named, and never recommended or applied; ``replace_site_policy``
(``--replace-site-policy``) lets them in.
"""
from __future__ import annotations

from advisor.errors import BadInput
from advisor.model import Cluster, SchedulingConfig
from advisor.plugins.enactment import SITE_POLICY_WEIGHTS, site_policy

#: how the reasons name the setting that allows them
ALLOW = "--replace-site-policy (replace_site_policy = true in advisor.toml)"


def overridden(base: SchedulingConfig, config: SchedulingConfig,
               cluster: Cluster) -> tuple[str, ...]:
    """The slurm.conf keys of ``base``'s policy weights (``site_policy``) that ``config``
    changes; all of them when it leaves priority/multifactor."""
    policy = site_policy(base, cluster)
    leaves = config.priority_type != base.priority_type
    return tuple(SITE_POLICY_WEIGHTS[f] for f, w in policy.items()
                 if leaves or getattr(config, f) != w)


def described(base: SchedulingConfig, cluster: Cluster) -> str:
    """The policy in words: 'PriorityWeightFairshare=1000, PriorityWeightQOS=500'."""
    return ", ".join(f"{SITE_POLICY_WEIGHTS[f]}={w}"
                     for f, w in site_policy(base, cluster).items())


def keep_site_policy(candidates: list, named: bool, base: SchedulingConfig,
                     cluster: Cluster) -> tuple[list, str]:
    """``candidates`` without those that change the site's policy (``overrides``), and
    what was left out, in words ("" when nothing). A candidate the user ``named`` that
    would change it is refused (BadInput): it was asked for by name."""
    out = [c for c in candidates if not c.overrides]
    dropped = [c for c in candidates if c.overrides]
    if not dropped:
        return out, ""
    if named:
        c = dropped[0]
        raise BadInput(f"{c.spec} would change the site's priority policy "
                       f"({', '.join(c.overrides)} of {described(base, cluster)}); "
                       f"{ALLOW} allows it")
    return out, (f"left out: {len(dropped)} candidates that would change the site's "
                 f"priority policy ({described(base, cluster)}); {ALLOW} lets them in")
