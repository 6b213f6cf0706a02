"""Parsers for the text Slurm prints where it has no JSON: ``scontrol show config``,
``scontrol show partition -o`` / ``node -o``, and ``sprio`` in a fixed ``-o`` format.

Pure functions: text in, model objects out. A line that cannot be understood raises
``BadInput`` naming the command and the line.
"""
from __future__ import annotations

import re
import time

from advisor.errors import BadInput
from advisor.model import (SLURM_CONF, BackfillParameters, Node, Partition, SchedulingConfig,
                           tres_weights)

#: The sprio format the adapter asks for: every factor, '|'-separated (sprio(1) -o).
SPRIO_FORMAT = "%i|%r|%u|%Y|%S|%A|%B|%F|%J|%P|%Q|%N|%T"
#: squeue --Format for each job's exclusivity (wide columns: nothing is cut)
EXCLUSIVE_FORMAT = "JobId:24,Exclusive:12"
#: Exclusive= values that give a job whole nodes (squeue(1), 26.05: NO, NODE, USER, MCS,
#: TOPO); USER and MCS share a node among one user's or label's jobs, as OverSubscribe=USER
WHOLE_NODES = ("NODE", "TOPO")
SPRIO_FACTORS = ("site", "age", "assoc", "fairshare", "jobsize", "partition", "qos", "nice")

_UNSET = {"", "(null)", "none", "n/a"}
_UNLIMITED = {"unlimited", "infinite"}
_KEY = re.compile(r"\s+(?=[A-Za-z][A-Za-z0-9_:/.\[\]-]*=)")
_CLOCK = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")
_AMOUNT = re.compile(r"^(-?\d+)\s*(sec|min|usec|hours?|days?)?$")


def slurm_duration(text: str, where: str = "") -> int | None:
    """Seconds in a Slurm time string: ``1-00:00:00``, ``05:00`` (mm:ss), ``1:00:00``,
    ``30`` (minutes), ``30 sec``, ``0 min``; None for UNLIMITED/INFINITE/NONE."""
    t = text.strip()
    if t.lower() in _UNLIMITED or t.lower() in _UNSET:
        return None
    m = _AMOUNT.match(t)
    if m:
        unit = (m.group(2) or "min").rstrip("s")
        scale = {"sec": 1, "min": 60, "usec": 0, "hour": 3600, "day": 86400}[unit]
        return int(m.group(1)) * scale
    m = _CLOCK.match(t)
    if not m:
        raise BadInput(f"{where}: '{text}' is not a Slurm time ([days-]hh:mm:ss)")
    days, a, b, c = (int(g) if g else None for g in m.groups())
    if c is not None:
        h, mi, s = a, b, c
    elif days is not None:  # d-hh or d-hh:mm
        h, mi, s = a, b or 0, 0
    else:                   # mm:ss
        h, mi, s = 0, a, b or 0
    return (days or 0) * 86400 + h * 3600 + mi * 60 + s


def key_values(line: str) -> dict[str, str]:
    """``Key=Value Key2=Value with spaces`` (one record of ``scontrol show ... -o``)."""
    out = {}
    for token in _KEY.split(line.strip()):
        key, sep, value = token.partition("=")
        if sep:
            out[key] = value.strip()
    return out


def expand_hostlist(text: str) -> tuple[str, ...]:
    """``n[1-3,5],gpu01`` -> n1 n2 n3 n5 gpu01 (Slurm's hostlist syntax, one bracket)."""
    names: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text.strip()):
        m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", part)
        if not m:
            if part and part.lower() not in _UNSET:
                names.append(part)
            continue
        prefix, ranges, suffix = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            width = len(lo)
            for i in range(int(lo), int(hi or lo) + 1):
                names.append(f"{prefix}{i:0{width}d}{suffix}")
    return tuple(names)


def _records(text: str, what: str, key: str):
    """(where, fields) of each record of ``scontrol show WHAT -o``, which must have ``key``."""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        kv = key_values(line)
        where = f"scontrol show {what}, line {n}"
        if key not in kv:
            raise BadInput(f"{where}: no {key}= in '{line[:60]}'")
        yield where, kv


def parse_partitions(text: str, nodes: tuple[str, ...] = ()) -> tuple[Partition, ...]:
    """``scontrol show partition -o``; ``Nodes=ALL`` expands to ``nodes``."""
    return tuple(partition_record(kv, nodes, where)
                 for where, kv in _records(text, "partition", "PartitionName"))


def partition_record(kv: dict[str, str], nodes: tuple[str, ...], where: str) -> Partition:
    """One partition's ``Key=Value`` fields, as scontrol prints them or a slurm.conf
    ``PartitionName`` line writes them; ``Nodes=ALL`` expands to ``nodes``."""
    members = nodes if kv.get("Nodes", "").upper() == "ALL" else \
        expand_hostlist(kv.get("Nodes", ""))
    return Partition(
        name=kv["PartitionName"], nodes=members,
        max_time=slurm_duration(kv.get("MaxTime", "UNLIMITED"), where),
        default_time=slurm_duration(kv.get("DefaultTime", "NONE"), where),
        priority_tier=_int(kv.get("PriorityTier", "1"), where),
        priority_job_factor=_int(kv.get("PriorityJobFactor", "1"), where),
        oversubscribe=kv.get("OverSubscribe", "NO").upper(),
        default=kv.get("Default", "NO").upper() == "YES",
        state=kv.get("State", "UP").upper())


def parse_nodes(text: str) -> tuple[Node, ...]:
    """``scontrol show node -o``."""
    out = []
    for where, kv in _records(text, "node", "NodeName"):
        parts = kv.get("Partitions", "")
        out.append(Node(name=kv["NodeName"], cpus=_int(kv.get("CPUTot", "0"), where),
                        state=kv.get("State", "UNKNOWN").upper(),
                        alloc_cpus=_int(kv.get("CPUAlloc", "0"), where),
                        partitions=tuple(p for p in parts.split(",") if p),
                        memory=megabytes(kv.get("RealMemory")),
                        alloc_memory=megabytes(kv.get("AllocMem")),
                        gres=gres_counts(kv.get("Gres")),
                        alloc_gres=tres_gres(kv.get("AllocTRES"))))
    return tuple(out)


_UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024, "P": 1024 ** 3}
_PARENS = re.compile(r"\([^)]*\)")


def megabytes(text: str | None) -> int:
    """A memory amount as Slurm prints it (``8000M``, ``7.5G``, ``500``: MB) in MB; 0 when
    unset or unreadable."""
    t = (text or "").strip().upper()
    if not t or t.lower() in _UNSET:
        return 0
    unit = _UNITS.get(t[-1])
    try:
        return int(round(float(t[:-1] if unit else t) * (unit or 1)))
    except ValueError:
        return 0


def gres_counts(text: str | None) -> dict[str, int]:
    """GRES counts by name from a GRES list (``gpu:2``, ``gpu:a100:2(S:0-1)``,
    ``gres:gpu:1``, ``gres/gpu:1``, ``gpu:2(IDX:0-1),shard:4``): a typed entry counts
    toward its name; an entry without a count is one."""
    out: dict[str, int] = {}
    for item in _PARENS.sub("", text or "").split(","):
        item = item.strip()
        if item.lower() in _UNSET:
            continue
        for prefix in ("gres:", "gres/"):
            item = item[len(prefix):] if item.startswith(prefix) else item
        parts = item.split(":")
        count = int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 1
        if count > 0:
            out[parts[0]] = out.get(parts[0], 0) + count
    return out


def tres_items(text: str | None) -> dict[str, str]:
    """A TRES string (``cpu=2,mem=1000M,gres/gpu=4``) as {name: value}."""
    out = {}
    for item in (text or "").split(","):
        key, sep, value = item.partition("=")
        if sep:
            out[key] = value
    return out


def tres_gres(text: str | None) -> dict[str, int]:
    """GRES counts by name from a TRES string; typed entries (``gres/gpu:a100=2``) are
    already in their name's count."""
    return {key[5:]: int(value) for key, value in tres_items(text).items()
            if key.startswith("gres/") and ":" not in key and value.isdigit()}


def tres_memory(text: str | None) -> int:
    """The ``mem=`` of a TRES string, in MB (0 when absent)."""
    return megabytes(tres_items(text).get("mem"))


def parse_config(text: str) -> SchedulingConfig:
    """``scontrol show config`` (``Key = value`` lines) -> the scheduling configuration."""
    kv = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            kv[key.strip()] = value.strip()
    if "SchedulerType" not in kv and "PriorityType" not in kv:
        raise BadInput("scontrol show config: no SchedulerType or PriorityType line; is this "
                       "the output of 'scontrol show config'?")
    where = "scontrol show config"
    given = {key.lower(): value for key, value in kv.items()}
    defaults = SchedulingConfig()
    values = {}
    for key, name, kind, _ in SLURM_CONF:   # (the model's table of slurm.conf keys)
        text = given.get(key.lower())
        if text is None or (_unset(text) and kind in ("text", "list", "tres")):
            continue                        # Slurm's default, as the model's
        values[name] = config_value(text, kind, f"{where}, {key}",
                                    getattr(defaults, name))
    raw_sched = values.get("scheduler_parameters", {})
    return SchedulingConfig(**values, backfill=backfill_parameters(raw_sched),
                            booted=local_time(given.get("boot_time", "")))


def config_entry(text: str, key: str) -> str:
    """One line's value of ``scontrol show config`` ("" when it has none)."""
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip().lower() == key.lower():
            return "" if _unset(value.strip()) else value.strip()
    return ""


def local_time(text: str) -> int:
    """A time as Slurm's commands print it (``2026-11-28T20:27:49``, this machine's
    zone) in epoch seconds; 0 when it is not one."""
    try:
        return int(time.mktime(time.strptime(text.strip(), "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return 0


def config_value(text: str, kind: str, where: str, default):
    """A slurm.conf value as ``scontrol show config`` prints it, of a ``SLURM_CONF`` kind."""
    if kind == "int":
        return _int(text, where)
    if kind == "tres":
        return parse_tres_weights(text)
    if kind == "list":
        return _list(text)
    if kind == "bool":
        return text.lower() in ("yes", "1")
    if kind in ("minutes", "seconds", "count"):
        value = slurm_duration(text, where)
        seconds = default * (60 if kind == "count" else 1) if value is None else value
        return seconds // 60 if kind == "count" else seconds
    if kind == "megabytes":
        return megabytes(text)
    if kind == "params":
        return {} if _unset(text) else dict(_setting(s) for s in text.split(",") if s)
    return text


def parse_tres_weights(text: str) -> dict[str, float]:
    """PriorityWeightTRES as scontrol prints it ((null): none; ``model.tres_weights``)."""
    return {} if _unset(text) else tres_weights(text)


def backfill_parameters(raw: dict[str, str]) -> BackfillParameters:
    """Typed values of the SchedulerParameters the simulator models; Slurm's defaults."""
    values = {}
    for f in BackfillParameters.__dataclass_fields__.values():
        if f.name not in raw:
            continue
        text = raw[f.name]
        if f.type in (bool, "bool"):
            values[f.name] = True
        else:
            values[f.name] = _int(text, f"SchedulerParameters {f.name}")
    return BackfillParameters(**values)


def parse_exclusive(text: str) -> set[int]:
    """The ids of the jobs ``squeue --noheader --Format EXCLUSIVE_FORMAT`` marks as
    holding whole nodes."""
    whole = set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 2 or not fields[0].isdigit():
            if line.strip():
                raise BadInput(f"squeue --Format {EXCLUSIVE_FORMAT}: unexpected line "
                               f"{line.strip()[:60]!r}; is this Slurm 26.05 or newer?")
            continue
        if fields[1].upper() in WHOLE_NODES:
            whole.add(int(fields[0]))
    return whole


def parse_sprio(text: str) -> dict[tuple[int, str], dict[str, float]]:
    """``sprio -h -o SPRIO_FORMAT`` -> {(job id, partition): {priority, site, age, ...}}.
    ``sprio -l`` / ``sprio`` column tables (with their header line) are read too.

    sprio lists only jobs that can be prioritised (not held, not waiting on a dependency).
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and lines[0].split()[0] == "JOBID":
        return _sprio_table(lines)
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) != 13:
            raise BadInput(f"sprio, line {n}: {len(cells)} fields, expected 13 "
                           f"(format {SPRIO_FORMAT})")
        where = f"sprio, line {n}"
        factors = {"priority": _number(cells[3], where)}
        for name, cell in zip(SPRIO_FACTORS, cells[4:12]):
            factors[name] = _number(cell, where)
        for item in cells[12].split(","):  # weighted TRES factors, e.g. cpu=12
            key, sep, value = item.partition("=")
            if sep:
                factors[f"tres:{key.strip().lower()}"] = _number(value, where)
        out[(_int(cells[0], where), cells[1].strip())] = factors
    return out


def _sprio_table(lines: list[str]) -> dict[tuple[int, str], dict[str, float]]:
    """sprio's default/long output: columns named by the header; the first PARTITION is the
    partition's name, the second its factor; a blank TRES column may be missing."""
    header = lines[0].split()
    names = [h.lower() for h in header]
    names[names.index("partition")] = "partition_name"
    out = {}
    for n, line in enumerate(lines[1:], 2):
        cells = line.split()
        if cells[0] == "Weights":
            continue
        row = dict(zip(names, cells))
        where = f"sprio, line {n}"
        factors = {"priority": _number(row.get("priority", ""), where)}
        for name in SPRIO_FACTORS:
            if name in row:
                factors[name] = _number(row[name], where)
        out[(_int(row["jobid"], where), row["partition_name"])] = factors
    return out


def _setting(item: str) -> tuple[str, str]:
    key, _, value = item.partition("=")
    return key.strip(), value.strip()


def _unset(text: str | None) -> bool:
    return text is None or text.strip().lower() in _UNSET


def _list(text: str) -> tuple[str, ...]:
    return () if _unset(text) else tuple(s.strip() for s in text.split(",") if s.strip())


def _int(text: str, where: str) -> int:
    t = text.strip()
    if t.upper() in ("UNLIMITED", "INFINITE"):
        return 0
    try:
        return int(t)
    except ValueError:
        raise BadInput(f"{where}: '{text}' is not an integer") from None


def _number(text: str, where: str) -> float:
    t = text.strip()
    if not t:
        return 0.0
    try:
        return float(t)
    except ValueError:
        raise BadInput(f"{where}: '{text}' is not a number") from None


#: sdiag's "Backfilling stats" lines read by ``backfill_stats``, and their names there
_BACKFILL_STATS = {"Total cycles": "cycles", "Last cycle": "cycle_last_us",
                   "Mean cycle": "cycle_mean_us", "Depth Mean (try depth)": "depth_try_mean",
                   "Mean table size": "table_mean"}


def backfill_stats(text: str) -> dict[str, int]:
    """sdiag's "Backfilling stats" (text, every release): cycles since the last reset, the
    last and mean cycle in microseconds, the mean depth of jobs tried, the mean table size
    (the time slots of its plan)."""
    out: dict[str, int] = {}
    section = False
    for line in text.splitlines():
        if line.startswith("Backfilling stats"):
            section = True
        elif section and not line.strip():
            break
        elif section and ":" in line:
            key, value = (s.strip() for s in line.split(":", 1))
            if key in _BACKFILL_STATS:
                out[_BACKFILL_STATS[key]] = _int(value.split()[0], f"sdiag {key}")
    if out.get("cycles") == 0:  # sdiag prints no mean before the first cycle
        out = dict.fromkeys(_BACKFILL_STATS.values(), 0)
    missing = sorted(set(_BACKFILL_STATS.values()) - set(out))
    if missing:
        raise BadInput(f"sdiag's Backfilling stats lack {', '.join(missing)}: is "
                       "SchedulerType=sched/backfill, and sdiag's output whole?")
    return out
