"""The real pre-commit framework runs the hook from .pre-commit-hooks.yaml in a temporary repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import FIXTURES, LOCKS, ROOT

pytest.importorskip("pre_commit")


def _env(home: Path) -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": f"{bindir}:{os.environ.get('PATH', '')}", "HOME": str(home),
            "PRE_COMMIT_HOME": str(home / ".pre-commit"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def _git(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def _repo(tmp_path: Path, hook_config: dict) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "serving"
    repo.mkdir()
    env = _env(tmp_path)
    assert _git(repo, env, "init", "-q", "-b", "main").returncode == 0
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [hook_config]}))
    r = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return repo, env


def _exercise(repo: Path, env: dict[str, str]) -> None:
    shutil.copy(LOCKS / "glm5-sglang-0.5.9" / "requirements.txt", repo / "requirements.txt")
    _git(repo, env, "add", ".")
    r = _git(repo, env, "commit", "-m", "safe stack")
    assert r.returncode == 0, r.stdout + r.stderr  # a safe change commits
    # The incident: torch 2.9.1 -> 2.10.0 under a compiled sgl-kernel 0.3.21.
    shutil.copy(LOCKS / "glm5-torch-2.10.0" / "requirements.txt", repo / "requirements.txt")
    _git(repo, env, "add", "requirements.txt")
    r = _git(repo, env, "commit", "-m", "bump torch")
    out = r.stdout + r.stderr
    assert r.returncode != 0, out  # the unsafe bump is refused ...
    assert "glmcompat check" in out and "Failed" in out
    assert "torch 2.9.1 -> 2.10.0 breaks sgl-kernel 0.3.21" in out  # ... with the explanation
    assert "hint: the nearest safe set for sm120: torch==2.9.1 " in out  # one remedy, found on the index
    assert "- torch 2.10.0 -> 2.9.1: sglang 0.5.9 requires torch==2.9.1 [in requirements.txt:" in out
    assert _git(repo, env, "log", "--oneline").stdout.count("\n") == 1
    # A change that leaves the lock safe (a comment) commits.
    shutil.copy(LOCKS / "glm5-sglang-0.5.9" / "requirements.txt", repo / "requirements.txt")
    with open(repo / "requirements.txt", "a") as f:
        f.write("# reviewed\n")
    _git(repo, env, "add", "requirements.txt")
    r = _git(repo, env, "commit", "-m", "comment")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_hook_definition_with_the_real_framework(tmp_path):
    """The hook exactly as .pre-commit-hooks.yaml defines it, run as a local hook (no install step)."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "glmcompat-check"
    local = {**hook, "language": "system", "args": ["--target", "sm120"]}
    repo, env = _repo(tmp_path, {"repo": "local", "hooks": [local]})
    from tests.localindex import serve_recorded

    with serve_recorded(json.loads((FIXTURES / "resolver" / "pages.json").read_text())) as url:
        _exercise(repo, {**env, "UV_DEFAULT_INDEX": url, "GLMCOMPAT_OFFLINE": ""})


@pytest.mark.network
def test_hook_installed_from_this_repository(tmp_path):
    """pre-commit clones this repository at HEAD and installs glmcompat into its own environment."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    repo, env = _repo(tmp_path, {"repo": str(ROOT), "rev": head, "hooks": [{"id": "glmcompat-check", "args": ["--target", "sm120"]}]})
    _exercise(repo, env)


@pytest.mark.slow
def test_hook_sees_through_includes(tmp_path):
    """requirements.txt holds `-r deps/gpu.txt`: a torch bump made only inside the include runs the hook and is
    refused; a pure rename of the include (and of the line naming it) commits; a README.txt change commits."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    local = {**hook, "language": "system", "args": ["--target", "sm90"]}
    repo, env = _repo(tmp_path, {"repo": "local", "hooks": [local]})
    (repo / "deps").mkdir()
    (repo / "requirements.txt").write_text("-r deps/gpu.txt\nsgl-kernel==0.3.21\n")
    (repo / "deps" / "gpu.txt").write_text("torch==2.9.1\n")
    _git(repo, env, "add", ".")
    r = _git(repo, env, "commit", "-m", "safe stack")
    assert r.returncode == 0, r.stdout + r.stderr
    (repo / "deps" / "gpu.txt").write_text("torch==2.10.0\n")
    _git(repo, env, "add", "deps/gpu.txt")
    from tests.localindex import serve_recorded

    with serve_recorded(json.loads((FIXTURES / "resolver" / "pages.json").read_text())) as url:
        r = _git(repo, {**env, "UV_DEFAULT_INDEX": url, "GLMCOMPAT_OFFLINE": ""}, "commit", "-m", "bump torch in the include")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "torch 2.9.1 -> 2.10.0 breaks sgl-kernel 0.3.21" in out, out
    # the remedy names the file the pin lives in: the include, by its own name and line
    assert "- torch 2.10.0 -> 2.9.1: " in out and "[in deps/gpu.txt:1]" in out, out
    _git(repo, env, "checkout", "--", "deps/gpu.txt")
    _git(repo, env, "reset", "-q")
    _git(repo, env, "checkout", "--", ".")
    assert _git(repo, env, "mv", "deps/gpu.txt", "deps/cuda.txt").returncode == 0
    (repo / "requirements.txt").write_text("-r deps/cuda.txt\nsgl-kernel==0.3.21\n")
    _git(repo, env, "add", ".")
    r = _git(repo, env, "commit", "-m", "rename the include")
    assert r.returncode == 0, r.stdout + r.stderr
    (repo / "README.txt").write_text("How to run the server.\n")
    _git(repo, env, "add", "README.txt")
    r = _git(repo, env, "commit", "-m", "docs")
    assert r.returncode == 0, r.stdout + r.stderr
