"""File helpers shared by the adapters: atomic writes and transparent gzip."""
from __future__ import annotations

import gzip
import io
import os
import tempfile
from pathlib import Path

from advisor.errors import MissingExtra, SourceUnavailable


def read_bytes(path: str | os.PathLike) -> bytes:
    """The file's content, gunzipped when it is gzip (by magic number, not by name)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise SourceUnavailable(f"cannot read {path}: {e.strerror or e}") from e
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise SourceUnavailable(f"{path} is not a valid gzip file: {e}") from e
    return raw


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write ``data`` so that ``path`` holds either its old content or all of the new one.

    ``.gz`` paths are gzip-compressed (with no timestamp, so equal data gives equal files).
    """
    path = Path(path)
    if isinstance(data, str):
        data = data.encode()
    if path.suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise SourceUnavailable(f"cannot write {path}: {e.strerror or e}") from e
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
