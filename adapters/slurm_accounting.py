"""QOS, associations and the fair-share tree from slurmdbd's commands, to model objects.

``sacctmgr show qos`` and ``sacctmgr show assoc`` give the limits (parsable, with the
fields asked for by name, so that a release's extra columns do not move them); ``sshare``
gives the shares and the decayed usage slurmctld holds now; ``sacctmgr show event`` the
times nodes were out of service. Pure parsers and one reader; the reader runs only where
slurmctld keeps accounting in slurmdbd.
"""
from __future__ import annotations

from advisor.adapters.slurm_text import expand_hostlist, local_time, megabytes
from advisor.errors import BadInput
from advisor.model import Accounting, Association, NodeEvent, Qos

QOS_FIELDS = ("Name", "Priority", "MaxJobsPU", "MaxTRESPU", "GrpJobs", "GrpTRES")
ASSOC_FIELDS = ("Account", "User", "ParentName", "Share", "MaxJobs", "GrpJobs", "GrpTRES",
                "QOS", "DefaultQOS")
#: (FairShare last: recordings made before it was read have one field less)
SSHARE_FIELDS = ("Account", "User", "RawShares", "RawUsage", "FairShare")


def tres_limits(text: str) -> dict[str, int]:
    """``cpu=16,gres/gpu=2,mem=8G`` -> {'cpu': 16, 'gres/gpu': 2, 'mem': 8192} (MB)."""
    out = {}
    for item in (text or "").split(","):
        key, sep, value = item.partition("=")
        if not sep:
            continue
        amount = megabytes(value) if key == "mem" else _count(value, key)
        if amount >= 0:
            out[key] = amount
    return out


def _count(text: str, where: str) -> int:
    t = text.strip()
    if not t:
        return -1
    try:
        return int(t)
    except ValueError:
        raise BadInput(f"sacctmgr: limit {where}='{text}' is not a count") from None


def _rows(text: str, names: tuple[str, ...], command: str,
          optional: int = 0) -> list[dict[str, str]]:
    """Each line's fields by name; the last ``optional`` names may be missing (empty)."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) < len(names) - optional:
            raise BadInput(f"{command}: a line with {len(cells)} fields where {len(names)} "
                           f"were asked for: {line[:80]!r}")
        rows.append(dict(zip(names, cells + [""] * (len(names) - len(cells)))))
    return rows


def parse_qos(text: str) -> tuple[Qos, ...]:
    """``sacctmgr --noheader --parsable2 show qos format=<QOS_FIELDS>``."""
    out = []
    for r in _rows(text, QOS_FIELDS, "sacctmgr show qos"):
        out.append(Qos(name=r["Name"], priority=max(_count(r["Priority"], "Priority"), 0),
                       max_jobs_per_user=_count(r["MaxJobsPU"], "MaxJobsPU"),
                       max_tres_per_user=tres_limits(r["MaxTRESPU"]),
                       grp_jobs=_count(r["GrpJobs"], "GrpJobs"),
                       grp_tres=tres_limits(r["GrpTRES"])))
    return tuple(out)


def parse_associations(text: str,
                       usage: dict[tuple[str, str], tuple[float, float]] | None = None
                       ) -> tuple[Association, ...]:
    """``sacctmgr --noheader --parsable2 show assoc format=<ASSOC_FIELDS>`` (one cluster's),
    each with its raw usage and fair-share factor from ``usage`` (``parse_sshare``)."""
    out = []
    for r in _rows(text, ASSOC_FIELDS, "sacctmgr show assoc"):
        account, user = r["Account"], r["User"]
        shares = r["Share"].strip()
        out.append(Association(
            account=account, user=user, parent=r["ParentName"] if not user else account,
            shares=int(shares) if shares.isdigit() else 1,
            max_jobs=_count(r["MaxJobs"], "MaxJobs"), grp_jobs=_count(r["GrpJobs"], "GrpJobs"),
            grp_tres=tres_limits(r["GrpTRES"]),
            qos=tuple(q for q in r["QOS"].split(",") if q), default_qos=r["DefaultQOS"],
            raw_usage=(usage or {}).get((account, user), (0.0, -1.0))[0],
            fairshare=(usage or {}).get((account, user), (0.0, -1.0))[1]))
    return tuple(out)


def parse_sshare(text: str) -> dict[tuple[str, str], tuple[float, float]]:
    """``sshare --noheader --parsable2 --all --format=<SSHARE_FIELDS>``: each association's
    decayed raw usage and (a user's) fair-share factor now (-1: none) by (account, user);
    accounts are indented by depth."""
    out = {}
    for r in _rows(text, SSHARE_FIELDS, "sshare", optional=1):
        usage, factor = r["RawUsage"].strip(), r["FairShare"].strip()
        try:
            out[(r["Account"].strip(), r["User"].strip())] = (
                float(usage or 0), float(factor) if factor else -1.0)
        except ValueError:
            raise BadInput(f"sshare: RawUsage '{usage}' or FairShare '{factor}' is not a "
                           "number") from None
    return out


def read_accounting(run, cluster: str) -> Accounting:
    """The accounting in effect, through ``run`` (``SlurmCommands.run``)."""
    qos = parse_qos(run("sacctmgr", "--noheader", "--parsable2", "show", "qos",
                        "format=" + ",".join(QOS_FIELDS)))
    usage = parse_sshare(run("sshare", "--noheader", "--parsable2", "--all",
                             "--format=" + ",".join(SSHARE_FIELDS)))
    where = [f"cluster={cluster}"] if cluster else []
    assocs = parse_associations(run("sacctmgr", "--noheader", "--parsable2", "show", "assoc",
                                    *where, "format=" + ",".join(ASSOC_FIELDS)), usage)
    return Accounting(qos=qos, associations=assocs)


#: the fields of ``sacctmgr show event`` the check reads (node events)
EVENT_FIELDS = ("NodeName", "Start", "End", "State", "Reason")


def parse_events(text: str) -> tuple[NodeEvent, ...]:
    """``sacctmgr --noheader --parsable2 show event Event=Node format=<EVENT_FIELDS>``:
    each node's time out of service (its times in this machine's zone, as sacctmgr
    prints them; an End of Unknown: still out). A line naming several nodes is one event
    each."""
    out = []
    for r in _rows(text, EVENT_FIELDS, "sacctmgr show event"):
        start, end = _event_time(r["Start"]), _event_time(r["End"])
        if start is None:
            raise BadInput(f"sacctmgr show event: Start '{r['Start']}' is not a time "
                           "(YYYY-MM-DDThh:mm:ss)")
        for node in expand_hostlist(r["NodeName"]):
            out.append(NodeEvent(node=node, start=start, end=-1 if end is None else end,
                                 state=r["State"].strip().upper(), reason=r["Reason"]))
    return tuple(out)


def _event_time(text: str) -> int | None:
    return local_time(text) or None


#: the fields of ``sacctmgr list transactions`` the check reads
TRANSACTION_FIELDS = ("Time", "Action", "Where", "Info")
#: the transactions that change what decides starts (shares, limits, QOS)
RULE_ACTIONS = ("Modify Associations", "Add Associations", "Remove Associations",
                "Modify QOS", "Add QOS", "Remove QOS")


def parse_transactions(text: str) -> tuple[tuple[int, str], ...]:
    """``sacctmgr --noheader --parsable2 list transactions format=<TRANSACTION_FIELDS>``:
    (when, what) of each change to associations or QOS."""
    out = []
    for r in _rows(text, TRANSACTION_FIELDS, "sacctmgr list transactions"):
        when = _event_time(r["Time"])
        if when is not None and r["Action"] in RULE_ACTIONS:
            info = r["Info"].strip()
            out.append((when, f"sacctmgr {r['Action']} {r['Where']}"
                              + (f": {info[:60]}" if info else "")))
    return tuple(out)
