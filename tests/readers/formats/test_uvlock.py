"""uv.lock (glmcompat.readers.formats.uvlock): the environments a lock installs, walked from its roots per extra and
group, for each machine and Python; checked against what uv itself exports from the same lock, and against a real
workspace lock's declared conflicts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats import read_text_lock
from glmcompat.readers.formats.uvlock import parse_uv_lock

from tests.conftest import FIXTURES, LOCKS

NEMO_RL = FIXTURES / "realworld" / "01" / "uv.lock"


def read(path: Path, kind: str):  # type: ignore[no-untyped-def]
    return read_text_lock(str(path), kind, path.read_bytes())


@pytest.mark.parametrize("case", ["glm5-sglang-0.5.9", "glm5-torch-2.10.0", "unpinned-torch"])
def test_the_walk_agrees_with_what_uv_exports_from_the_same_lock(case: str) -> None:
    """uv wrote pylock.toml and requirements.txt beside each uv.lock (``uv export``): the environments the uv.lock
    reader walks install exactly what the exports' markers select, on each machine and Python."""
    d = LOCKS / case
    uv = read(d / "uv.lock", "uv.lock")
    assert uv.kind == "uv.lock" and uv.sets
    pylock = read(d / "pylock.toml", "pylock.toml")
    assert [(e.name.removeprefix("base, "), e.platform, dict(e.packages)) for e in uv.sets] == [
        (e.name, e.platform, dict(e.packages)) for e in pylock.sets]
    # the requirements export states no requires-python: each of the uv.lock's Pythons is among its environments
    # (merged with the Pythons that install the same), with the same set
    req = {n: e for e in read(d / "requirements.txt", "requirements.txt").sets for n in e.names}
    assert all(req[e.name.removeprefix("base, ")].packages == e.packages for e in uv.sets)


def test_entries_sources_and_overrides() -> None:
    d = LOCKS / "glm5-torch-2.10.0"
    lock = read(d / "uv.lock", "uv.lock")
    doc = tomllib.loads((d / "uv.lock").read_text())
    versioned = [p for p in doc["package"] if "version" in p]
    assert [(e.name, e.version) for e in lock.entries] == [(p["name"], p["version"]) for p in versioned]
    editable = {e.name for e in lock.entries if e.source == "editable"}
    assert editable == {p["name"] for p in versioned if "editable" in p["source"] or "virtual" in p["source"]}
    assert lock.meta["overrides"] == {o["name"]: o["specifier"] for o in doc["manifest"]["overrides"]}
    assert all(e.overrides == lock.meta["overrides"] for e in lock.sets)


def _extras(label: str) -> set[tuple[str, str]]:
    """The (package, extra) pairs an environment's name enables: ``extra nemo-rl[vllm], ...`` or
    ``extras nemo-gym[all,dev] nemo-rl[fsdp] + groups ..., Python 3.13, Linux x86_64``."""
    head = label.split(", Python")[0].split(" + ")[0]
    if not head.startswith("extra"):
        return set()
    return {(pkg, x) for pkg, xs in re.findall(r"([A-Za-z0-9_.-]+)\[([^\]]*)\]", head) for x in xs.split(",")}


@pytest.mark.slow
def test_a_workspace_lock_never_enables_two_extras_it_declares_in_conflict() -> None:
    lock = read(NEMO_RL, "uv.lock")
    conflicts = [{(c["package"], c["extra"]) for c in group}
                 for group in tomllib.loads(NEMO_RL.read_text())["conflicts"]]
    names = [n for e in lock.sets for n in e.names]
    assert len(names) > 40 and {e.platform for e in lock.sets} == {"x86_64", "aarch64"}
    for name in names:
        enabled = _extras(name)
        assert not [c for c in conflicts if c <= enabled], name
    # each extra alone is an environment, and the combinations are capped with a note saying so
    assert {n.split(", Python")[0] for n in names} >= {"base", "extra nemo-rl[vllm]", "extra nemo-rl[sglang]"}
    assert "more than 64 combinations" in lock.meta["notes"][0]


def test_an_unknown_lock_version_is_one_line(tmp_path: Path) -> None:
    p = tmp_path / "uv.lock"
    text = 'version = 2\nrequires-python = ">=3.11"\n'
    with pytest.raises(LockFormatError) as err:
        parse_uv_lock(p, text)
    assert (err.value.path, err.value.line) == (str(p), 1) and "uv.lock version 2 is not supported" in str(err.value)


def _with_dependency(lock: str, old: str, new: str) -> str:
    """The real lock with one dependency entry rewritten (the first of torch's own dependency list that is ``old``)."""
    assert lock.count(old) >= 1, old
    return lock.replace(old, new, 1)


@pytest.mark.parametrize(("edit", "error"), [
    # a nameless dependency raises where its marker holds ...
    ('{ name = "filelock" }', "a dependency without a name"),
    # ... and is skipped where it does not (nothing a walk installs comes from it)
    ('{ marker = "sys_platform == \'win32\'", nom = "filelock" }', None),
    # a marker that is no string, or an entry that is no table, raises whatever the environment
    ('{ marker = 3, name = "filelock" }', "non-string marker 3"),
    ('"filelock"', "a dependency is not a table"),
])
def test_a_malformed_dependency_raises_where_the_walk_reaches_it(edit: str, error: str | None, tmp_path: Path) -> None:
    lock = (LOCKS / "unpinned-torch" / "uv.lock").read_text()
    start = lock.index('[[package]]\nname = "torch"')
    deps = lock.index('{ name = "filelock" }', start)
    text = lock[:deps] + _with_dependency(lock[deps:], '{ name = "filelock" }', edit.replace(
        '{ name = "filelock" }', '{ nom = "filelock" }'))
    p = tmp_path / "uv.lock"
    if error is None:
        # not raised; and filelock, which other packages of this lock need too, is still installed where it was
        assert [e.packages for e in parse_uv_lock(p, text).sets] == [e.packages for e in parse_uv_lock(p, lock).sets]
        return
    with pytest.raises(LockFormatError) as err:
        parse_uv_lock(p, text)
    assert error in str(err.value) and err.value.path == str(p)
