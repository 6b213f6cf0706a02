"""usercap/cpus: no user's running jobs hold more than ``cpus`` CPUs at once.

A site that finds one user filling the machine while others wait caps each user: in Slurm,
a QOS's MaxTRESPerUser=cpu=N, set with sacctmgr, which slurmctld enforces when
AccountingStorageEnforce names limits. A job that would pass its user's cap waits without
blocking the others. The grid proposes half and a quarter of the machine, with EASY-FCFS.
"""
from __future__ import annotations

from dataclasses import dataclass

from advisor.plugins import Context, Enactment, NoSlurmForm, PluginBase, param

from advisor_site_usercap.player import CapPlayer

#: the caps the grid proposes, as shares of the machine's CPUs
GRID_SHARES = (0.5, 0.25)


@dataclass(frozen=True)
class Params:
    cpus: int = param(0, "CPUs each user's running jobs may hold at once (0: no cap)", min=0)
    qos: str = param("normal", "the QOS whose jobs are capped (the jobs' default QOS)")


class UserCap(PluginBase):
    family = "usercap"
    name = "cpus"
    summary = "cap the CPUs each user's running jobs hold (a QOS MaxTRESPerUser)"
    Params = Params
    rank = 60

    def candidates(self, context: Context) -> tuple:
        if not context.config.limits_enforced:
            return ()          # slurmctld would not enforce the cap
        cpus = context.cluster.cpus
        return tuple(Params(cpus=max(int(cpus * share), 1)) for share in GRID_SHARES)

    def in_grid(self, params: Params, policy) -> bool:
        return policy.default_but(self.family)      # beside EASY-FCFS only

    def configure(self, config, params: Params):
        raise NoSlurmForm("a per-user cap needs each job's user, which the textbook engine "
                          "does not have: `advisor recommend` plays it in the slurm mode")

    def enact(self, params: Params, context: Context) -> Enactment:
        if params.cpus == 0:
            return Enactment()
        if not context.config.limits_enforced:
            raise NoSlurmForm("slurmctld enforces a QOS limit only with "
                              "AccountingStorageEnforce=limits")
        before = -1
        if context.snapshot is not None:
            q = next((q for q in context.snapshot.accounting.qos if q.name == params.qos), None)
            before = q.max_tres_per_user.get("cpu", -1) if q is not None else -1
        set_cap = "sacctmgr -i modify qos where name={} set MaxTRESPerUser=cpu={}"
        return Enactment(
            commands=(set_cap.format(params.qos, params.cpus),),
            undo=(set_cap.format(params.qos, before),),
            player=CapPlayer(params.qos, params.cpus), fidelity="exact",
            caveats=(f"jobs of another QOS than {params.qos} are not capped",
                     "the cap stays until the advisor changes it (sacctmgr)"))


CAP = UserCap()
