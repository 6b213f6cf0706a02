"""Keeps numba's on-disk cache of the engine true to the engine's source.

Numba keys a compiled kernel to the file that defines it alone, while the helpers it calls
from the engine's other modules are compiled into it: changed by an upgrade or a checkout,
they would leave the old kernel in use. So a fingerprint of every engine module (and of
numba's version) is stamped beside the cache, and the cache is emptied when the stamp is
missing or differs. The engine's package runs ``drop_stale`` on import, before any kernel
is loaded.
"""
from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

import numba
from numba import njit
from numba.misc.appdirs import AppDirs

from advisor.errors import SourceUnavailable

#: the file beside numba's cache files that names the sources they were built from
STAMP = "advisor-engine.sha256"


def writable(folder: Path) -> bool:
    """Whether this user can make ``folder`` and write a file in it (numba's own test)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def place_cache() -> str:
    """Make sure numba has a folder this user can write for the engine's kernels, and say
    which: NUMBA_CACHE_DIR when it is set; else the package's own __pycache__ (numba's
    first choice); else systemd's CACHE_DIRECTORY (a unit's CacheDirectory=), which numba
    does not know of; else numba's user-wide folder (XDG_CACHE_HOME, ~/.cache). A service
    user whose home does not exist (Debian's slurm: /nonexistent) running a package that
    root installed has none of the last two: then a scratch folder of this user's in the
    system's temp folder, so that the commands that simulate nothing (report, policies,
    snapshot of a live cluster) still import the engine's modules; ``require_cache`` stops
    a command that would compile there (a compile of a minute or more, lost at the next
    reboot) with what to set."""
    if numba.config.CACHE_DIR:
        return "NUMBA_CACHE_DIR"
    if writable(Path(__file__).parent / "__pycache__"):
        return "package"
    systemd = os.environ.get("CACHE_DIRECTORY", "").split(":")[0]
    if systemd and writable(Path(systemd)):
        numba.config.CACHE_DIR = systemd
        return "CACHE_DIRECTORY"
    if writable(_user_folder()):
        return "user"
    numba.config.CACHE_DIR = str(_scratch())
    return SCRATCH


SCRATCH = "scratch"


def _user_folder() -> Path:
    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)


def _scratch() -> Path:
    """This user's own folder in the system's temp folder (another user's, or a link, at
    that name is not used: a fresh one is made)."""
    folder = Path(tempfile.gettempdir()) / f"advisor-numba-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = folder.lstat()
        if st.st_uid == os.getuid() and folder.is_dir() and not folder.is_symlink():
            return folder
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="advisor-numba-"))


def require_cache() -> None:
    """SourceUnavailable, saying what to set, when the kernels would be compiled into the
    scratch folder: a service user with no home and no cache folder of its unit."""
    if PLACE != SCRATCH:
        return
    raise SourceUnavailable(
        f"no folder this user can write holds the compiled simulator ({Path(__file__).parent}"
        f"/__pycache__ and {_user_folder()} cannot be written): set NUMBA_CACHE_DIR to a "
        "folder the user owns, or run it as a systemd service with "
        "CacheDirectory=slurm-policy-advisor")


#: where the kernels are cached (``place_cache``'s answer)
PLACE = place_cache()


@njit(cache=True)
def _locator():  # never called: its dispatcher says where numba keeps this folder's cache
    return 0


def cache_folder() -> Path | None:
    """Where numba keeps the engine's compiled kernels (beside the sources, or under
    NUMBA_CACHE_DIR, or in the user's cache when the package's folder is read-only); None
    when numba's compiler is switched off (NUMBA_DISABLE_JIT, for debugging)."""
    cached = getattr(_locator, "_cache", None)
    return None if cached is None else Path(cached._cache_path)


def source_fingerprint(family: Path | None = None) -> str:
    """Every module of the engine (and of ``family``, a folder of kernels outside it),
    and numba's version, hashed."""
    digest = hashlib.sha256(numba.__version__.encode())
    folders = [Path(__file__).parent] + ([family] if family is not None else [])
    for folder in folders:
        for path in sorted(folder.glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def guard(module_file: str) -> int:
    """For the kernels a policy family keeps in its own folder, what the engine does for
    its own on import: their cache is dropped unless built from the folder's sources and
    this engine's, whose helpers they compile in. A kernel module calls it with its
    ``__file__`` before any of its kernels runs; the folder is checked once."""
    folder = Path(module_file).parent
    if folder in _guarded:
        return 0
    _guarded.add(folder)
    return drop_stale(_cache_of(module_file), source_fingerprint(folder))


_guarded: set[Path] = set()


def _cache_of(module_file: str) -> Path | None:
    """Where numba keeps the kernels of ``module_file``'s folder (None: no compiler)."""
    here: dict = {}   # a function "of" that file tells where numba caches its kernels
    exec(compile("def _locator():\n    return 0\n", module_file, "exec"), here)
    cached = getattr(njit(cache=True)(here["_locator"]), "_cache", None)
    return None if cached is None else Path(cached._cache_path)


def _folder_key(module_file: str) -> str:
    folder = Path(module_file).parent
    return sources_key(source_fingerprint(folder), folder)


def folder_compiled(module_file: str) -> bool:
    """``engine_compiled`` for the kernels of a family's folder (``module_file``'s)."""
    return compiled(_cache_of(module_file), _folder_key(module_file))


def mark_folder_compiled(module_file: str) -> None:
    mark_compiled(_cache_of(module_file), _folder_key(module_file))


def drop_stale(folder: Path | None, fingerprint: str) -> int:
    """Unless ``folder``'s stamp is ``fingerprint``, remove the numba cache files there and
    stamp it; returns how many files were removed. A folder that cannot be written is left
    as it is (numba cannot cache there either)."""
    if folder is None:
        return 0
    stamp = folder / STAMP
    try:
        if stamp.read_text().strip() == fingerprint:
            return 0
    except OSError:
        pass  # no stamp: built before stamps, or never
    try:
        stale = list(folder.glob("*.nb[ic]"))
        for f in stale:
            f.unlink(missing_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        _write(stamp, fingerprint)
    except OSError:
        return 0
    return len(stale)


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a partial file is never left)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        partial.write_text(text + "\n")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


#: the file beside the stamp that says ``warmup.compile_all`` finished for these sources (a
#: family's folder), or one per engine kernel (``advisor-engine-slurm.compiled``)
COMPILED = "advisor-engine.compiled"


def sources_key(fingerprint: str, sources: Path = Path(__file__).parent) -> str:
    """The fingerprint with each engine module's size and modification time: numba keys a
    cached kernel to its file's time and size too, so a checkout or reinstall that only
    touches the files makes it compile again; and the interpreter, whose tag names numba's
    cache files."""
    digest = hashlib.sha256(f"{fingerprint}\0{sys.implementation.cache_tag}".encode())
    for path in sorted(sources.glob("*.py")):
        st = path.stat()
        digest.update(f"{path.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def compiled(folder: Path | None, key: str, kernel: str = "") -> bool:
    """Whether ``mark_compiled`` left ``key`` in ``folder`` (for ``kernel``, one of the
    engine's): read without loading a kernel, so that a command that needs one kernel
    does not import the others to ask."""
    if folder is None:
        return True      # nothing is compiled: nothing to announce
    try:
        return (folder / _marker(kernel)).read_text().strip() == key
    except OSError:
        return False


def mark_compiled(folder: Path | None, key: str, kernel: str = "") -> None:
    """Say in ``folder`` that the kernels (``kernel``, of the engine's) are compiled for
    ``key`` (atomically; an unwritable folder is left as it is)."""
    if folder is None:
        return
    try:
        _write(folder / _marker(kernel), key)
    except OSError:
        pass


def _marker(kernel: str) -> str:
    return COMPILED if not kernel else COMPILED.replace(".compiled", f"-{kernel}.compiled")


def engine_compiled(kernels: tuple[str, ...] = ("slurm", "textbook")) -> bool:
    """Whether each of the engine's ``kernels`` (``warmup.KERNELS``) is compiled in numba's
    cache."""
    key = sources_key(source_fingerprint())
    return all(compiled(cache_folder(), key, k) for k in kernels)


def mark_engine_compiled(kernels: tuple[str, ...] = ("slurm", "textbook")) -> None:
    """Say so once ``warmup.compile_all`` has compiled ``kernels``."""
    key = sources_key(source_fingerprint())
    for k in kernels:
        mark_compiled(cache_folder(), key, k)
