"""The warm no-op `glmcompat lock` start-up path (glmcompat.cli.fastlock): its answer is exactly the full path's
(stdout, stderr, exit code), given without importing anything heavy, and never once anything it depends on has
changed: the output set, the memoized resolution, the matrix, the command line, the environment, uv's
configuration, an interrupted or running publish.

Offline with the real uv: the local index and the recorded resolution of tests/ops/test_publish.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import glmcompat.ops.lockgen as L
from glmcompat.ops import lockset
from glmcompat.cli import fastlock, startup
from glmcompat.edges import uv
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.store import cache_dir

from tests.edges.test_uv import ENV, change_each, lay
from tests.ops import test_publish as safety
from tests.conftest import run_cli, run_process
from tests.ops.test_publish import A, put, seed, tree

# The local index, the matrix snapshot and the recorded resolution of tests/ops/test_publish.py.
index, matrix, facts, src, uv_cache, refs, env = (safety.index, safety.matrix, safety.facts, safety.src, safety.uv_cache,
                                                  safety.refs, safety.env)

HEAVY = ("packaging", "pydantic", "argparse", "httpx", "tomlkit", "glmcompat.ops.lockgen", "glmcompat.matrix.load")
PROBE = ("import json, sys\nfrom glmcompat.cli.fastlock import lookup\nrc = lookup(sys.argv[2:])\n"
         f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
         "open(sys.argv[1], 'w').write(json.dumps([rc, heavy]))\n")


def cmd(out: Path, matrix_dir: Path, *extra: str) -> list[str]:
    return ["lock", "--target", "sm120", "--matrix", str(matrix_dir), "--out", str(out), *extra]


def fast(tmp_path: Path, argv: list[str], extra_env: dict[str, str] | None = None,
         cwd: Path | None = None) -> tuple[int | None, str, str, list[str]]:
    """Only the start-up path, as a process like run_cli's: (exit code or None for a miss, stdout, stderr, the heavy
    modules it imported)."""
    result = tmp_path / "probe.json"
    p = subprocess.run([sys.executable, "-c", PROBE, str(result), *argv[1:]], capture_output=True, text=True,
                       env={**os.environ, **(extra_env or {})}, timeout=60, cwd=cwd)
    assert p.returncode == 0, p.stderr
    rc, heavy = json.loads(result.read_text())
    return rc, p.stdout, p.stderr, heavy


def _code_now() -> str:
    """glmcompat's code fingerprint as it is now (not this process's memo of it)."""
    from glmcompat.matrix import locations

    locations._fingerprint = None
    return locations.code_fingerprint()


def settled(tmp_path: Path, argv: list[str]) -> tuple[subprocess.CompletedProcess[str], tuple[int | None, str, str, list[str]]]:
    """A full run of ``argv`` (a no-op: it records its answer) and then the start-up path's answer, while
    glmcompat's own code stayed the same (the code is part of the key: in a working tree others edit, a run
    is repeated once it changed meanwhile)."""
    for _ in range(5):
        before = _code_now()
        full = run_cli(*argv)
        got = fast(tmp_path, argv)
        if _code_now() == before:
            return full, got
    pytest.skip("glmcompat's code kept changing under the test")


def records() -> list[Path]:
    return sorted((cache_dir() / "verdicts").glob("lock-*"))


@pytest.fixture
def recorded(tmp_path, env, refs, matrix):
    """An output directory holding the set a run writes (tests/ops/test_publish.py's reference: the same bytes; a run
    that writes one stores no answer, test_no_answer_is_stored_for_a_failed_or_writing_run) and a run that found it
    up to date (that one stored its answer); returns (out, the command, the full path's answer)."""
    out = tmp_path / "out"
    argv = cmd(out, matrix)
    put(out, refs[A])
    full, got = settled(tmp_path, argv)
    assert full.returncode == 0 and "(up to date)" in full.stdout.splitlines()[0], full.stdout + full.stderr
    assert got[:3] == (full.returncode, full.stdout, full.stderr)
    return out, argv, full


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["-q"], ["--python", "3.11"], ["--platform", "x86_64", "--force"]],
                         ids=["plain", "quiet", "python", "platform-force"])
def test_the_cached_answer_is_the_full_answer(tmp_path, env, refs, matrix, extra):
    out = tmp_path / "out"
    argv = cmd(out, matrix, *extra)
    assert run_cli(*argv).returncode == 0
    full, got = settled(tmp_path, argv)  # the full path, a no-op, stores its answer; then the start-up path's
    assert full.returncode == 0, full.stderr
    assert got == (full.returncode, full.stdout, full.stderr, [])
    again = run_process(*argv)  # the command itself, answered by the start-up path
    assert (again.returncode, again.stdout, again.stderr) == (full.returncode, full.stdout, full.stderr)
    before = tree(out)
    assert settled(tmp_path, argv)[1][0] == 0 and tree(out) == before  # it reads, never writes


def test_the_answer_is_the_same_as_a_fresh_full_run(tmp_path, recorded, facts, src):
    """The recorded answer also equals what a full run on a cold glmcompat cache prints (the memo reseeded)."""
    out, argv, full = recorded
    cold = tmp_path / "cold-cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GLMCOMPAT_CACHE_DIR", str(cold))
        seed(facts, src, A)
        r = run_cli(*argv)
    assert (r.returncode, r.stdout, r.stderr) == (full.returncode, full.stdout, full.stderr)


def _edit(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\n# edited\n")


def _relink(path: Path) -> None:
    copy = path.with_name(path.name + ".real")
    shutil.copy(path, copy)
    path.unlink()
    path.symlink_to(copy)


CHANGES = {
    "pyproject.toml": lambda out, m, memo: _edit(out / "pyproject.toml"),
    "uv.lock": lambda out, m, memo: _edit(out / "uv.lock"),
    "requirements.txt": lambda out, m, memo: _edit(out / "requirements.txt"),
    "pylock.toml": lambda out, m, memo: (out / "pylock.toml").unlink(),
    "stamp": lambda out, m, memo: _edit(out / lockset.STAMP),
    "uv.lock-link": lambda out, m, memo: _relink(out / "uv.lock"),
    "staging-dir": lambda out, m, memo: (out / f"{lockset.STAGING_PREFIX}x").mkdir(),
    "publishing": lambda out, m, memo: (out / lockset.PUBLISHING).mkdir(),
    "memo": lambda out, m, memo: memo.unlink(),
    "matrix": lambda out, m, memo: _edit(m / "stacks.toml"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_declines(tmp_path, env, refs, matrix, change):
    out = tmp_path / "out"
    put(out, refs[A])
    matrix_dir = tmp_path / "m"  # a private copy: the module's snapshot stays as it is
    shutil.copytree(matrix, matrix_dir)
    argv = cmd(out, matrix_dir)
    seed(load_facts([matrix_dir]), safety.RecordedSource(safety.INDEX), A)
    assert run_cli(*argv).returncode == 0  # re-stamps the set for this matrix copy (the stamp names the matrix)
    assert settled(tmp_path, argv)[1][0] == 0  # a no-op records the answer
    memo = cache_dir() / "resolutions" / f"{L.resolution_key(load_facts([matrix_dir]), A)}.json"
    CHANGES[change](out, matrix_dir, memo)
    rc, stdout, stderr, _ = fast(tmp_path, argv)
    assert (rc, stdout, stderr) == (None, "", "")


def test_an_edited_set_gets_the_full_path(tmp_path, recorded):
    """After an edit the command runs in full and says what it did: the edited file is the user's now (issue 26:
    refused, exit 2); with --force it is rewritten."""
    out, argv, full = recorded
    _edit(out / "requirements.txt")
    r = run_cli(*argv)
    assert r.returncode == 2 and "requirements.txt is not a file glmcompat wrote" in r.stderr, r.stdout + r.stderr
    r = run_cli(*argv, "--force")
    assert r.returncode == 0 and "(wrote requirements.txt)" in r.stdout.splitlines()[0], r.stdout + r.stderr
    again = run_process(*argv)
    assert (again.returncode, again.stdout, again.stderr) == (full.returncode, full.stdout, full.stderr)


@pytest.mark.parametrize("extra_env", [{"UV_EXCLUDE_NEWER": "2025-01-01T00:00:00Z"}, {"GLMCOMPAT_LOCK_PAUSE": "locked"},
                                       {"UV_CONFIG_FILE": "/dev/null"}], ids=["uv-env", "pause", "uv-config-file"])
def test_another_environment_declines(tmp_path, recorded, extra_env):
    _, argv, _ = recorded
    assert fast(tmp_path, argv, extra_env)[0] is None


def test_a_change_to_each_file_uv_reads_declines(tmp_path, env, refs, matrix, monkeypatch):
    """uv runs outside the read log's sight: every file glmcompat.edges.uv.reads declares for the environment (the user
    and system configuration, UV_CONFIG_FILE; a lock --stack runs uv in a directory of its own) is an input of the
    record: a change to any declines, restoring it answers again (a file added to the declaration is tested too)."""
    lay(ENV, tmp_path, monkeypatch)
    out = tmp_path / "out"
    argv = cmd(out, matrix)
    assert run_cli(*argv).returncode == 0  # the set as uv writes it in this environment (UV_CONFIG_FILE)
    full, got = settled(tmp_path, argv)  # a no-op: it records its answer
    assert got[0] == 0, full.stdout + full.stderr
    (path,) = records()
    rec = startup.load(fastlock.HEADER, path.name.removeprefix("lock-"), str(path))
    assert rec is not None
    change_each(uv.reads(None, (), ENV), tmp_path, sorted(rec[0]), lambda: fast(tmp_path, argv)[0] == 0)


def test_the_settings_a_stack_lock_reads_are_an_input(tmp_path, env, refs, matrix):
    """Without --model, `lock --stack` takes it from [tool.glmcompat] of the project around the working directory: an
    input no hand-kept list named (the answer was replayed after an edit there). The run's read log names it: an
    edit declines."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[tool.glmcompat]\nmodel = "glm_moe_dsa"\n')
    out = tmp_path / "out"
    put(out, refs[A])
    argv = cmd(out, matrix)
    full = run_cli(*argv, cwd=proj)  # a no-op: it records its answer
    assert full.returncode == 0 and "(up to date)" in full.stdout.splitlines()[0], full.stdout + full.stderr
    assert fast(tmp_path, argv, cwd=proj)[:3] == (full.returncode, full.stdout, full.stderr)
    (proj / "pyproject.toml").write_text('[tool.glmcompat]\nmodel = "glm_moe_dsa"\nplatform = "aarch64"\n')
    assert fast(tmp_path, argv, cwd=proj)[0] is None


def test_another_command_line_declines(tmp_path, recorded):
    out, argv, _ = recorded
    for other in (argv + ["--force"], argv + ["--check"], argv + ["-v"], argv + ["--no-cache"],
                  [a.replace(str(out), str(out) + "/") for a in argv]):
        assert fast(tmp_path, other)[0] is None, other


def test_a_run_in_progress_declines(tmp_path, recorded):
    """The full path holds the output directory's lock while it writes: the start-up path never waits for it
    and never answers meanwhile (the full path then waits for the lock)."""
    import fcntl

    out, argv, _ = recorded
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert fast(tmp_path, argv)[0] is None
    finally:
        os.close(fd)
    assert settled(tmp_path, argv)[1][0] == 0


@pytest.mark.parametrize("argv", [["--target", "sm120", "--check"], ["--target", "sm120", "-v"], ["--target=sm120"],
                                  ["--out", "x"], ["--target", "sm120", "--no-cache"], ["--target", "sm120", "--help"],
                                  ["--target"], ["--target", "sm120", "extra"]])
def test_what_the_start_up_path_does_not_understand_has_no_key(argv):
    assert fastlock.key(argv) is None


def test_no_answer_is_stored_for_a_failed_or_writing_run(tmp_path, env, matrix):
    out = tmp_path / "out"
    out.mkdir()
    (out / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    r = run_cli(*cmd(out, matrix))
    assert r.returncode == 2 and not records()
    shutil.rmtree(out)
    first = run_cli(*cmd(out, matrix))
    assert first.returncode == 0 and "(wrote pyproject.toml, uv.lock, requirements.txt, pylock.toml)" in first.stdout, first.stderr
    assert not records(), "a run that wrote files stores no answer"


def test_an_answer_of_the_wrong_shape_is_a_miss(tmp_path, recorded):
    _, argv, full = recorded
    (path,) = records()
    for bad in (b"", b"glmcompat-lock-verdict 1\n0\n", path.read_bytes()[:-3], path.read_bytes() + b"x", b"\xff" * 40):
        path.write_bytes(bad)
        assert fast(tmp_path, argv)[0] is None
    r, got = settled(tmp_path, argv)  # the full path answers and replaces it
    assert (r.returncode, r.stdout, r.stderr) == (full.returncode, full.stdout, full.stderr)
    assert got[:3] == (full.returncode, full.stdout, full.stderr)
