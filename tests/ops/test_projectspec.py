"""The speculative `uv lock` of a project lock (issue 39): whichever path gives the lock, it is byte for byte the one
an unspeculated run leaves (the real uv, against the local index of tests/ops/test_projectlock.py), nothing lands
in the project but that lock, and no private directory outlives the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from glmcompat.edges.index import IndexOptions
from glmcompat.edges.sources import RecordedSource
from glmcompat.matrix.load import load_facts
from glmcompat.ops import projectspec
from glmcompat.ops.projectlock import lock_project, lock_project_recorded
from glmcompat.ops.speculate import OFF_ENV, UV_PREFIX
from tests.ops import test_projectlock as base
from tests.ops.test_projectlock import REQ, make_project

HELD = ("torch==2.9.1", "sgl-kernel==0.3.21", "torchvision==0.24.1", "numpy")  # uv's own pick is the safe core
CHANGED = ("torch", "sgl-kernel==0.3.21", "torchvision", "numpy")  # uv's own pick (torch 2.15.0) is not


@pytest.fixture(scope="module", name="facts")
def _facts() -> Any:
    return load_facts()


@pytest.fixture(scope="module", name="src")
def _src() -> RecordedSource:
    return RecordedSource(base.INDEX)


@pytest.fixture(scope="module", name="uv_cache")
def _uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uv cache for the module (as tests/ops/test_projectlock.py's): a fresh one per test made each uv process
    query the machine's interpreters again."""
    return tmp_path_factory.mktemp("uv-cache")


@pytest.fixture(name="local_index")
def _local_index(uv_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from tests.localindex import serve_index

    with serve_index(base._projects()) as url:
        monkeypatch.setenv("UV_DEFAULT_INDEX", url)
        monkeypatch.setenv("UV_CACHE_DIR", str(uv_cache))
        yield url


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in d.iterdir()}


def _count_runs(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The pyproject.toml of each uv run projectspec starts from now on, in order (the real runs, counted)."""
    started: list[bytes] = []
    real = projectspec.Run

    class Counted(real):  # type: ignore[misc,valid-type]
        def __init__(self, files: Any, env: dict[str, str]) -> None:
            started.append(files["pyproject.toml"])
            super().__init__(files, env)

    monkeypatch.setattr(projectspec, "Run", Counted)
    return started


def _both(tmp_path: Path, deps: tuple[str, ...], facts: Any, src: Any, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[dict[str, bytes], dict[str, bytes], list[bytes | None]]:
    """The project locked with the speculation and without it (each in its own directory, same name); the locks
    :func:`projectspec.with_manifest` made along the way."""
    made: list[bytes | None] = []
    real = projectspec.with_manifest

    def spy(lock: bytes, pins: Any, overrides: Any) -> bytes | None:
        made.append(real(lock, pins, overrides))
        return made[-1]

    monkeypatch.setattr(projectspec, "with_manifest", spy)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    spec = make_project(tmp_path / "spec" / "bench", *deps)
    lock_project(facts, spec, REQ, source=src, quiet=True)
    assert [p.name for p in temp.iterdir() if p.name.startswith(UV_PREFIX)] == []  # every private copy removed
    monkeypatch.setenv(OFF_ENV, "1")
    plain = make_project(tmp_path / "plain" / "bench", *deps)
    lock_project(facts, plain, REQ, source=src, quiet=True)
    return _files(spec.parent), _files(plain.parent), made


@pytest.mark.slow
def test_a_held_prediction_gives_the_lock_uv_writes(tmp_path, facts, src, local_index, monkeypatch):
    """uv's own pick is the safe core: the speculation's lock with the core recorded in its manifest is taken, and
    it is byte for byte the uv.lock `uv lock` writes in place under glmcompat's constraints. (The run on the new
    pyproject.toml, which may answer first, is refused here, so that it is the speculation's lock that is judged.)"""

    class FirstOnly(projectspec.Run):
        def __init__(self, files: Any, env: dict[str, str]) -> None:
            if b"# glmcompat lock" in files["pyproject.toml"]:
                raise OSError("the second run is not started here")
            super().__init__(files, env)

    monkeypatch.setattr(projectspec, "Run", FirstOnly)
    spec, plain, made = _both(tmp_path, HELD, facts, src, monkeypatch)
    assert made and made[0] is not None and b'\n[manifest]\nconstraints = [\n    { name = "sgl-kernel"' in made[0]
    assert spec == plain and sorted(spec) == ["pyproject.toml", "uv.lock"]
    assert spec["uv.lock"] == made[0]


@pytest.mark.slow
def test_a_failed_prediction_gives_the_lock_uv_writes(tmp_path, facts, src, local_index, monkeypatch):
    """uv's own pick (torch 2.15.0) is not the safe core (2.9.1): the speculation's lock is refused, and the lock uv
    wrote for the new pyproject.toml in a private copy is byte for byte the one `uv lock` writes in place."""
    spec, plain, made = _both(tmp_path, CHANGED, facts, src, monkeypatch)
    assert made == []  # never synthesized: the prediction did not hold
    assert spec == plain and b'name = "torch"\nversion = "2.9.1"' in spec["uv.lock"]


@pytest.mark.slow
def test_a_lock_uv_does_not_confirm_is_put_back(tmp_path, facts, src, local_index, monkeypatch):
    """A synthesized lock uv's check refuses (here: a wrong constraint) is never kept: uv locks in place as before."""
    monkeypatch.setattr(projectspec, "with_manifest", lambda lock, pins, overrides: lock.replace(
        b"\n\n[[package]]\n", b'\n\n[manifest]\nconstraints = [\n    { name = "numpy", specifier = "==1" },\n]\n\n'
        b"[[package]]\n", 1))
    path = make_project(tmp_path / "bench", *HELD)
    lock_project(facts, path, REQ, source=src, quiet=True)
    assert b'name = "numpy", specifier = "==1"' not in (path.parent / "uv.lock").read_bytes()
    assert b'{ name = "torch", specifier = "==2.9.1" }' in (path.parent / "uv.lock").read_bytes()


@pytest.mark.parametrize("text", [
    '[project]\nname = "x"\ndependencies = ["torch"]\n\n[tool.uv.workspace]\nmembers = ["a"]\n',
    '[project]\nname = "x"\ndependencies = ["torch"]\n\n[tool.uv.sources]\ntorch = { path = "../t" }\n',
    '[project]\nname = "x"\ndynamic = ["version"]\ndependencies = ["torch"]\n',
    '[project]\nname = "x"\n\n[tool.uv]  # glmcompat lock\nconstraint-dependencies = [  # glmcompat lock\n'
    '    "torch==2.9.1",  # glmcompat lock\n]\n',
], ids=["workspace", "sources", "dynamic", "ours"])
def test_no_speculation_where_a_copy_may_lock_otherwise(tmp_path, text, monkeypatch):
    """A workspace, path sources, dynamic metadata: no uv is started. glmcompat's own lines beside a uv.lock (the lock
    starts from them, uv in place): no private copy, only `uv lock --check` in the project itself."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    p = tmp_path / "pyproject.toml"
    p.write_text(text)
    (tmp_path / "uv.lock").write_text("version = 1\n")
    got = projectspec.start(p, IndexOptions())
    if "# glmcompat lock" in text:
        assert isinstance(got, projectspec.LockCheck) and got.files == {"pyproject.toml": p.read_bytes(),
                                                                    "uv.lock": b"version = 1\n"}
        assert not got.confirms(tmp_path, projectspec.uv_env(IndexOptions()))  # uv refuses that lock
        got.discard()
        got.discard()  # twice: nothing more
        assert (tmp_path / "uv.lock").read_text() == "version = 1\n"
        assert not [q for q in tmp_path.iterdir() if q.name.startswith(UV_PREFIX)]
        return
    assert got is None
    assert projectspec.check(tmp_path, IndexOptions()) is None  # nor in place: uv reads files beside the root's
    (tmp_path / "uv.lock").unlink()
    assert projectspec.start(p, IndexOptions()) is None


def test_glmcompat_lines_without_a_lock_are_the_question_itself(tmp_path, monkeypatch):
    """glmcompat's lines and no uv.lock (a project committed without its lock): the run on the project as written
    starts, on exactly its files (the lock it gives is taken only where the pyproject.toml written is those bytes)."""
    text = ('[project]\nname = "x"\n\n[tool.uv]\nconstraint-dependencies = [  # glmcompat lock\n'
            '    "torch==2.9.1",  # glmcompat lock\n]\n')
    p = tmp_path / "pyproject.toml"
    p.write_text(text)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    run = projectspec.start(p, IndexOptions())
    try:
        assert run is not None and run.files == {"pyproject.toml": text.encode()}
    finally:
        if run is not None:
            run.discard()
    assert not [q for q in tmp_path.iterdir() if q.name.startswith(UV_PREFIX)]


def test_the_manifest_is_recorded_as_uv_records_it():
    lock = b'version = 1\nrevision = 3\nrequires-python = ">=3.11"\n\n[[package]]\nname = "a"\nversion = "1"\n'
    got = projectspec.with_manifest(lock, {"torch": "2.9.1", "transformers": "5.2.0"}, {"transformers": "5.2.0"})
    assert got == (b'version = 1\nrevision = 3\nrequires-python = ">=3.11"\n\n[manifest]\nconstraints = [\n'
                   b'    { name = "torch", specifier = "==2.9.1" },\n]\noverrides = [\n'
                   b'    { name = "transformers", specifier = "==5.2.0" },\n]\n\n[[package]]\nname = "a"\nversion = "1"\n')
    assert projectspec.with_manifest(got, {"torch": "2.9.1"}, {}) is None  # a manifest already: uv's to write
    assert projectspec.with_manifest(lock, {}, {}) == lock
    assert projectspec.holds(lock + b'\n[[package]]\nname = "torch"\nversion = "2.9.1+cu128"\n', {"torch": "2.9.1"})
    assert not projectspec.holds(lock + b'\n[[package]]\nname = "torch"\nversion = "2.15.0"\n', {"torch": "2.9.1"})


@pytest.mark.parametrize("argv", [["--target", "sm120", "--dry-run"], ["--target", "sm120", "--check"],
                                  ["--target", "sm120", "--index-url", "http://index.invalid/simple"],
                                  ["--target=sm120", "requirements.in"], ["--project", ".", "--target", "sm120"]])
def test_the_entry_point_starts_nothing_for_another_question(tmp_path, monkeypatch, argv):
    """A dry run, a check, another index, a named file or project: uv is asked something else, so nothing starts."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["torch"]\n')
    monkeypatch.chdir(tmp_path)
    assert projectspec.start_early(argv) is None


def test_the_entry_point_checks_a_locked_project_in_place(tmp_path, monkeypatch):
    """glmcompat's lines beside a uv.lock: `uv lock --check` in the project itself, unless --upgrade (which resolves
    again whatever the lock holds)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = []\n\n[tool.uv]  # glmcompat lock\n'
                                             'constraint-dependencies = [  # glmcompat lock\n]\n')
    (tmp_path / "uv.lock").write_text("version = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert projectspec.start_early(["--target", "sm120", "--upgrade"]) is None
    run = projectspec.start_early(["--target", "sm120", "-q"])
    try:
        assert isinstance(run, projectspec.LockCheck) and run.root == str(tmp_path.resolve())
    finally:
        if run is not None:
            run.discard()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml", "uv.lock"]


def test_the_entry_point_starts_the_run_it_hands_over(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = []\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # found from below, as uv finds it
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    run = projectspec.start_early(["--target", "sm120", "-q"])
    assert run is not None and run.files == {"pyproject.toml": (tmp_path / "pyproject.toml").read_bytes()}
    run.discard()
    run.discard()  # twice: nothing more
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(UV_PREFIX)]


@pytest.mark.slow
def test_a_prediction_from_the_matrix_gives_the_lock_uv_writes(tmp_path, facts, src, local_index, monkeypatch):
    """uv's own pick (torch 2.15.0) is not the safe core, but the matrix alone predicts it (sgl-kernel 0.3.21 is
    built against torch 2.9.1, and torchvision 0.24.1 is its pair): the run started on the predicted pyproject.toml,
    before the core was resolved, asked exactly the question, so its lock is taken and no run is started after the
    resolution; it is byte for byte the uv.lock `uv lock` writes in place."""
    started = _count_runs(monkeypatch)
    spec, plain, made = _both(tmp_path, CHANGED, facts, src, monkeypatch)
    assert spec == plain and b'name = "torch"\nversion = "2.9.1"' in spec["uv.lock"]
    assert made == []  # the run on the project as written did not hold, and was not the one taken
    # the run on the project as written, then the one on the prediction: nothing more (the second is the answer)
    assert len(started) == 2 and b"# glmcompat lock" not in started[0]
    assert started[1] == spec["pyproject.toml"]


def test_no_prediction_run_where_it_is_off_or_absent(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["torch"]\n')
    assert projectspec.start_predicted(tmp_path, None, None) is None
    monkeypatch.setenv(OFF_ENV, "1")
    assert projectspec.start_predicted(tmp_path, b'[project]\nname = "x"\n', None) is None


@pytest.mark.slow
def test_the_runs_log_names_each_release_of_its_lock(tmp_path, local_index):
    """The real uv's log (-v) names each release it selects: every package of the lock it writes is told to a
    listener, with the file uv names (what :mod:`glmcompat.ops.lockprefetch` reads while uv still resolves), and a
    listener added late hears the selections made before it."""
    project = make_project(tmp_path / "bench", *HELD)
    early: list[tuple[str, str, str]] = []
    run = projectspec.start(project, None)
    assert run is not None
    try:
        run.on_select(lambda *got: early.append(got))
        lock = run.lock()
        assert lock is not None
        late: list[tuple[str, str, str]] = []
        run.on_select(lambda *got: late.append(got))
    finally:
        run.discard()
    locked = {(p["name"], p["version"]) for p in projectspec.packages(lock)} - {("bench", "0.1.0")}
    assert locked and locked <= {(n, v) for n, v, _ in early}
    assert late == early
    torch = [f for n, v, f in early if n == "torch" and v == "2.9.1"]
    assert torch and all(f.startswith("torch-2.9.1-") and f.endswith(".whl") for f in torch)


@pytest.mark.slow
@pytest.mark.parametrize("predicted", [True, False], ids=["predicted", "no-prediction"])
def test_a_project_committed_without_its_lock_takes_the_run_on_it(tmp_path, facts, src, local_index, monkeypatch,
                                                                  predicted):
    """A project that holds glmcompat's lines and no uv.lock (committed without it), its core unchanged: the run
    started on the project as written asked exactly the question, so its lock is taken and no other uv lock is
    started (no prediction run, no run after the resolution); the lock is byte for byte the one an unspeculated run
    leaves. Here the matrix records none of the releases (as glm5-sglang's flashinfer-python 0.6.3 is not), so a
    prediction from the matrix alone finds no set: the lines themselves are the prediction (``no-prediction``: none
    at all, and the settling takes the run on the project as written for the very question it asked)."""
    from glmcompat.decide import remedysearch
    from glmcompat.ops import projectlock

    if not predicted:
        monkeypatch.setattr(projectlock, "_predicted", lambda *a, **k: None)

    class Bare(remedysearch.MatrixSource):
        def versions(self, name: str) -> list[str]:
            return []

    monkeypatch.setattr(remedysearch, "MatrixSource", Bare)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    first = make_project(tmp_path / "first" / "bench", *CHANGED)
    monkeypatch.setenv(OFF_ENV, "1")
    lock_project(facts, first, REQ, source=src, quiet=True)
    (first.parent / "uv.lock").unlink()  # as committed: glmcompat's lines, no lock
    committed = first.read_bytes()
    assert b"# glmcompat lock" in committed
    plain = tmp_path / "plain" / "bench"
    plain.mkdir(parents=True)
    (plain / "pyproject.toml").write_bytes(committed)
    lock_project(facts, plain / "pyproject.toml", REQ, source=src, quiet=True)
    monkeypatch.delenv(OFF_ENV)
    started = _count_runs(monkeypatch)
    spec = tmp_path / "spec" / "bench"
    spec.mkdir(parents=True)
    (spec / "pyproject.toml").write_bytes(committed)
    lock_project(facts, spec / "pyproject.toml", REQ, source=src, quiet=True)
    assert started == [committed]  # the one run, on the project as written
    assert _files(spec) == _files(plain) and sorted(_files(spec)) == ["pyproject.toml", "uv.lock"]
    assert [p.name for p in temp.iterdir() if p.name.startswith(UV_PREFIX)] == []


@pytest.mark.slow
def test_with_no_prediction_the_read_ahead_hears_the_run_on_the_project_as_written(tmp_path, facts, src, local_index,
                                                                                  monkeypatch):
    """Where the matrix predicts nothing, the run on the project as written is the only uv running and its lock the
    likely answer (the SGLang API project's): the read-ahead of the judge's wheels (:mod:`glmcompat.ops.lockprefetch`)
    hears what it selects, as it hears a predicted run; the lock is still byte for byte the unspeculated one."""
    from glmcompat.ops import lockprefetch, projectlock

    heard: list[tuple[str, str]] = []

    class Heard:
        def selected(self, name: str, version: str, _file: str) -> None:
            heard.append((name, version))

        def follow(self, run: projectspec.Run) -> None:
            run.on_select(self.selected)

        def drain(self) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(projectlock, "_predicted", lambda *a, **k: None)
    monkeypatch.setattr(lockprefetch, "start", lambda *a, **k: Heard())
    spec, plain, _ = _both(tmp_path, HELD, facts, src, monkeypatch)
    assert spec == plain
    assert ("torch", "2.9.1") in heard and ("sgl-kernel", "0.3.21") in heard


@pytest.mark.slow
@pytest.mark.parametrize("deps", [HELD, CHANGED], ids=["held", "changed"])
def test_the_run_on_the_new_pyproject_starts_only_when_the_first_is_in_doubt(tmp_path, facts, src, local_index,
                                                                               monkeypatch, deps):
    """No prediction: the run on the project as written is settled on. Where uv's own pick is the safe core (held),
    no second uv is started beside it (two uv slow each other); where it is not (changed: uv's log selects torch
    2.15.0, the core pins 2.9.1), the run on the new pyproject.toml starts and gives the lock. Either way the lock is
    byte for byte the unspeculated one."""
    from glmcompat.ops import projectlock

    monkeypatch.setattr(projectlock, "_predicted", lambda *a, **k: None)
    started = _count_runs(monkeypatch)
    spec, plain, made = _both(tmp_path, deps, facts, src, monkeypatch)
    assert spec == plain and b'name = "torch"\nversion = "2.9.1"' in spec["uv.lock"]
    assert b"# glmcompat lock" not in started[0]
    if deps == HELD:
        assert len(started) == 1 and made and made[0] == spec["uv.lock"]
    else:
        assert len(started) == 2 and started[1] == spec["pyproject.toml"] and made == []


# --- the packages of a lock, found by a plain search (issue 39) -------------------------------------------------------

_WHOLE = __import__("re").compile(rb'^\[\[package\]\]\nname = "([^"\n]+)"\nversion = "([^"\n]+)"', __import__("re").M)


def _by_expression(lock: bytes) -> list[dict[str, str]]:
    """What :func:`projectspec.packages` answered when one expression was tried at every line's start."""
    return [{"name": n.decode("utf-8", "replace"), "version": v.decode("utf-8", "replace")} for n, v in _WHOLE.findall(lock)]


PACKAGE_TEXTS = [
    b'[[package]]\nname = "a"\nversion = "1"\n',  # at the very start
    b'version = 1\n\n[[package]]\nname = "a"\nversion = "1"\nx[[package]]\nname = "b"\nversion = "2"\n',  # mid-line
    b'[[package]]\nname = "a"\nsource = { virtual = "." }\n\n[[package]]\nname = "b"\nversion = "2+cu128"\n',
    b'[[package]]\nname = "a\nversion = "1"\n[[package]]\nname = ""\nversion = "1"\n[[package]]\r\nname = "c"\n',
    b'[[package]]\nname = "\xff"\nversion = "1"\n[[package]]\nname = "d"\nversion = "4"',
    b"",
]


@pytest.mark.parametrize("text", PACKAGE_TEXTS)
def test_packages_found_as_at_every_line(text: bytes) -> None:
    assert projectspec.packages(text) == _by_expression(text)


def test_packages_of_the_fixture_locks() -> None:
    locks = sorted(Path(__file__).resolve().parents[1].glob("fixtures/**/uv.lock"))
    assert len(locks) > 10
    for lock in locks:
        data = lock.read_bytes()
        assert projectspec.packages(data) == _by_expression(data), lock


def _uv_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The arguments of each uv the lock runs in place from now on (the real runs, recorded)."""
    from glmcompat.ops import projectlock

    ran: list[list[str]] = []
    real = projectlock._uv

    def recorded(args: list[str], *rest: Any, **kw: Any) -> Any:
        ran.append(list(args))
        return real(args, *rest, **kw)

    monkeypatch.setattr(projectlock, "_uv", recorded)
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("deps", [HELD, CHANGED], ids=["held", "changed"])
def test_a_fresh_clone_confirmed_by_the_early_check_is_judged_as_is(tmp_path, facts, src, local_index, monkeypatch,
                                                                    deps):
    """A clone of a locked project (its pyproject.toml with glmcompat's lines and its uv.lock, as committed): the
    `uv lock --check` started at once confirms the lock, so no `uv lock` runs after the matrix loads, and the answer
    and the files are those of a run without it (uv lock in place), byte for byte."""
    locked = make_project(tmp_path / "first" / "bench", *deps)
    lock_project(facts, locked, REQ, source=src, quiet=True)
    committed = _files(locked.parent)
    answers, trees, runs = [], [], []
    ran = _uv_runs(monkeypatch)
    for side in ("early", "in-place"):
        clone = tmp_path / side / "bench"
        clone.mkdir(parents=True)
        for name, data in committed.items():
            (clone / name).write_bytes(data)
        before = len(ran)
        if side == "in-place":
            monkeypatch.setenv(OFF_ENV, "1")  # nor the library's own check: uv locks in place, as before
        early = projectspec.start(clone / "pyproject.toml", REQ.index) if side == "early" else None
        try:
            assert (early is not None) == (side == "early")
            result, _ = lock_project_recorded(facts, clone / "pyproject.toml", REQ, source=src, quiet=True, spec=early)
        finally:
            if early is not None:
                early.discard()
        answers.append((result.core, result.verdicts, result.warnings, result.written))
        trees.append(_files(clone))
        runs.append(ran[before:])
    assert answers[0] == answers[1] and answers[0][3] == [] and answers[0][1]
    assert trees[0] == trees[1] == committed
    assert runs == [[], [["lock"]]]


@pytest.mark.slow
def test_the_early_check_is_taken_only_for_the_files_it_read(tmp_path, facts, src, local_index, monkeypatch):
    """uv's `--check` speaks of the files it read: changed since (here: the pyproject.toml gains a comment, uv.lock
    still current), asked in another environment, or of a lock uv would change (a dependency dropped), it confirms
    nothing, and the lock runs `uv lock` in place as before."""
    locked = make_project(tmp_path / "bench", *HELD)
    lock_project(facts, locked, REQ, source=src, quiet=True)
    root, env = locked.parent, projectspec.uv_env(REQ.index)
    early = projectspec.check(root, REQ.index)
    assert early is not None
    try:
        assert early.confirms(root, env) and early.confirms(root, env)
        assert not early.confirms(root, {**env, "UV_EXCLUDE_NEWER": "2020-01-01T00:00:00Z"})
        assert not early.confirms(tmp_path, env)
        text = locked.read_bytes()
        locked.write_bytes(text + b"# a comment\n")
        assert not early.confirms(root, env)
        locked.write_bytes(text)
        assert early.confirms(root, env)
    finally:
        early.discard()
    locked.write_bytes(text.replace(b'    "numpy",\n', b"", 1))
    before = (root / "uv.lock").read_bytes()
    stale = projectspec.check(root, REQ.index)
    assert stale is not None
    try:
        assert not stale.confirms(root, env)  # the lock's project still needs numpy: uv would change it
        ran = _uv_runs(monkeypatch)
        result, _ = lock_project_recorded(facts, locked, REQ, source=src, quiet=True, spec=stale)
    finally:
        stale.discard()
    assert ["lock"] in ran and str(root / "uv.lock") in result.written
    assert (root / "uv.lock").read_bytes() != before and b'name = "numpy"' in before
