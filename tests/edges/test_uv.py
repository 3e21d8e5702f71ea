"""What uv reads (glmcompat.edges.uv.reads), the one declaration both records of a no-op lock use: uv's
configuration-file discovery as its documentation gives it, and -- with the real uv on a local index -- a change to
each declared file makes a project's recorded answer a miss (the loop runs over the declaration: a file added to it
is tested too).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from glmcompat.edges import uv
from glmcompat.edges.index import default_index_url, pip_config_files
from glmcompat.edges.sources import RecordedSource
from glmcompat.matrix.load import load_facts
from glmcompat.ops import projectlock as pl
from glmcompat.readers import pyproject as pp

from tests.ops.test_projectlock import INDEX, REQ, local_index, make_project  # noqa: F401  (local_index: a fixture)

# Placeholder roots: the declaration is computed for them, and each is then laid under a test's tmp_path.
ENV = {"XDG_CONFIG_HOME": "/XDG_HOME", "XDG_CONFIG_DIRS": os.pathsep.join(["/XDG_DIR1", "/XDG_DIR2"]),
       "UV_CONFIG_FILE": "/UV_CONFIG_FILE/uv.toml"}
ROOTS = ("/XDG_HOME", "/XDG_DIR1", "/XDG_DIR2", "/UV_CONFIG_FILE", "/WORK")


VERSION_FILES = ["/WORK/a/proj/.python-version", "/WORK/a/proj/.python-versions",
                 "/XDG_HOME/uv/.python-version", "/XDG_HOME/uv/.python-versions"]


def test_the_levels_of_uvs_discovery() -> None:
    """https://docs.astral.sh/uv/concepts/configuration-files/: the project and its parents, the user level, the
    system levels ($XDG_CONFIG_DIRS, then /etc/uv), UV_CONFIG_FILE; and with no interpreter asked for (UV_PYTHON
    unset), https://docs.astral.sh/uv/concepts/python-versions/#python-version-files: the Python version files in the
    workspace root (uv runs there: the search stops at the workspace boundary), else the user-level directory."""
    got = uv.reads("/WORK/a/proj", ["/WORK/a/proj/member/pyproject.toml"], ENV)
    assert got == sorted([
        "/WORK/a/proj/pyproject.toml", "/WORK/a/proj/uv.toml", "/WORK/a/proj/uv.lock",
        "/WORK/a/proj/member/pyproject.toml",
        "/WORK/a/pyproject.toml", "/WORK/a/uv.toml", "/WORK/pyproject.toml", "/WORK/uv.toml", "/pyproject.toml",
        "/uv.toml",
        "/XDG_HOME/uv/uv.toml", "/XDG_DIR1/uv/uv.toml", "/XDG_DIR2/uv/uv.toml", "/etc/uv/uv.toml",
        "/UV_CONFIG_FILE/uv.toml", *VERSION_FILES])


def test_an_interpreter_asked_for_reads_no_version_file() -> None:
    """UV_PYTHON (uv's --python) is a request: uv then takes no .python-version."""
    asked = uv.reads("/WORK/a/proj", ["/WORK/a/proj/member/pyproject.toml"], {**ENV, "UV_PYTHON": "/usr/bin/python3"})
    assert asked == sorted(set(uv.reads("/WORK/a/proj", ["/WORK/a/proj/member/pyproject.toml"], ENV)) - set(VERSION_FILES))
    assert not any(os.path.basename(f).startswith(".python-version") for f in uv.reads(None, (), {"UV_PYTHON": "3.11"}))


def test_the_defaults_without_xdg_variables() -> None:
    assert uv.reads(None, (), {"HOME": "/home/u"}) == ["/etc/uv/uv.toml", "/etc/xdg/uv/uv.toml",
                                                        "/home/u/.config/uv/.python-version",
                                                        "/home/u/.config/uv/.python-versions",
                                                        "/home/u/.config/uv/uv.toml"]


def _laid(path: str, tmp_path: Path) -> Path | None:
    """Where a placeholder path of the declaration lies in this test; None for a file outside the placeholders."""
    root = next((r for r in ROOTS if path == r or path.startswith(r + "/")), None)
    return None if root is None else tmp_path / "laid" / path.lstrip("/")


def lay(env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Set the environment ``env`` names with each placeholder path laid under ``tmp_path``; an empty
    ``UV_CONFIG_FILE`` (uv refuses one that is not there)."""
    for var, value in env.items():
        monkeypatch.setenv(var, os.pathsep.join(str(_laid(v, tmp_path)) for v in value.split(os.pathsep)))
    config = _laid(env["UV_CONFIG_FILE"], tmp_path)
    assert config is not None
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("")


def change_each(declared: list[str], tmp_path: Path, inputs: list[str], answered: Callable[[], bool]) -> None:
    """For each declared file (placeholders): one laid under ``tmp_path`` is among ``inputs``, writing it makes
    ``answered()`` false and restoring it true again; one outside them (/etc/uv/uv.toml) is among ``inputs``."""
    assert answered()
    for placeholder in declared:
        laid = _laid(placeholder, tmp_path)
        if laid is None:
            assert placeholder in inputs, placeholder
            continue
        assert str(laid) in inputs, placeholder
        before = laid.read_bytes() if laid.exists() else None
        laid.parent.mkdir(parents=True, exist_ok=True)
        laid.write_bytes((before or b"") + b"# changed\n")
        assert not answered(), f"{placeholder}: a change kept the recorded answer"
        if before is None:
            laid.unlink()
        else:
            laid.write_bytes(before)
        assert answered(), f"{placeholder}: restored, and still a miss"


@pytest.mark.usefixtures("local_index")
def test_a_change_to_each_file_uv_reads_makes_the_project_record_a_miss(tmp_path, monkeypatch):
    """A project locked once (the real uv on the local index) is answered from its record while nothing changed;
    writing any file uv reads makes that answer a miss, and restoring it makes it a hit again. A declared file outside
    this test's directories (/etc/uv/uv.toml, /pyproject.toml) is named among the record's inputs."""
    lay(ENV, tmp_path, monkeypatch)
    pyproject = make_project(tmp_path / "laid" / "WORK" / "a" / "proj", "numpy")
    facts, src = load_facts(), RecordedSource(INDEX)
    first = pl.lock_project(facts, pyproject, REQ, source=src, quiet=True)
    assert first.written and not first.problems, first
    project = pp.load(pyproject)
    python = pl._python(project.requires_python, REQ.python)
    record = pl._record_path(facts, project, REQ, python, src)
    declared = uv.reads("/WORK/a/proj", [], ENV)
    assert len(declared) > 10
    change_each(declared, tmp_path, pl._inputs(project), lambda: pl._recall(record, project) is not None)
    assert {str(f) for f in pip_config_files()} <= set(pl._inputs(project))  # where glmcompat reads its index


@pytest.mark.slow
@pytest.mark.usefixtures("local_index")
def test_uv_takes_the_projects_python_version_file(tmp_path, monkeypatch):
    """Why .python-version is declared: with no interpreter asked for, the real uv takes it, so a pin no interpreter
    satisfies turns the project's no-op into uv's error; the recorded answer misses while the pin is there, and hits
    again once it is gone. With UV_PYTHON set uv takes no pin, and the declaration names none."""
    pyproject = make_project(tmp_path / "proj", "numpy")
    facts, src = load_facts(), RecordedSource(INDEX)
    first = pl.lock_project(facts, pyproject, REQ, source=src, quiet=True)
    assert first.written and not first.problems, first
    project = pp.load(pyproject)
    record = pl._record_path(facts, project, REQ, pl._python(project.requires_python, REQ.python), src)
    pin = project.root / ".python-version"
    assert str(pin) in pl._inputs(project) and pl._recall(record, project) is not None
    assert pl._uv(["lock", "--check"], project.root, REQ.index).returncode == 0
    pin.write_text("3.99\n")  # no such interpreter (and UV_PYTHON_DOWNLOADS=never)
    assert pl._recall(record, project) is None
    p = pl._uv(["lock", "--check"], project.root, REQ.index)
    assert p.returncode != 0 and "3.99" in p.stderr, p.stdout + p.stderr
    monkeypatch.setenv("UV_PYTHON", sys.executable)
    assert str(pin) not in pl._inputs(project)
    assert pl._uv(["lock", "--check"], project.root, REQ.index).returncode == 0  # the pin is not read
    monkeypatch.delenv("UV_PYTHON")
    pin.unlink()
    assert pl._recall(record, project) is not None


def test_the_user_and_system_files_in_uvs_order() -> None:
    """User before system, $XDG_CONFIG_DIRS before /etc/uv; UV_CONFIG_FILE alone replaces them, UV_NO_CONFIG drops them."""
    env = {"HOME": "/home/u", "XDG_CONFIG_DIRS": "/x1:/x2"}
    assert uv.config_files(env) == ["/home/u/.config/uv/uv.toml", "/x1/uv/uv.toml", "/x2/uv/uv.toml", "/etc/uv/uv.toml"]
    assert uv.config_files({**env, "UV_CONFIG_FILE": "/c/uv.toml"}) == ["/c/uv.toml"]
    assert uv.config_files({**env, "UV_NO_CONFIG": "1"}) == []
    assert set(uv.config_files(env)) < set(uv.reads(None, (), {**env, "UV_CONFIG_FILE": "/c/uv.toml"}))


def test_the_index_glmcompat_reads_is_the_one_uv_reads(tmp_path, monkeypatch) -> None:
    """default_index_url takes uv's configured index from the files uv takes it from, in uv's order: a system file
    under $XDG_CONFIG_DIRS, the user file over it, UV_CONFIG_FILE in place of both."""
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL", "PIP_CONFIG_FILE", "VIRTUAL_ENV", "UV_CONFIG_FILE",
                "UV_NO_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "system"))

    def put(where: Path, host: str) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        (where / "uv.toml").write_text(f'[[index]]\nurl = "https://{host}.invalid/simple"\ndefault = true\n')
        return where / "uv.toml"

    put(tmp_path / "system" / "uv", "system")
    assert default_index_url() == "https://system.invalid/simple"
    put(tmp_path / "home" / "uv", "user")
    assert default_index_url() == "https://user.invalid/simple"
    monkeypatch.setenv("UV_CONFIG_FILE", str(put(tmp_path / "elsewhere", "file")))
    assert default_index_url() == "https://file.invalid/simple"
