from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
LOCKS = FIXTURES / "locks"


@pytest.fixture(autouse=True)
def _hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets a private cache; installer variables of the developer's shell do not leak in."""
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    for k in list(os.environ):
        if k.startswith(("UV_INDEX", "UV_EXTRA_INDEX", "UV_DEFAULT_INDEX")):
            monkeypatch.delenv(k)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m glmcompat ARGS` as a real process (exit codes and stderr as a user sees them)."""
    return subprocess.run([sys.executable, "-m", "glmcompat", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=120)


def have(tool: str) -> bool:
    return shutil.which(tool) is not None
