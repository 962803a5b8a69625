from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.data.cache import CACHE_ENV, build_once, file_hash, resolve_cache_dir, write_atomically
from harness.data.errors import DataError


def test_failed_build_leaves_neither_file_nor_temp(tmp_path):
    def broken(path: Path) -> None:
        path.write_text("half")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        write_atomically(tmp_path / "artifact.bin", broken)
    assert list(tmp_path.iterdir()) == []


def test_build_once_builds_only_when_missing(tmp_path):
    target = tmp_path / "artifact.bin"
    assert build_once(target, lambda path: path.write_text("whole"))
    assert not build_once(target, lambda path: path.write_text("again"))
    assert target.read_text() == "whole"
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # readable by the team, not private like a temp file
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == ["artifact.bin"]


def test_cache_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "from-env"))
    assert resolve_cache_dir(str(tmp_path / "explicit")) == tmp_path / "explicit"
    assert resolve_cache_dir(None) == tmp_path / "from-env"
    assert (tmp_path / "from-env").is_dir()
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_cache_dir(None) == tmp_path / "home" / ".cache" / "harness"


def test_a_file_in_place_of_the_cache_dir_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "taken").write_text("a file")
    with pytest.raises(DataError,
                       match=r"DataConfig.cache_dir='.*taken' is not a usable cache directory \(File exists\)"):
        resolve_cache_dir(str(tmp_path / "taken"))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "taken" / "sub"))
    with pytest.raises(DataError, match=r"\$HARNESS_CACHE=.* is not a usable cache directory"):
        resolve_cache_dir(None)


def test_file_hash_is_the_content_hash(tmp_path):
    (tmp_path / "a").write_bytes(b"same")
    (tmp_path / "b").write_bytes(b"same")
    (tmp_path / "c").write_bytes(b"other")
    assert file_hash(tmp_path / "a") == file_hash(tmp_path / "b") != file_hash(tmp_path / "c")
