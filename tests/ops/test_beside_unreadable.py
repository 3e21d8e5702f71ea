"""A pyproject.toml beside a lock, which the user did not name and which cannot be read (a real project's, broken
upstream: Clipit3142/Construction@0df3dbd007ad, heldout36e/e03), does not hide the verdict on the lock: with --target
the lock is judged and a note names the file, the line and what was not read; where its settings are needed (no
--target) or where it is the file named, it is the one-line error, exit 2 (issue 36)."""

from __future__ import annotations

import shutil
from pathlib import Path

import glmcompat
from tests.conftest import run_cli

E03 = Path(__file__).resolve().parents[1] / "fixtures" / "heldout36e" / "e03"


def _project(tmp_path: Path) -> Path:
    d = tmp_path / "p"
    shutil.copytree(E03, d)
    return d


def test_the_lock_is_judged_and_the_broken_file_named(tmp_path: Path) -> None:
    d = _project(tmp_path)
    r = run_cli("check", str(d / "uv.lock"), "--target", "sm90", "--no-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "note: " in r.stdout and "pyproject.toml:64: invalid TOML: Illegal character '\\n'" in r.stdout
    assert "settings (targets, build isolation) were not read" in r.stdout
    result = glmcompat.check(d / "uv.lock", target="sm90")
    assert result.ok and any("pyproject.toml:64: invalid TOML" in n for n in result.notes)


def test_where_its_settings_are_needed_it_is_the_error(tmp_path: Path) -> None:
    d = _project(tmp_path)
    r = run_cli("check", str(d / "uv.lock"), "--no-cache")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stdout + r.stderr
    assert "pyproject.toml:64: invalid TOML: Illegal character '\\n'" in r.stderr
    r = run_cli("check", str(d / "pyproject.toml"), "--target", "sm90", "--no-cache")
    assert r.returncode == 2 and "pyproject.toml:64: invalid TOML" in r.stderr, r.stdout + r.stderr
