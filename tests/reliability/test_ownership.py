"""Issue 26, point 5: what glmcompat wrote in ``--out`` is what its stamp records, by a digest of each file; anything
else — or a generated file edited since — is the user's, refused (exit 2, nothing touched) unless ``--force``.

Before, a file was judged "ours" by its first line: a user's requirements.txt beside a generated pyproject.toml was
replaced, a user's pyproject.toml whose first line mimics the generated header was replaced, a hand-edited
generated requirements.txt was overwritten without a word, and user files with glmcompat-like names
(``.glmcompat-lock-notes.txt``, ``.glmcompat-publish/important.txt``) were deleted; uv was started on a forged
``--out/pyproject.toml`` before ownership was proven.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import glmcompat.ops.lockgen as L
from glmcompat.ops import speculate
from glmcompat.ops.lockset import GENERATED, PUBLISHING, STAGING_PREFIX

from tests.ops import test_publish as S
from tests.ops.test_publish import A, cli_lock, put, same_set, tree

# the fixtures of the lock safety tests (the local index, the matrix snapshot, the reference sets)
index, matrix, facts, src, uv_cache, refs, env = S.index, S.matrix, S.facts, S.src, S.uv_cache, S.refs, S.env


def _refused(r: object, path: Path, why: str) -> None:
    err = getattr(r, "stderr", "")
    assert getattr(r, "returncode", None) == 2, err
    assert err.count("\n") == 1 and f"error: {path} is not a file glmcompat wrote" in err and why in err, err


@pytest.mark.slow
def test_a_users_requirements_beside_a_generated_set_is_never_replaced(tmp_path: Path, env: None,
                                                                     refs: dict[object, dict[str, bytes]]) -> None:
    out = tmp_path / "out"
    put(out, refs[A])
    (out / "requirements.txt").write_text("numpy==2.0\n")  # the user's own, beside glmcompat's pyproject.toml
    before = tree(out)
    _refused(cli_lock(out), out / "requirements.txt", "edited since the run that wrote it")
    assert tree(out) == before


def test_a_hand_edited_generated_file_is_refused_and_force_replaces_it(tmp_path: Path, env: None,
                                                                       refs: dict[object, dict[str, bytes]]) -> None:
    out = tmp_path / "out"
    put(out, refs[A])
    edited = refs[A]["requirements.txt"] + b"my-extra-package==1.0\n"
    (out / "requirements.txt").write_bytes(edited)
    _refused(cli_lock(out), out / "requirements.txt", "edited since")
    assert (out / "requirements.txt").read_bytes() == edited
    assert cli_lock(out, A, "--force").returncode == 0
    assert same_set(out, refs[A])


def test_a_pyproject_mimicking_the_header_is_never_replaced(tmp_path: Path, env: None) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "pyproject.toml").write_bytes(GENERATED + b" --target sm120`: do not edit by hand.\n"
                                         b'[project]\nname = "mine"\nversion = "1"\n')
    before = tree(out)
    _refused(cli_lock(out), out / "pyproject.toml", "no .glmcompat-stamp records it")
    assert tree(out) == before


def test_uv_never_starts_on_a_forged_pyproject(tmp_path: Path, facts: object, refs: dict[object, dict[str, bytes]],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The speculative uv used ``--out/pyproject.toml`` when its first line was the generated header."""
    out = tmp_path / "out"
    put(out, refs[A])
    forged = refs[A]["pyproject.toml"] + b'\n[tool.uv.sources]\ntorch = { path = "/tmp/evil" }\n'
    (out / "pyproject.toml").write_bytes(forged)
    started: list[bytes] = []
    monkeypatch.setattr(speculate, "start", lambda pyproject, seed, rp: started.append(pyproject) or None)
    monkeypatch.delenv(speculate.OFF_ENV, raising=False)
    for p in L._memo_path(facts, A).parent.glob("*.json"):  # type: ignore[arg-type]
        p.unlink()  # a cold run: speculation is on
    L._speculate(facts, A, out)  # type: ignore[arg-type]
    assert forged not in started
    (out / "pyproject.toml").write_bytes(refs[A]["pyproject.toml"])  # the stamped one is used
    started.clear()
    L._speculate(facts, A, out)  # type: ignore[arg-type]
    assert started == [refs[A]["pyproject.toml"]]
    # and the early start, before the command's imports (cli: `lock` on the predicted --out)
    (out / "pyproject.toml").write_bytes(forged)
    started.clear()
    speculate.start_early(["--target", "sm120", "--out", str(out)], "glm5-sglang-0.5.9")
    assert started == []
    (out / "pyproject.toml").write_bytes(refs[A]["pyproject.toml"])  # the one the stamp records: it starts
    speculate.start_early(["--target", "sm120", "--out", str(out)], "glm5-sglang-0.5.9")
    assert started == [refs[A]["pyproject.toml"]]


def test_user_files_with_glmcompat_like_names_are_kept(tmp_path: Path, env: None,
                                                      refs: dict[object, dict[str, bytes]]) -> None:
    out = tmp_path / "out"
    put(out, refs[A])
    (out / f"{STAGING_PREFIX}notes.txt").write_text("my notes\n")
    (out / f"{STAGING_PREFIX}abcd1234").mkdir()  # a staging directory's name, holding a file of the user's
    (out / f"{STAGING_PREFIX}abcd1234" / "mine.txt").write_text("mine\n")
    (out / f"{STAGING_PREFIX}zz_stale").mkdir()  # what a killed run leaves: removed
    (out / f"{STAGING_PREFIX}zz_stale" / "uv.lock").write_text("half\n")
    assert cli_lock(out).returncode == 0
    assert (out / f"{STAGING_PREFIX}notes.txt").read_text() == "my notes\n"
    assert (out / f"{STAGING_PREFIX}abcd1234" / "mine.txt").read_text() == "mine\n"
    assert not (out / f"{STAGING_PREFIX}zz_stale").exists()
    (out / PUBLISHING).mkdir()
    (out / PUBLISHING / "important.txt").write_text("keep me\n")
    r = cli_lock(out)
    assert r.returncode == 2 and f"{out / PUBLISHING} holds files glmcompat did not write (important.txt)" in r.stderr
    assert (out / PUBLISHING / "important.txt").read_text() == "keep me\n"
    assert same_set(out, refs[A])


# --- temporary directories a kill left are removed by the next run ----------------------------------------------

HOLDER = """\
import sys, time
from glmcompat.ops import speculate
print(speculate.private_dir(speculate.UV_PREFIX), flush=True)
time.sleep(600)
"""


def _holder(tmp: Path) -> tuple[subprocess.Popen[str], Path]:
    import os
    import sys

    p = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "TMPDIR": str(tmp)})
    assert p.stdout is not None
    return p, Path(p.stdout.readline().strip())


def _age(p: Path, seconds: float = 3600) -> None:
    import os
    import time

    os.utime(p, (time.time() - seconds, time.time() - seconds))


def test_uv_directories_a_kill_left_are_removed_by_the_next_run(tmp_path: Path, env: None,
                                                                refs: dict[object, dict[str, bytes]],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """45 of 140 `kill -9`s left `glmcompat-uv-*` directories behind; a live run's directory is never taken."""
    import os
    import signal

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    killed, killed_dir = _holder(tmp)
    live, live_dir = _holder(tmp)
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(30)
        (killed_dir / "uv.lock").write_text("half\n")
        young = tmp / f"{speculate.UV_PREFIX}young"  # unheld but just made (a run between mkdir and flock)
        young.mkdir()
        for d in (killed_dir, live_dir):
            _age(d)
        out = tmp_path / "out"
        put(out, refs[A])
        monkeypatch.setenv("TMPDIR", str(tmp))
        assert cli_lock(out).returncode == 0
        assert not killed_dir.exists()
        assert live_dir.is_dir() and young.is_dir()
        assert sorted(p.name for p in tmp.iterdir()) == sorted([live_dir.name, young.name])  # and none of its own
    finally:
        live.kill()
        live.wait(30)
    _age(live_dir)
    monkeypatch.setenv("TMPDIR", str(tmp))
    assert speculate.sweep() == [str(live_dir)]  # released by its kill


@pytest.mark.slow
def test_an_out_swapped_for_a_link_after_the_checks_is_never_written_through(tmp_path: Path, env: None,
                                                                            refs: dict[object, dict[str, bytes]]) -> None:
    """Publish works through the directory the run holds: an --out renamed away and replaced by a link to another
    directory while the run works is refused (nothing written in either), never written through."""
    out, real, elsewhere = tmp_path / "out", tmp_path / "real", tmp_path / "elsewhere"
    put(out, refs[A])
    (out / "requirements.txt").unlink()  # so that the run has something to write
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine\n")
    p = S.start_paused(out, "locked", A, seconds="2")
    out.rename(real)
    out.symlink_to(elsewhere)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 3 and "was replaced while this run held it" in err, err
    assert sorted(x.name for x in elsewhere.iterdir()) == ["keep.txt"]
    assert not (real / "requirements.txt").exists() and not S.strays(real)
