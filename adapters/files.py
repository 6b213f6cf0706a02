"""File helpers shared by the adapters: atomic writes and transparent gzip."""
from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import tempfile
from pathlib import Path

from advisor.errors import BadInput, MissingExtra, SourceUnavailable
from advisor.interrupts import deferred

#: the mode of Slurm's own configuration files (slurm.conf, job_submit.lua)
DEFAULT_MODE = 0o644


def read_bytes(path: str | os.PathLike) -> bytes:
    """The file's content, gunzipped when it is gzip (by magic number, not by name)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise SourceUnavailable(f"cannot read {path}: {e.strerror or e}") from e
    if str(path).endswith(".gz") and raw[:2] != b"\x1f\x8b":
        raise BadInput(f"{path} is named .gz but is not gzip data: give the file gzipped, "
                       "as the Parallel Workloads Archive serves traces, or without .gz")
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as e:    # the file was read: its content is bad input
            raise BadInput(f"{path} is not a valid gzip file ({e}): it may be truncated; "
                           "download or copy it again") from None
    return raw


def atomic_write(path: str | os.PathLike, data: bytes | str, mode: int | None = None) -> None:
    """Write ``data`` so that ``path`` holds either its old content or all of the new one.

    The new file takes the mode of the file it replaces, else ``mode``, else 0644: Slurm's
    own files are world-readable, and slurmctld (SlurmUser) and users' client commands read
    what the advisor writes. ``.gz`` paths are gzip-compressed (with no timestamp, so equal
    data gives equal files). Any failure is ``SourceUnavailable`` naming the path.
    """
    path = Path(path)
    if isinstance(data, str):
        data = data.encode()
    if path.suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = DEFAULT_MODE if mode is None else mode
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise SourceUnavailable(f"cannot write {path}: {e.strerror or e}") from e
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise SourceUnavailable(f"cannot write {path}: {e.strerror or e}") from e
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(path: str | os.PathLike, *, directory: bool = False) -> None:
    """Refuse, before any long work, a destination that cannot be written: its folder is
    missing, read-only or not a folder, or (for a file) it is a folder. A destination
    ``directory`` may be missing: its nearest existing parent must take new entries."""
    path = Path(path)
    if directory:
        if path.exists() and not path.is_dir():
            raise SourceUnavailable(f"cannot write into {path}: it is a file, not a folder "
                                    "(give a folder's path)")
        probe = path if path.exists() else next(p for p in path.absolute().parents
                                                if p.exists())
    else:
        if path.is_dir():
            raise SourceUnavailable(f"cannot write {path}: it is a folder (give a file's "
                                    "path)")
        probe = path.parent if str(path.parent) else Path(".")
        if not probe.is_dir():
            raise SourceUnavailable(f"cannot write {path}: no folder {probe} (create it "
                                    "first)")
    try:   # a real write: access() says yes on a read-only filesystem to root
        tempfile.TemporaryFile(dir=probe).close()
    except OSError as e:
        raise SourceUnavailable(f"cannot write {path}: {probe} takes no new files "
                                f"({e.strerror or e})") from e


def write_table(table, path: str | os.PathLike) -> None:
    """A pandas table as CSV, or as Parquet when the name ends in .parquet (needs pyarrow)."""
    path = Path(path)
    if path.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise MissingExtra("pyarrow", "parquet") from None
        buf = io.BytesIO()
        table.to_parquet(buf, index=False)
        atomic_write(path, buf.getvalue())
    else:
        atomic_write(path, table.to_csv(index=False))


def check_folder_owned(directory: str | os.PathLike, names) -> None:
    """Refuse a folder holding anything but the files named ``names``: ``replace_folder``
    replaces the whole folder, and must not take a site's own files with it."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    foreign = sorted(p.name for p in directory.iterdir() if p.name not in names)
    if foreign:
        raise SourceUnavailable(f"{directory} holds files the advisor did not write "
                                f"({', '.join(foreign[:3])}): give a folder of its own")


def replace_folder(directory: str | os.PathLike, files: dict[str, tuple[str, int]],
                   owned=()) -> None:
    """Make ``directory`` hold exactly ``files`` (name: (text, mode)), never a mix of an old
    set and a new one: the set is written into a fresh folder beside it, which then takes
    its place (the old folder is renamed away first, then removed). The old folder may hold
    only files named in ``files`` or ``owned``."""
    directory = Path(directory).absolute()
    check_folder_owned(directory, {*files, *owned})
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}.new."))
    except OSError as e:
        raise SourceUnavailable(f"cannot write {directory}: {e.strerror or e}") from e
    old = None
    try:
        os.chmod(fresh, 0o755)
        for name, (text, mode) in files.items():
            atomic_write(fresh / name, text, mode)
        with deferred():     # no moment without the folder: a signal waits for the swap
            if directory.exists():
                old = Path(tempfile.mkdtemp(dir=directory.parent,
                                            prefix=f".{directory.name}.old."))
                os.replace(directory, old / directory.name)
            os.replace(fresh, directory)
    except OSError as e:
        if old is not None and not directory.exists():
            os.replace(old / directory.name, directory)
        raise SourceUnavailable(f"cannot write {directory}: {e.strerror or e}") from e
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
