"""The warm `check --against HEAD` (the pre-commit hook's command line): its verdict is keyed by the commit HEAD
names, read from the repository's files by glmcompat.readers.githead, in real repositories made by the real git
(loose and packed refs, a detached HEAD, an unborn branch, a linked worktree); a moved HEAD is a new verdict,
and anything that reader does not follow falls through to git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from glmcompat.readers.githead import head_state

from tests.conftest import run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
SAFE = "torch==2.9.1\nsgl-kernel==0.3.21\n"
BUMP = "torch==2.10.0\nsgl-kernel==0.3.21\n"  # sgl-kernel 0.3.21 was built against torch 2.9.1


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "requirements.txt").write_text(SAFE)
    git(r, "add", ".")
    git(r, "commit", "-qm", "safe")
    return r


def check(repo: Path, tmp_path: Path, *extra: str, git_on_path: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    if not git_on_path:  # a git that always fails: only the fast path can answer
        bad = tmp_path / "nogit"
        bad.mkdir(exist_ok=True)
        (bad / "git").write_text("#!/bin/sh\nexit 128\n")
        (bad / "git").chmod(0o755)
        env["PATH"] = f"{bad}{os.pathsep}{os.environ['PATH']}"
    return run_cli("check", "--against", "HEAD", "requirements.txt", "--target", "sm90", *extra, cwd=repo, env=env)


def same(a: subprocess.CompletedProcess[str], b: subprocess.CompletedProcess[str]) -> bool:
    return (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def test_a_warm_hook_run_is_the_full_verdict_and_follows_head(repo: Path, tmp_path: Path) -> None:
    (repo / "requirements.txt").write_text(BUMP)
    full = check(repo, tmp_path)
    assert full.returncode == 1, full.stdout  # the bump breaks sgl-kernel's ABI
    assert same(check(repo, tmp_path, git_on_path=False), full)  # answered without git, byte for byte
    git(repo, "commit", "-qam", "bump")  # HEAD moves: the same file is no bump any more
    moved = check(repo, tmp_path)
    assert moved.returncode == 0 and moved.stdout != full.stdout
    assert same(check(repo, tmp_path, git_on_path=False), moved)
    git(repo, "pack-refs", "--all")  # refs/heads/main now only in packed-refs
    assert same(check(repo, tmp_path, git_on_path=False), moved)
    git(repo, "checkout", "-q", "--detach", "HEAD~1")  # a detached HEAD on the safe commit ...
    (repo / "requirements.txt").write_text(BUMP)  # ... and the same bump in the work tree: unsafe again
    detached = check(repo, tmp_path)
    assert detached.returncode == 1 and same(check(repo, tmp_path, git_on_path=False), detached)


def test_head_state_names_the_commit_as_git_does(repo: Path, tmp_path: Path) -> None:
    f = str(repo / "requirements.txt")
    state = head_state(f)
    assert state is not None and git(repo, "rev-parse", "HEAD") in state.split("\0")
    git(repo, "pack-refs", "--all")
    assert head_state(f) == state
    git(repo, "checkout", "-q", "-b", "other")
    assert head_state(f) == state  # another branch on the same commit: the same file at HEAD
    (repo / "x").write_text("x")
    git(repo, "add", "x")
    git(repo, "commit", "-qm", "x")
    assert head_state(f) != state
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "main")  # a .git file and a commondir
    wt = head_state(str(tmp_path / "wt" / "requirements.txt"))
    assert wt is not None and git(repo, "rev-parse", "main") in wt.split("\0")


def test_an_unborn_branch_and_what_the_reader_does_not_follow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = tmp_path / "new"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "requirements.txt").write_text(BUMP)
    state = head_state(str(r / "requirements.txt"))
    assert state is not None and "unborn refs/heads/main" in state
    full = check(r, tmp_path)
    assert full.returncode == 1 and same(check(r, tmp_path, git_on_path=False), full)  # everything is new
    assert head_state(str(tmp_path / "requirements.txt")) is None  # no repository above it
    monkeypatch.setenv("GIT_DIR", str(r / ".git"))
    assert head_state(str(r / "requirements.txt")) is None  # git is told where the repository is: git answers
    monkeypatch.delenv("GIT_DIR")
    (r / ".git" / "refs" / "replace").mkdir(parents=True)
    (r / ".git" / "refs" / "replace" / ("0" * 40)).write_text("1" * 40 + "\n")
    assert head_state(str(r / "requirements.txt")) is None  # replace refs change what a commit holds


def test_another_revision_is_never_answered_from_the_cache(repo: Path, tmp_path: Path) -> None:
    from glmcompat.cli.fastpath import key

    f = str(repo / "requirements.txt")
    assert key([f, "--against", "HEAD", "--target", "sm90"]) is not None
    assert key([f, "--against", "HEAD~1", "--target", "sm90"]) is None
    assert key([f, "--against", "main", "--target", "sm90"]) is None
