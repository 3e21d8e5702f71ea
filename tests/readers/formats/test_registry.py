"""How a file's kind is told (glmcompat.readers.formats.registry): by its name, else by its content."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path

import pytest

from glmcompat.model.errors import LockFormatError
from glmcompat.readers import formats
from glmcompat.readers.formats import read_text_lock, with_sets
from glmcompat.readers.formats.common import Entry, Format, Lock, decode_text, flat_sets
from glmcompat.readers.formats.poetry import parse_poetry_lock
from glmcompat.readers.formats.registry import BY_KIND, FORMATS, READABLE, kind_from_name, kind_of, sniff_kind

from tests.conftest import LOCKS
from tests.readers.formats.helpers import FIXTURE_DIR, fixture, load


@pytest.mark.parametrize("name, kind", [
    ("poetry.lock", "poetry.lock"), ("pdm.lock", "pdm.lock"), ("Pipfile.lock", "Pipfile.lock"),
    ("environment.yml", "environment.yml"), ("environment.yaml", "environment.yml"),
    ("environment-cuda.yml", "environment.yml"), ("conda.yaml", "environment.yml"), ("conda-gpu.yml", "environment.yml"),
    ("requirements.lock", "requirements.txt"), ("requirements-dev.lock", "requirements.txt"),
    ("requirements.txt", "requirements.txt"), ("cuda.txt", "requirements.txt"), ("requirements.in", "requirements.txt"),
    ("uv.lock", "uv.lock"), ("pylock.toml", "pylock.toml"), ("pylock.gpu.toml", "pylock.toml"),
    ("prod.lock", None), ("env.yaml", None), ("pyproject.toml", None), ("Pipfile", None),
])
def test_kind_from_name(name: str, kind: str | None) -> None:
    assert kind_from_name(name) == kind


@pytest.mark.parametrize("src, kind", [
    (FIXTURE_DIR / "mistral-poetry/poetry.lock", "poetry.lock"),
    (FIXTURE_DIR / "poetry-sources/poetry.lock", "poetry.lock"),
    (FIXTURE_DIR / "pdm/pdm.lock", "pdm.lock"),
    (FIXTURE_DIR / "pipenv/Pipfile.lock", "Pipfile.lock"),
    (FIXTURE_DIR / "conda-export/env.yaml", "environment.yml"),
    (FIXTURE_DIR / "conda-forge/environment.yaml", "environment.yml"),
    (FIXTURE_DIR / "tgi-uv-compile/requirements_cuda.txt", "requirements.txt"),
    (FIXTURE_DIR / "s12/requirements.txt", "requirements.txt"),
    (LOCKS / "glm5-sglang-0.5.9/uv.lock", "uv.lock"),
    (LOCKS / "glm5-sglang-0.5.9/pylock.toml", "pylock.toml"),
    (LOCKS / "glm5-sglang-0.5.9/pyproject.toml", None),
], ids=lambda v: v if isinstance(v, str) or v is None else "/".join(Path(v).parts[-2:]))
def test_sniff_kind_by_content(src: Path, kind: str | None) -> None:
    """Under a name that tells nothing (``locks/prod.lock``), the content tells the kind."""
    assert sniff_kind(Path("locks/prod.lock"), decode_text(src, src.read_bytes())) == kind


def test_a_poetry_lock_named_txt_reads_as_poetry(tmp_path: Path) -> None:
    p = tmp_path / "deps.txt"
    p.write_bytes(fixture("poetry-sources/poetry.lock").read_bytes())
    text = decode_text(p, p.read_bytes())
    assert sniff_kind(p, text) == "poetry.lock"
    assert parse_poetry_lock(p, text).entries == load(fixture("poetry-sources/poetry.lock")).entries


# --- the registry: each format declared once, every declared one reachable ---------------------------------------

def test_every_format_module_declares_one_format_and_is_listed() -> None:
    """Adding a format is one module and one registry entry: a module under glmcompat/readers/formats/ that declares
    a FORMAT is in FORMATS (else no file would ever reach its reader), and each kind is declared once."""
    package = Path(formats.__file__).parent
    declared = {}
    for path in sorted(package.glob("*.py")):
        module = importlib.import_module(f"glmcompat.readers.formats.{path.stem}")
        if isinstance(getattr(module, "FORMAT", None), Format):
            declared[path.stem] = module.FORMAT
    assert set(declared) == {"conda", "pdm", "pipfile", "poetry", "pylock", "requirements", "uvlock"}
    assert sorted(FORMATS, key=lambda f: f.kind) == sorted(declared.values(), key=lambda f: f.kind)
    assert len(BY_KIND) == len(FORMATS) and [f.kind for f in FORMATS if f.fallback] == ["requirements.txt"]


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.kind for f in FORMATS])
def test_each_format_is_told_by_its_own_name_and_named_in_the_unknown_kind_message(fmt: Format) -> None:
    assert kind_from_name(fmt.kind) == fmt.kind
    assert fmt.kind.split(".")[0].replace("environment", "conda environment") in READABLE


@pytest.mark.parametrize("name, kind", [
    ("requirements.uv.lock", "uv.lock"),  # uv.lock's names come before requirements*.lock
    ("gpu.uv.lock", "uv.lock"), ("pylock..toml", "pylock.toml"), ("PYLOCK.TOML", "pylock.toml"),
    ("pylock.tomlx", None), ("uv.lockx", None), ("xuv.lock", None), ("requirements/x.lock", None),
])
def test_names_at_the_edges(name: str, kind: str | None) -> None:
    assert kind_from_name(name) == kind


def test_the_kind_of_a_file_by_name_then_content(tmp_path: Path) -> None:
    p = tmp_path / "deps"
    assert kind_of(p, "[metadata]\nlock_version = \"4.5.0\"\n") == "pdm.lock"
    assert kind_of(p, '{"_meta": {}}') == "Pipfile.lock" and sniff_kind(p, '{"default": {}}') is None
    assert kind_of(tmp_path / "pyproject.toml", "[project]\n") == "pyproject.toml"
    with pytest.raises(LockFormatError) as err:
        kind_of(tmp_path / "settings.cfg", "[tool]\nx = 1\n")
    assert err.value.path == str(tmp_path / "settings.cfg") and READABLE in str(err.value)


def test_with_sets_builds_the_environments_the_format_declares() -> None:
    """poetry.lock's environments are its format's (the base set and each extra), not the flat ones."""
    lock = read_text_lock("poetry.lock", "poetry.lock", fixture("poetry/poetry.lock").read_text())
    assert BY_KIND["poetry.lock"].environments is not None
    assert lock.sets == tuple(BY_KIND["poetry.lock"].environments(replace(lock, sets=())))
    assert lock.sets[0].names == ("base, Python 3.10, Linux x86_64",)
    flash = next(s for s in lock.sets if s.name.startswith("extra flash"))  # its own: flash-attn and einops come in
    assert {"flash-attn", "einops"} <= set(flash.packages) and not {"flash-attn", "einops"} & set(lock.sets[0].packages)
    assert [e.name for e in flat_sets(lock)][0] == "Python 3.10, Linux x86_64"  # what the flat rule would have named it
    plain = Lock("r.txt", "requirements.txt", (Entry("torch", "2.9.1"),))
    assert with_sets(plain).sets == tuple(flat_sets(plain)) and with_sets(with_sets(plain)) == with_sets(plain)
