"""A lock that lists only wheels no Linux machine installs (and no sdist) cannot serve a GPU target at all: an error
naming the packages and the wheels listed, not a verdict on names and versions (issue 36)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# a real pip-made pylock.toml (CallMeRinChan/AutoSlayer, heldout36d/d10): every compiled package lists only
# cp314 win_amd64 wheels, torch 2.10.0's among them
WINDOWS_ONLY = FIXTURES / "heldout36d" / "d10" / "pylock.toml"


def test_a_pylock_of_windows_wheels_cannot_install_on_linux(tmp_path: Path) -> None:
    r = run_cli("check", str(WINDOWS_ONLY), "--target", "sm120", "--no-cache")
    assert r.returncode == 1, r.stdout + r.stderr
    assert ("× torch 2.10.0 cannot install on Linux x86_64, where sm120 runs: the lock lists only wheels for other "
            "systems (torch-2.10.0-cp314-cp314-win_amd64.whl) and no sdist") in r.stdout
    assert "--python-platform x86_64-unknown-linux-gnu -o pylock.toml" in r.stdout


def test_a_windows_only_package_of_a_cross_platform_lock_is_not_installed_on_linux() -> None:
    """poetry.lock lists every package of every system, pywin32 among them (its marker sits on the edge that needs it,
    not on its own entry): its wheels are all Windows ones, so it installs nothing on Linux -- never a failure there
    (a real file: Ponti17/deep-learning-project, heldout36d/d07)."""
    lock = FIXTURES / "heldout36d" / "d07" / "poetry.lock"
    assert 'name = "pywin32"' in lock.read_text()
    r = run_cli("check", str(lock), "--target", "sm90", "--no-cache")
    assert "pywin32" not in r.stdout and "cannot install on Linux x86_64" not in r.stdout, r.stdout


def test_a_lock_whose_wheels_fit_is_not_called_uninstallable(tmp_path: Path) -> None:
    """The same lock with each wheel's platform tag made Linux's installs (on Python 3.12 only: the other Pythons a
    lock without requires-python is judged on are not a failure of it)."""
    text = (WINDOWS_ONLY.read_text().replace("cp314-cp314-win_amd64", "cp312-cp312-manylinux_2_28_x86_64")
            .replace("-win_amd64.whl", "-manylinux_2_28_x86_64.whl"))
    lock = tmp_path / "pylock.toml"
    lock.write_text(text)
    r = run_cli("check", str(lock), "--target", "sm120", "--no-cache")
    assert "cannot install on Linux" not in r.stdout, r.stdout


def test_a_poetry_lock_names_where_its_wheels_install() -> None:
    """poetry.lock's ``files`` of a package are what its index published: torch lists no sdist, so its wheels alone say
    where it installs -- on the Pythons they are built for, not on a newer one (torch 2.3.0 has no cp313 wheel)."""
    from glmcompat.readers.formats import read_lock

    lock = read_lock(FIXTURES / "formats" / "mistral-poetry" / "poetry.lock")
    assert any(k.startswith("torch==2.3.0") for k in lock.meta.get("wheels_only", {}))
    missing = {e.name: "torch" in e.missing_wheels for e in lock.sets if e.platform == "x86_64"}
    assert missing["Python 3.13, Linux x86_64"] and not all(missing.values()), missing
