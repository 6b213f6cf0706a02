"""Standard Workload Format (SWF): read (``.swf`` or ``.swf.gz``), write, clean.

The SWF definition (Parallel Workloads Archive) has 18 whitespace-separated numeric fields
per job and ``;`` header/comment lines; ``-1`` means missing. Header values are not always
plain numbers (``; MaxNodes: 338 (batch partition; 512 total)``), keys may be right-aligned
(``;       MaxJobs: 51987``) and some headers hold odd bytes (CEA-Curie): we take the leading
integer, match ``;\\s*Key:`` and decode with replacement characters.
"""
from __future__ import annotations

import io
import math
import os
import re
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd

from advisor.adapters.files import atomic_write, read_bytes
from advisor.cleaning import CleaningOptions, clean
from advisor.errors import BadInput, SourceUnavailable, TraceFormatError
from advisor.model import (SWF_FIELDS, SWF_FLOAT_FIELDS, Machine, TraceHeader, Workload,
                           derive_columns, printable, sort_jobs)

_HEADER_RE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_ ]*?)\s*:\s?(.*)$")
_LEADING_INT = re.compile(r"^\s*(-?\d+)")
_INT_COLUMNS = [i for i, f in enumerate(SWF_FIELDS) if f not in SWF_FLOAT_FIELDS]


def _leading_int(value: str | None) -> int | None:
    m = _LEADING_INT.match(value or "")
    return int(m.group(1)) if m else None


def parse_header(lines: list[str]) -> TraceHeader:
    fields: dict[str, str] = {}
    notes: list[str] = []
    for line in lines:
        m = _HEADER_RE.match(line)
        if not m:
            continue
        key, value = m.group(1).strip(), printable(m.group(2).strip())
        if key == "Note":
            notes.append(value)
        else:
            fields.setdefault(key, value)
    return TraceHeader(
        max_procs=_leading_int(fields.get("MaxProcs")),
        max_nodes=_leading_int(fields.get("MaxNodes")),
        unix_start_time=_leading_int(fields.get("UnixStartTime")),
        time_zone_string=fields.get("TimeZoneString"),
        notes=tuple(notes), fields=fields, lines=tuple(lines),
    )


def _locate_error(path: str, text: str) -> TraceFormatError:
    """Slow path: find the first bad line, so the error names line and field exactly."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        tokens = stripped.split(";", 1)[0].split()
        if len(tokens) != len(SWF_FIELDS):
            name = SWF_FIELDS[min(len(tokens), len(SWF_FIELDS) - 1)]
            return TraceFormatError(
                path, lineno, name, f"expected {len(SWF_FIELDS)} fields, found {len(tokens)}",
                "each job line of an SWF file has 18 numbers; -1 marks a missing value")
        for name, tok in zip(SWF_FIELDS, tokens):
            try:
                value = float(tok)
            except ValueError:
                return TraceFormatError(path, lineno, name, f"'{tok}' is not a number",
                                        "use -1 for a missing value")
            if not math.isfinite(value):
                return TraceFormatError(path, lineno, name, f"'{tok}' is not a finite number",
                                        "use -1 for a missing value")
            if name not in SWF_FLOAT_FIELDS and value != int(value):
                return TraceFormatError(path, lineno, name, f"'{tok}' is not an integer",
                                        "this SWF field holds whole numbers")
    return TraceFormatError(path, 0, "?", "the file could not be parsed as SWF")


def _parse_body(path: str, text: str) -> pd.DataFrame:
    try:
        table = pd.read_csv(io.StringIO(text), sep=r"\s+", comment=";", header=None,
                            names=list(SWF_FIELDS), dtype="float64", engine="c")
    except (ValueError, pd.errors.ParserError) as e:
        raise _locate_error(path, text) from e
    values = table.to_numpy()
    ints = values[:, _INT_COLUMNS]
    if values.size and (not np.isfinite(values).all() or (ints != np.floor(ints)).any()):
        raise _locate_error(path, text)
    return pd.DataFrame({f: values[:, i] if f in SWF_FLOAT_FIELDS else
                         values[:, i].astype(np.int64) for i, f in enumerate(SWF_FIELDS)})


def read_swf(path: str | os.PathLike, *, procs: int | None = None,
             cleaning: CleaningOptions | None = None) -> Workload:
    """Read an SWF trace. ``procs`` overrides the header's MaxProcs (then MaxNodes).

    Raises TraceFormatError (file, line, field) for malformed data, BadInput when the machine
    size is unknown, SourceUnavailable when the file cannot be read.
    """
    path = str(path)
    text = _text(path, read_bytes(path))
    header_lines = [ln for ln in text.splitlines() if ln.lstrip().startswith(";")]
    header = parse_header(header_lines)
    jobs = _parse_body(path, text)
    if jobs.empty:
        raise BadInput(f"{path} holds no jobs: an SWF trace needs at least one job line "
                       "(18 numbers)")
    size = procs or header.max_procs or header.max_nodes
    if not size or size <= 0:
        raise BadInput(f"{path}: the header gives no MaxProcs or MaxNodes; "
                       "give the machine size with --procs N")
    name = header.fields.get("Computer") or os.path.basename(path)
    workload = Workload(jobs=sort_jobs(derive_columns(jobs)), machine=Machine(int(size), name),
                        header=header, source=path)
    cleaned = clean(workload, cleaning or CleaningOptions())
    if cleaned.jobs.empty:
        raise BadInput(f"{path}: cleaning dropped all {len(workload.jobs)} jobs (no "
                       "processors, negative runtimes, or the filters asked for): see "
                       "--keep-invalid, or give --procs if the machine size is wrong")
    return cleaned


def _text(path: str, raw: bytes) -> str:
    """An SWF file's text; BadInput for binary data, which no line-by-line message would
    name."""
    if b"\0" in raw[:65536] or raw[:4096].decode("utf-8", errors="replace").count(
            "\ufffd") > 8:
        raise BadInput(f"{path} is binary data, not an SWF trace (text: ';' header lines, "
                       "then 18 numbers per job line)")
    return raw.decode("utf-8", errors="replace")


def _format_column(values: np.ndarray, is_float: bool) -> list[str]:
    if not is_float:
        return [str(v) for v in values.tolist()]
    return [str(int(v)) if float(v).is_integer() else repr(float(v)) for v in values.tolist()]


def format_swf(workload: Workload) -> str:
    """The workload as SWF text: its header lines verbatim (or a minimal one), then the jobs."""
    header = list(workload.header.lines) or [
        "; Version: 2.2",
        f"; MaxProcs: {workload.machine.procs}",
        "; Note: written by slurm-policy-advisor",
    ]
    jobs = workload.jobs
    columns = [_format_column(jobs[f].to_numpy(), f in SWF_FLOAT_FIELDS) for f in SWF_FIELDS]
    body = [" ".join(row) for row in zip(*columns)]
    return "\n".join(header + body) + "\n"


def write_swf(workload: Workload, path: str | os.PathLike) -> None:
    """Write atomically; ``.gz`` paths are gzip-compressed."""
    atomic_write(path, format_swf(workload))


#: the traces bundled with the package (advisor/data/traces/README.md)
BUNDLED_TRACES = Path(str(files("advisor.data.traces")))
DEFAULT_TRACE = BUNDLED_TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"


def resolve_trace(name: str | None) -> Path:
    """A trace path; a bundled trace by name prefix (KTH-SP2, ...); the default if None."""
    if name is None:
        return DEFAULT_TRACE
    path = Path(name)
    if path.exists():
        return path
    bundled = sorted(BUNDLED_TRACES.glob("*.swf.gz"))
    matches = [p for p in bundled if p.name.lower().startswith(name.lower())]
    if len(matches) == 1:
        return matches[0]
    names = ", ".join(re.sub(r"-\d{4}-.*", "", p.name) for p in bundled)
    raise SourceUnavailable(f"no trace file '{name}' (bundled traces: {names})")


def read_shares(path: str | os.PathLike) -> dict[str, int]:
    """A shares file: one ``ACCOUNT SHARES`` pair per line, the account a trace's group
    number (12) or the advisor's name for it (g12), ``#`` comments. BadInput (file and
    line) for anything else."""
    text = read_bytes(str(path)).decode("utf-8", errors="replace")
    shares: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        name = words[0].lower()
        name = f"g{name}" if name.isdigit() else name
        if len(words) != 2 or not re.fullmatch(r"g\d+|nogroup", name) \
                or not words[1].isdigit() or int(words[1]) < 1:
            raise BadInput(f"{path}:{lineno}: '{printable(line.strip())}' is not 'GROUP "
                           "SHARES' (a group number or g12, then a whole number of shares "
                           "of 1 or more)")
        if name in shares:
            raise BadInput(f"{path}:{lineno}: {name} is given twice; give each group once")
        shares[name] = int(words[1])
    if not shares:
        raise BadInput(f"{path} gives no shares: write one 'GROUP SHARES' line per group")
    return shares
