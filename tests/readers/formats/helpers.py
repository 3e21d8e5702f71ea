"""What the format tests share: the fixtures, reading a file by its kind, the checks every format's tables run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats.common import Entry, Lock, decode_text
from glmcompat.readers.formats.conda import parse_conda_env
from glmcompat.readers.formats.pdm import parse_pdm_lock
from glmcompat.readers.formats.pipfile import parse_pipfile_lock
from glmcompat.readers.formats.poetry import parse_poetry_lock
from glmcompat.readers.formats.registry import kind_from_name, sniff_kind
from glmcompat.readers.formats.requirements import parse_requirements

from tests.conftest import FIXTURES

FIXTURE_DIR = FIXTURES / "formats"
Parser = Callable[[Path, str], Lock]
PARSERS: dict[str, Parser] = {
    "requirements.txt": parse_requirements,
    "poetry.lock": parse_poetry_lock,
    "pdm.lock": parse_pdm_lock,
    "Pipfile.lock": parse_pipfile_lock,
    "environment.yml": parse_conda_env,
}


def load(path: Path) -> Lock:
    """Read a file the way the lead's dispatch will: kind from the name, else from the content."""
    text = decode_text(path, path.read_bytes())
    kind = kind_from_name(path.name) or sniff_kind(path, text)
    assert kind in PARSERS, kind
    return PARSERS[kind](path, text)


def fixture(rel: str) -> Path:
    return FIXTURE_DIR / rel


def E(name: str, version: str | None, marker: str | None = None, source: str = "registry", spec: str | None = None,
      constraint: bool = False, origin: str | None = None, line: int | None = None) -> Entry:
    return Entry(name, version, marker, source, spec, constraint, origin, line)


LINUX = 'sys_platform == "linux"'


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def read_error(path: Path) -> LockFormatError:
    with pytest.raises(LockFormatError) as err:
        load(path)
    return err.value


def entries_among(rel: str, count: int, some: list[Entry]) -> None:
    entries = load(fixture(rel)).entries
    assert len(entries) == count
    for e in some:
        assert e in entries


def kind_python_and_meta(rel: str, kind: str, python: str | None, meta: dict[str, object]) -> None:
    lock = load(fixture(rel))
    assert (lock.kind, lock.requires_python, lock.path) == (kind, python, str(fixture(rel)))
    for key, value in meta.items():
        assert lock.meta[key] == value, key


def bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], top: str, where: str,
              needles: list[str]) -> None:
    write_tree(tmp_path, files)
    monkeypatch.chdir(tmp_path)  # messages name files as the user gave them: relative here
    e = read_error(Path(top))
    msg = str(e)
    assert e.exit_code == 2 and "\n" not in msg and "Traceback" not in msg, msg
    assert msg.startswith(where + ":"), msg
    for needle in needles:
        assert needle in msg, msg
