"""`glmcompat lock` never runs code from data, never loses or mixes the user's files (issue 12, items 1, 3, 4).

Everything runs offline with the real uv: the package index is a local HTTP server (a thread of this
process) that serves tiny wheels named like the GLM-5 core through the PEP 691 JSON API, with upload times
so the stack's exclude-newer applies; the core resolution is the recorded one
(tests/fixtures/resolver/index.json), seeded into the resolution memo for command-line runs. Kills and
races use the ``GLMCOMPAT_LOCK_PAUSE=POINT[:SECONDS]`` hook of glmcompat/ops/lockgen.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glmcompat.edges.uv as uvrun
import glmcompat.ops.lockgen as L
from glmcompat.edges.sources import RecordedSource
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.store import cache_dir
from glmcompat.model.errors import EnvironmentFailure, InputError, MatrixError, UnsafeError
from glmcompat.ops import lockset
from glmcompat.ops.lockgen import LockRequest, Resolution, lock
from glmcompat.ops.lockset import OUTPUTS, PUBLISHING, STAGING_PREFIX, STAMP

from tests.conftest import ROOT, run_cli, seed_matrix
from tests.localindex import serve_wheels
from tests.cli.commands.test_lock import GLM5, INDEX, STACK, stack_request

A = stack_request(load_facts(), STACK, "sm120", "glm_moe_dsa")  # `glmcompat lock --target sm120`
B = stack_request(load_facts(), STACK, "sm120", "glm_moe_dsa", "3.11")  # ... --python 3.11: a different set
ARGS = {A: [], B: ["--python", "3.11"]}
SET = (*OUTPUTS, STAMP)
MATRIX = ROOT / "glmcompat" / "matrix" / "data"  # replaced by a snapshot (the `matrix` fixture)


# --- a local index for the real uv -------------------------------------------------------------

@pytest.fixture(scope="module")
def index() -> object:
    with serve_wheels(GLM5) as url:
        yield url


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of glmcompat/matrix/data/ (the tree may change under a long test run): every run here reads it."""
    global MATRIX
    MATRIX = tmp_path_factory.mktemp("matrix") / "matrices"
    shutil.copytree(ROOT / "glmcompat" / "matrix" / "data", MATRIX)
    return MATRIX


@pytest.fixture(scope="module")
def facts(matrix):
    return load_facts([matrix])


@pytest.fixture(scope="module")
def src():
    return RecordedSource(INDEX)


@pytest.fixture(scope="module")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("uv-cache")


@pytest.fixture(scope="module")
def refs(index, uv_cache, facts, src, tmp_path_factory) -> dict[LockRequest, dict[str, bytes]]:
    """The complete output set of request A and of request B (the same bytes every run gives)."""
    sets = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path_factory.mktemp("refs-cache")))
        mp.setenv("UV_DEFAULT_INDEX", index)
        mp.setenv("UV_CACHE_DIR", str(uv_cache))
        for req in (A, B):
            out = tmp_path_factory.mktemp("ref")
            lock(facts, req, out, source=src)
            sets[req] = the_set(out)
    assert sets[A]["pyproject.toml"] != sets[B]["pyproject.toml"] and sets[A]["uv.lock"] != sets[B]["uv.lock"]
    return sets


@pytest.fixture
def env(index, uv_cache, facts, src, monkeypatch):
    """uv reads the local index; the resolutions of A and B are memoized for command-line runs."""
    monkeypatch.setenv("UV_DEFAULT_INDEX", index)
    monkeypatch.setenv("UV_CACHE_DIR", str(uv_cache))
    monkeypatch.delenv(lockset.PAUSE_ENV, raising=False)
    for req in (A, B):
        seed(facts, src, req)


def seed(facts, src, req: LockRequest) -> None:
    res = L.resolve_core(facts, req, source=src)
    memo = cache_dir() / "resolutions" / f"{L.resolution_key(facts, req)}.json"
    memo.parent.mkdir(parents=True, exist_ok=True)
    L.memoize(facts, req, res)


def put(out: Path, ref: dict[str, bytes]) -> None:
    """Make ``out`` hold the set ``ref`` (what a run that wrote it leaves)."""
    out.mkdir(parents=True, exist_ok=True)
    for n, data in ref.items():
        (out / n).write_bytes(data)


def the_set(out: Path) -> dict[str, bytes]:
    return {n: (out / n).read_bytes() for n in SET if (out / n).exists()}


def same_set(out: Path, ref: dict[str, bytes]) -> bool:
    """``out`` holds exactly the set ``ref`` (prints a diff of what differs)."""
    import difflib

    got = the_set(out)
    for n in sorted(set(got) | set(ref)):
        if got.get(n) != ref.get(n):
            print(n, "".join(difflib.unified_diff(ref.get(n, b"").decode().splitlines(True), got.get(n, b"").decode().splitlines(True))))
    return got == ref


def tree(out: Path) -> dict[str, bytes | str]:
    """Everything under ``out``: file bytes, and a tag for anything else."""
    snap: dict[str, bytes | str] = {}
    for p in sorted(out.rglob("*")):
        rel = str(p.relative_to(out))
        snap[rel] = "link" if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
    return snap


def strays(out: Path) -> list[str]:
    return [p.name for p in out.iterdir() if p.name.startswith((STAGING_PREFIX, PUBLISHING))]


def argv(out: Path, req: LockRequest = A, *extra: str) -> list[str]:
    """`glmcompat lock` for ``req`` into ``out`` on the matrix snapshot."""
    return ["lock", "--target", "sm120", "--matrix", str(MATRIX), "--out", str(out), *ARGS[req], *extra]


def cli_lock(out: Path, req: LockRequest = A, *extra: str):
    return run_cli(*argv(out, req, "-q", *extra))


def lock_process(out: Path, req: LockRequest = A, *extra: str, **kw: object) -> subprocess.Popen[str]:
    """A `glmcompat lock` process (``argv(out, req, *extra)``): where the process is the point (a kill, a wait, a race).
    Its cache gets the session's validated matrix for the snapshot, as run_cli's does (conftest.seed_matrix)."""
    seed_matrix(Path(os.environ["GLMCOMPAT_CACHE_DIR"]), [MATRIX])
    return subprocess.Popen([sys.executable, "-m", "glmcompat", *argv(out, req, *extra)], text=True, **kw)  # type: ignore[call-overload]


def start_paused(out: Path, point: str, req: LockRequest = A, seconds: str = "") -> subprocess.Popen[str]:
    """A `glmcompat lock` process stopped at ``point`` (it has announced it on stderr)."""
    spec = f"{point}:{seconds}" if seconds else point
    p = lock_process(out, req, "-q",
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, lockset.PAUSE_ENV: spec})
    timer = threading.Timer(90, p.kill)
    timer.start()
    seen = []
    assert p.stderr is not None
    for line in p.stderr:
        seen.append(line)
        if line.strip() == f"glmcompat: paused at {point}":
            break
    timer.cancel()
    if p.poll() is not None or not seen or seen[-1].strip() != f"glmcompat: paused at {point}":
        p.kill()
        raise AssertionError(f"never reached {point}: {''.join(seen)}")
    return p


def kill(p: subprocess.Popen[str]) -> None:
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    assert p.stderr is not None
    p.stderr.close()


# --- 1. data never becomes code ------------------------------------------------------------------

HOSTILE = [
    'x"\n[tool.uv.sources]\nevil = { path = "/tmp/evil" }\n#',
    "glm'''\n]\n[dependency-groups]\ndev = [\"evil\"]",
    '"""\\\n\r\n\t\x00\x1b[2J\x7f\u2028\u202e]',
    "a\\u0022\n[[tool.uv.index]]\nurl = \"file:///x\"",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_render_keeps_hostile_text_as_data(facts, text):
    req = stack_request(facts, text, "sm120", text, None, (f"torch=={text}",))
    res = Resolution(dict(GLM5), {"transformers": "5.2.0"}, {"transformers": f"reason {text}"}, ">=3.11,<3.13",
                     "2026-11-29T00:00:00Z")
    out = L.render_pyproject(facts, req, res)
    data = tomllib.loads(out)
    assert data == L.pyproject_data(facts, req, res)
    assert data["tool"]["glmcompat"] == {"stack": text, "targets": ["sm120"], "model": text}
    assert set(data) == {"project", "tool"} and set(data["tool"]) == {"uv", "glmcompat"}
    assert set(data["tool"]["uv"]) == {"constraint-dependencies", "override-dependencies", "exclude-newer", "environments"}
    assert data["project"]["dependencies"] == [f"{n}=={v}" for n, v in sorted(GLM5.items())]
    assert out.startswith("# Generated by `glmcompat lock") and out.encode().startswith(lockset.GENERATED)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stack=st.text(max_size=40), model=st.text(max_size=40), reason=st.text(max_size=40))
def test_render_round_trips_any_text(facts, stack, model, reason):
    req = stack_request(facts, stack, "sm90", model or None)
    res = Resolution({"torch": "2.9.1"}, {"torch": "2.9.1"}, {"torch": reason}, ">=3.11", None)
    assert tomllib.loads(L.render_pyproject(facts, req, res)) == L.pyproject_data(facts, req, res)


@pytest.mark.parametrize("name,version", [
    ("evil @ file:///tmp/evil", "1"), ("torch", "2.9.1 ; python_version > '0'"), ("torch", "2.9.1\n[tool.uv.sources]"),
    ("torch[extra]", "2.9.1"), ("torch", "2.9.1,>=0"), ("torch", "latest"), ("torch", 291), ("", "1"),
])
def test_pins_are_only_plain_name_and_version(facts, name, version):
    res = Resolution({name: version}, {}, {}, ">=3.11", None)
    with pytest.raises(InputError, match="not a plain package name and version"):
        L.render_pyproject(facts, A, res)


def test_a_memo_entry_of_the_wrong_shape_is_a_miss(facts, src):
    good = L.resolve_core(facts, A, source=src).__dict__
    assert L._recall(json.loads(json.dumps(good))) == L.Resolution(**good)
    for bad in (None, [], {"pins": ["torch"]}, {**good, "pins": {"torch": 2}}, {**good, "requires_python": None},
                {k: v for k, v in good.items() if k != "overrides"}):
        assert L._recall(bad) is None


def _hostile_matrix(tmp_path: Path, payload: str) -> Path:
    mdir = tmp_path / "matrices"
    shutil.copytree(MATRIX, mdir)
    for f, old, new in (("models.toml", 'model_type = "glm_moe_dsa"', f"model_type = {json.dumps(payload)}"),
                        ("stacks.toml", 'models = ["glm_moe_dsa"]', f"models = [{json.dumps(payload)}]")):
        text = (mdir / f).read_text()
        assert old in text
        (mdir / f).write_text(text.replace(old, new))
    return mdir


def test_matrix_data_never_runs_code(tmp_path, env, facts, src):
    """The payload that made the string-pasting renderer add a path dependency that `uv lock` built: here it
    stays a string in [tool.glmcompat], the file has no other keys, and the package's build code never runs."""
    marker = tmp_path / "PWNED"
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
                                         '[project]\nname = "evil"\ndynamic = ["version"]\n')
    (evil / "backend.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    (evil / "setup.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    payload = (f'\n[dependency-groups]\ndev = ["evil"]\n[tool.uv.sources]\nevil = {{ path = {json.dumps(str(evil))} }}\n'
               '[project]\nname = "p"\nversion = "0"\nrequires-python = ">=3.11"\ndependencies = []\n[tool.glmcompat]\nz = \'\'\' #')
    mdir = _hostile_matrix(tmp_path, payload)
    out = tmp_path / "out"
    try:
        hfacts = load_facts([mdir])  # the matrix as it is validated today
    except MatrixError:  # a validator that refuses the identifier: the command exits 2 and writes nothing
        r = run_cli("lock", "--target", "sm120", "--matrix", str(mdir), "--out", str(out), "-q")
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert not marker.exists() and (not out.exists() or not list(out.iterdir()))
        return
    req = stack_request(hfacts, STACK, "sm120", payload)
    seed(hfacts, src, req)
    r = run_cli("lock", "--target", "sm120", "--matrix", str(mdir), "--out", str(out), "-q")
    assert not marker.exists(), "a package's build code ran"
    assert "Traceback" not in r.stderr
    if r.returncode == 2:  # the matrix validator refused the identifier: nothing was written
        assert not out.exists() or not list(out.iterdir())
        return
    assert r.returncode == 0, r.stderr
    data = tomllib.loads((out / "pyproject.toml").read_text())
    res = L.resolve_core(hfacts, req, source=src)
    assert data == L.pyproject_data(hfacts, req, res)
    assert data["tool"]["glmcompat"]["model"] == payload
    assert set(data) == {"project", "tool"} and "sources" not in data["tool"]["uv"]
    assert data["project"]["dependencies"] == [f"{n}=={v}" for n, v in sorted(GLM5.items())]
    assert "evil" not in (out / "uv.lock").read_text()


def test_uv_never_builds(monkeypatch):
    monkeypatch.delenv("UV_NO_BUILD", raising=False)
    assert uvrun.uv_env(">=3.11")["UV_NO_BUILD"] == "1"


# --- 3. the user's files --------------------------------------------------------------------------

def test_user_project_is_never_replaced(tmp_path, env):
    out = tmp_path / "proj"
    out.mkdir()
    (out / "pyproject.toml").write_text('[project]\nname = "mine"\nversion = "1"\n')
    (out / "uv.lock").write_text("version = 1\n")
    before = tree(out)
    r = cli_lock(out)
    assert r.returncode == 2, r.stderr
    assert f"{out / 'pyproject.toml'} is not a file glmcompat wrote; pass an empty --out directory" in r.stderr
    assert tree(out) == before


@pytest.mark.parametrize("name", ["requirements.txt", "uv.lock", "pylock.toml"])
def test_user_lock_without_a_glmcompat_pyproject_is_never_replaced(tmp_path, env, name):
    out = tmp_path / "proj"
    out.mkdir()
    (out / name).write_text("numpy==2.0\n")
    before = tree(out)
    r = cli_lock(out)
    assert r.returncode == 2 and f"{out / name} is not a file glmcompat wrote" in r.stderr, r.stderr
    assert tree(out) == before


@pytest.mark.slow
def test_force_replaces_a_user_file(tmp_path, env, refs):
    out = tmp_path / "proj"
    out.mkdir()
    (out / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    r = cli_lock(out, A, "--force")
    assert r.returncode == 0, r.stderr
    assert same_set(out, refs[A])


def test_symlinked_out_is_refused(tmp_path, env):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    r = cli_lock(tmp_path / "link")
    assert r.returncode == 2 and f"--out {tmp_path / 'link'} is a symbolic link" in r.stderr, r.stderr
    assert list(real.iterdir()) == []


@pytest.mark.parametrize("name", [*OUTPUTS, STAMP, PUBLISHING])
def test_symlinked_output_is_refused(tmp_path, env, refs, name):
    out = tmp_path / "out"
    put(out, refs[A])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "victim").write_text("keep me\n")
    if (out / name).exists():
        (out / name).unlink()
    (out / name).symlink_to(elsewhere / "victim")
    before = tree(out)
    r = cli_lock(out, B)  # a different set: every file would be replaced
    assert r.returncode == 2 and f"{out / name} is a symbolic link" in r.stderr, r.stderr
    assert (elsewhere / "victim").read_text() == "keep me\n" and list(elsewhere.iterdir()) == [elsewhere / "victim"]
    assert tree(out) == before


def test_fifo_output_is_refused_at_once(tmp_path, env, refs):
    out = tmp_path / "out"
    put(out, refs[A])
    (out / "requirements.txt").unlink()
    os.mkfifo(out / "requirements.txt")
    r = cli_lock(out, B)
    assert r.returncode == 2 and "is not a regular file" in r.stderr, r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--out", ""], "--out: expected a directory"),
    (["--out", "{f}"], "is not a directory"),
    (["--out", "{f}/sub"], "is not a directory"),
])
def test_bad_out(tmp_path, env, args, needle):
    f = tmp_path / "file"
    f.write_text("x\n")
    r = run_cli("lock", "--target", "sm120", *[a.format(f=f) for a in args])
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert f.read_text() == "x\n"


def test_uv_never_runs_in_out(tmp_path, env, facts, src, monkeypatch):
    """Cold and warm: uv works in a fresh private directory outside --out (no project above --out can become its
    workspace); a warm run that changes nothing leaves every file untouched (bytes and mtimes)."""
    out = tmp_path / "out"
    cwds: list[Path] = []
    real, real_all = L.run_uv, L.run_uv_all

    def seen(cwd):
        assert out not in Path(cwd).parents and Path(cwd) != out and tmp_path not in Path(cwd).parents
        assert "pyproject.toml" in os.listdir(cwd)

    def spy(args, cwd, requires_python=None, extra_env=None):
        seen(cwd)
        cwds.append(Path(cwd))
        return real(args, cwd, requires_python, extra_env)

    def spy_all(commands, cwd, requires_python=None, extra_env=None):
        seen(cwd)
        cwds.extend(Path(cwd) for _ in commands)
        return real_all(commands, cwd, requires_python, extra_env)

    monkeypatch.setattr(L, "run_uv", spy)
    monkeypatch.setattr(L, "run_uv_all", spy_all)
    assert lock(facts, A, out, source=src).changed == list(OUTPUTS)
    assert len(cwds) == 3 and len(set(cwds)) == 1  # lock, then the two exports side by side
    before = {n: ((out / n).read_bytes(), (out / n).stat().st_mtime_ns) for n in SET}
    cwds.clear()
    assert lock(facts, A, out, source=src).changed == []
    assert len(cwds) == 1  # one `uv lock`, nothing exported again
    assert {n: ((out / n).read_bytes(), (out / n).stat().st_mtime_ns) for n in SET} == before
    assert strays(out) == [] and not any(c.exists() for c in cwds)


def test_a_project_above_out_is_not_uvs_workspace(tmp_path, env, refs):
    """--out inside a uv workspace whose members glob would match a directory in --out: uv never sees it."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "ws"\nversion = "1"\n[tool.uv.workspace]\nmembers = ["**"]\n')
    out = tmp_path / "out"
    r = cli_lock(out)
    assert r.returncode == 0, r.stderr
    assert same_set(out, refs[A])


def test_committed_outputs_are_adopted(tmp_path, env, facts, src):
    """A fresh checkout (pyproject.toml with glmcompat's header, requirements.txt, no stamp): its files are rewritten
    only with the bytes they hold (issue 26: no stamp records them, so they are the user's); --force adopts it."""
    out = tmp_path / "sm120"
    shutil.copytree(ROOT / "locks" / STACK / "sm120", out)
    before = tree(out)
    with pytest.raises(InputError, match=r"requirements.txt is not a file glmcompat wrote.*no \.glmcompat-stamp"):
        lock(facts, A, out, source=src)
    assert tree(out) == before
    s = lock(facts, A, out, source=src, force=True)
    assert "pyproject.toml" not in s.changed and L.verify_outputs(out) == []


# --- failures leave the earlier set ----------------------------------------------------------------

def _fail_uv(monkeypatch, tmp_path):
    monkeypatch.setenv("UV_PYTHON", str(tmp_path / "no-such-python"))
    return EnvironmentFailure


def _fail_export(monkeypatch, tmp_path):
    real = L.run_uv_all

    def run_uv_all(commands, cwd, requires_python=None, extra_env=None):
        real(commands, cwd, requires_python, extra_env)
        if any(args[0] == "export" and "pylock.toml" in args for args in commands):
            raise EnvironmentFailure("`uv export` failed (exit 2): boom")

    monkeypatch.setattr(L, "run_uv_all", run_uv_all)
    return EnvironmentFailure


def _fail_check(monkeypatch, tmp_path):
    import glmcompat.decide.rules as rules
    from glmcompat.model.findings import Finding

    def evaluate_lock(*a, **k):
        return [Finding(rule="abi", severity="error", packages=(("torch", ""),), message="torch 2.9.1 does not match", remedy="pin it")]

    monkeypatch.setattr(rules, "evaluate_lock", evaluate_lock)
    return UnsafeError


def _fail_input(monkeypatch, tmp_path):
    monkeypatch.setattr(L, "resolve_core", lambda *a, **k: Resolution({"torch": "2.9.1 ; evil"}, {}, {}, ">=3.11", None))
    return InputError


@pytest.mark.parametrize("fail", [_fail_uv, _fail_export, _fail_check, _fail_input])
def test_failed_run_leaves_the_earlier_set_byte_identical(tmp_path, env, facts, src, monkeypatch, fail):
    out = tmp_path / "out"
    lock(facts, A, out, source=src)
    before = tree(out)
    error = fail(monkeypatch, tmp_path)
    with pytest.raises(error):
        lock(facts, B, out, source=src)
    assert tree(out) == before and strays(out) == []


def test_failed_first_run_leaves_no_directory(tmp_path, env, facts, src, monkeypatch):
    _fail_uv(monkeypatch, tmp_path)
    with pytest.raises(EnvironmentFailure):
        lock(facts, A, tmp_path / "new" / "out", source=src)
    assert not (tmp_path / "new" / "out").exists()


# --- 4. the set is one unit --------------------------------------------------------------------------

@pytest.mark.parametrize("point", ["locked", "staged"])
def test_kill_before_the_commit_leaves_the_old_set(tmp_path, env, refs, point):
    out = tmp_path / "out"
    put(out, refs[A])
    kill(start_paused(out, point, B))
    assert same_set(out, refs[A]) and L.verify_outputs(out) == []
    r = cli_lock(out)  # the next run: nothing to redo, the stale staging directory goes
    assert r.returncode == 0, r.stderr
    assert same_set(out, refs[A]) and strays(out) == []


def test_kill_while_publishing_is_detected_and_rolled_forward(tmp_path, env, refs):
    out = tmp_path / "out"
    put(out, refs[A])
    kill(start_paused(out, "publishing", B))
    # The files on disk are mid-replacement: no stamp vouches for them, and every reader is told.
    assert not (out / STAMP).exists() and (out / PUBLISHING).is_dir()
    assert L.verify_outputs(out)
    r = run_cli(*argv(out, B, "--check"))
    assert r.returncode == 1 and "interrupted" in r.stderr, r.stderr
    L.recover(out)  # what every run does first: the committed set is completed
    assert same_set(out, refs[B]) and L.verify_outputs(out) == [] and strays(out) == []


@pytest.mark.slow
def test_kill_while_publishing_then_next_run(tmp_path, env, refs):
    out = tmp_path / "out"
    put(out, refs[A])
    kill(start_paused(out, "publishing", B))
    r = cli_lock(out, A)
    assert r.returncode == 0, r.stderr
    assert same_set(out, refs[A]) and strays(out) == [] and L.verify_outputs(out) == []


@pytest.mark.slow
def test_a_second_run_waits_for_the_lock(tmp_path, env, refs):
    """A run holding --out blocks a second run on it (which says so); a killed holder releases the lock."""
    out = tmp_path / "out"
    put(out, refs[A])
    first = start_paused(out, "locked", B)  # holds the lock until killed
    second = lock_process(out, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    timer = threading.Timer(90, second.kill)
    timer.start()
    assert second.stderr is not None
    line = second.stderr.readline()
    assert line.startswith(f"glmcompat: waiting for another glmcompat run on {out}"), line
    assert second.poll() is None and the_set(out) == refs[A]
    kill(first)
    _, err = second.communicate(timeout=90)
    timer.cancel()
    assert second.returncode == 0, err
    assert same_set(out, refs[A]) and L.verify_outputs(out) == [] and strays(out) == []


@pytest.mark.slow
def test_racing_runs_leave_one_runs_set(tmp_path, env, refs):
    out = tmp_path / "out"
    for order in ((A, B, A), (B, A, B)):
        procs = [lock_process(out, req, "-q", stdout=subprocess.PIPE, stderr=subprocess.PIPE) for req in order]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        assert the_set(out) in (refs[A], refs[B])
        assert L.verify_outputs(out) == [] and strays(out) == []


def test_mixed_set_is_detected_and_redone(tmp_path, env, refs):
    """A set mixed by hand (or by an older glmcompat killed between its renames) fails the stamp: `lock
    --check` says so, and the next run redoes the exports instead of calling the set current."""
    out = tmp_path / "out"
    put(out, refs[A])
    (out / "pylock.toml").write_bytes(refs[B]["pylock.toml"])
    assert any("pylock.toml" in p for p in L.verify_outputs(out))
    r = run_cli(*argv(out, A, "--check"))
    assert r.returncode == 1 and "mixed" in r.stderr, r.stderr
    r = cli_lock(out)  # issue 26: a file the stamp records with other bytes was edited since: the user's
    assert r.returncode == 2 and f"{out / 'pylock.toml'} is not a file glmcompat wrote" in r.stderr, r.stderr
    assert cli_lock(out, A, "--force").returncode == 0
    assert same_set(out, refs[A]) and L.verify_outputs(out) == []


def test_stale_staging_directories_are_removed(tmp_path, env, refs):
    out = tmp_path / "out"
    put(out, refs[A])
    for n in ("abcd1234", "x_9y8z7w"):  # the names tempfile.mkdtemp gives
        (out / f"{STAGING_PREFIX}{n}").mkdir()
        (out / f"{STAGING_PREFIX}{n}" / "uv.lock").write_text("half\n")
    assert cli_lock(out).returncode == 0
    assert strays(out) == [] and same_set(out, refs[A])


def test_default_out_needs_a_plain_stack_name():
    from glmcompat.cli.commands.lock import _out_dir

    assert _out_dir(None, STACK, "sm120") == Path("locks") / STACK / "sm120"
    for bad in ("../../etc", "a/b", "..", "", "x\ny"):
        with pytest.raises(InputError):
            _out_dir(None, bad, "sm120")
