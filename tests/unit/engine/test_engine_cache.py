"""The engine's numba cache is emptied when any engine source changed (advisor.engine.cache):
numba itself only notices a change in the file that defines a kernel, not in the helpers
compiled into it."""
from __future__ import annotations

import advisor.engine  # noqa: F401  (its import checks the cache)
from advisor.engine.cache import STAMP, cache_folder, drop_stale, source_fingerprint


def _fake_cache(folder):
    for name in ("core.simulate-60.py311.nbi", "core.simulate-60.py311.1.nbc"):
        (folder / name).write_bytes(b"compiled")
    (folder / "core.cpython-311.pyc").write_bytes(b"bytecode")


def test_a_cache_from_other_sources_is_emptied_and_stamped(tmp_path):
    _fake_cache(tmp_path)
    (tmp_path / STAMP).write_text("an older engine\n")
    assert drop_stale(tmp_path, "abc") == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["core.cpython-311.pyc", STAMP])
    assert (tmp_path / STAMP).read_text().strip() == "abc"


def test_a_cache_without_a_stamp_is_emptied(tmp_path):
    _fake_cache(tmp_path)
    assert drop_stale(tmp_path, "abc") == 2
    assert (tmp_path / STAMP).read_text().strip() == "abc"


def test_a_cache_from_these_sources_is_kept(tmp_path):
    _fake_cache(tmp_path)
    (tmp_path / STAMP).write_text("abc\n")
    assert drop_stale(tmp_path, "abc") == 0
    assert len(list(tmp_path.glob("*.nb[ic]"))) == 2


def test_a_folder_that_cannot_be_written_is_left_alone(tmp_path):
    """A path that cannot be a folder (a file is there) fails as a read-only one would,
    and does so for root too, who writes through permission bits."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_bytes(b"a file")
    assert drop_stale(blocked, "abc") == 0
    assert blocked.read_bytes() == b"a file"


def test_importing_the_engine_stamps_its_cache_with_its_sources():
    assert (cache_folder() / STAMP).read_text().strip() == source_fingerprint()
    assert source_fingerprint() == source_fingerprint()  # the same files, the same hash


def test_with_numba_switched_off_there_is_no_cache_to_check(monkeypatch):
    """NUMBA_DISABLE_JIT (for debugging) leaves plain functions without a cache: the
    engine still imports."""
    from advisor.engine import cache

    monkeypatch.setattr(cache, "_locator", lambda: 0)
    assert cache.cache_folder() is None
    assert drop_stale(None, "abc") == 0
