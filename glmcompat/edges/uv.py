"""The real uv binary, driven as a subprocess: found beside this interpreter or on PATH, given this
interpreter (``UV_PYTHON``) and no Python downloads, its failures turned into one-line errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from glmcompat.model.errors import EnvironmentFailure


def uv_binary() -> str:
    """The uv binary shipped with the ``uv`` package (beside this interpreter), else uv on PATH."""
    here = Path(sys.executable).with_name("uv")
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv")
    if not found:
        raise EnvironmentFailure("uv is not installed (pip install uv)")
    return found


def uv_env(requires_python: str | None) -> dict[str, str]:
    """uv's environment: no interpreter downloads, no source builds (``UV_NO_BUILD``: locking and exporting
    never run a package's build code), and this interpreter when it fits requires-python (uv then skips
    interpreter discovery, which costs more than the warm lock itself)."""
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": os.environ.get("UV_PYTHON_DOWNLOADS", "never"),
           "UV_NO_BUILD": os.environ.get("UV_NO_BUILD", "1")}
    if requires_python and "UV_PYTHON" not in os.environ:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        here = ".".join(map(str, sys.version_info[:3]))
        try:
            if SpecifierSet(requires_python.replace(" ", "")).contains(here):
                env["UV_PYTHON"] = sys.executable
        except InvalidSpecifier:
            pass  # uv names the bad value
    return env



def run_uv(args: list[str], cwd: Path, requires_python: str | None = None) -> None:
    run_uv_all([args], cwd, requires_python)


def run_uv_all(commands: list[list[str]], cwd: Path, requires_python: str | None = None) -> None:
    """Run uv once per argument list, side by side, in ``cwd``; the first that fails (in the given order) is
    the one-line error, after all have ended."""
    env = uv_env(requires_python)
    procs: list[tuple[list[str], subprocess.Popen[str]]] = []
    try:
        for args in commands:
            procs.append((args, subprocess.Popen([uv_binary(), *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                                 stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)))
    except OSError as e:
        for _, p in procs:
            p.kill()
            p.communicate()
        raise EnvironmentFailure(f"cannot run uv: {e.strerror}") from None
    results = [(args, p, *p.communicate()) for args, p in procs]
    for args, p, out, err in results:
        if p.returncode != 0:
            tail = " ".join((err or out).strip().splitlines()[-3:])
            raise EnvironmentFailure(f"`uv {' '.join(args)}` failed (exit {p.returncode}): {tail}")
