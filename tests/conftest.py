from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
LOCKS = FIXTURES / "locks"

# Installer variables of the developer's shell that would point a test at another index, cache or configuration.
_INSTALLER_ENV = ("UV_", "PIP_")


def _strip_installer_env(mp: pytest.MonkeyPatch) -> None:
    for k in list(os.environ):
        if k.startswith(_INSTALLER_ENV):
            mp.delenv(k)
    mp.setenv("UV_PYTHON_DOWNLOADS", "never")


# -- the matrix, validated once per session -------------------------------------------------------------------------
#
# glmcompat validates the matrix on a cold cache (about 0.45 s a process) and keeps the rows in a cache entry keyed
# by the files' content, their paths and glmcompat's code. Every test starts with an empty cache, so without help
# each CLI process of the suite would validate again. The session validates the shipped matrix once; each cache a
# test uses gets that entry (sealed under its own name, exactly as glmcompat writes it) for matrix files that are
# byte for byte the shipped ones. An edited matrix is never seeded: glmcompat validates it as it would.

_SHIPPED: dict[str, Any] = {}  # "files": [(name, bytes)] of the shipped matrix; "body": the entry's payload


def _matrix_contents(paths: Sequence[str | Path] | None) -> list[tuple[str, bytes]]:
    from glmcompat.matrix.store import matrix_files

    return [(f.name, f.read_bytes()) for f in matrix_files(paths)]


def _build_matrix_entry() -> None:
    from glmcompat.matrix.load import cache_entry_name, load_facts
    from glmcompat.matrix.locations import unseal
    from glmcompat.matrix.store import cache_dir

    load_facts()  # validates, and writes the entry into the session's cache
    name = cache_entry_name()
    body = unseal("matrix", name, (cache_dir() / name).read_bytes()) if name else None
    if body is not None:
        _SHIPPED.update(files=_matrix_contents(None), body=body)


def seed_matrix(cache: Path, paths: Sequence[str | Path] | None = None) -> None:
    """Put the session's matrix entry for ``paths`` (default: the shipped matrix) into the glmcompat cache
    ``cache``, when those files are byte for byte the shipped matrix and no entry is there yet."""
    if not _SHIPPED or cache.is_symlink() or (cache.exists() and not cache.is_dir()):
        return
    try:
        if _matrix_contents(paths) != _SHIPPED["files"]:
            return
        from glmcompat.matrix.load import cache_entry_name
        from glmcompat.matrix.locations import seal
        from glmcompat.matrix.store import atomic_write

        name = cache_entry_name(paths)
        if name is not None and not (cache / name).exists():
            atomic_write(cache / name, seal("matrix", name, _SHIPPED["body"]))
    except Exception:  # a matrix or a cache a test made unreadable on purpose: glmcompat meets it as it is
        return


@pytest.fixture(scope="session", autouse=True)
def _session_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Defaults for the whole session (fixtures of a wider scope than a test run under them): a private glmcompat
    cache, no installer variables of the developer's shell; and the shipped matrix validated once."""
    mp = pytest.MonkeyPatch()
    mp.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
    _strip_installer_env(mp)
    _build_matrix_entry()
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets a private cache (holding only the validated shipped matrix); installer variables of the
    developer's shell (``UV_*``, ``PIP_*``) do not leak in."""
    cache = tmp_path_factory.mktemp("cache")
    seed_matrix(cache)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(cache))
    _strip_installer_env(monkeypatch)


# -- no network unless a test is marked `network` -------------------------------------------------------------------


class NetworkBlocked(OSError):
    """A test not marked ``network`` tried to reach a host other than this machine."""


def _is_local(host: object) -> bool:
    if not isinstance(host, str):
        return False
    h = host.strip("[]").lower()
    if h in ("localhost", "localhost.") or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _socket_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse, in the test process, any connection or name look-up beyond this machine (loopback: the local index
    servers the tests run) unless the test is marked ``network``. Names under ``.invalid`` (RFC 6761: never
    resolved) are looked up as usual: tests use them to see a name fail."""
    if request.node.get_closest_marker("network"):
        return
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
            raise NetworkBlocked(f"{request.node.nodeid} is not marked network but connects to {address[0]!r}")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and not _is_local(name) and not str(name).rstrip(".").lower().endswith(".invalid"):
            raise NetworkBlocked(f"{request.node.nodeid} is not marked network but looks up {name!r}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m glmcompat ARGS` as a real process (exit codes and stderr as a user sees them). The cache it
    uses gets the session's validated matrix (:func:`seed_matrix`) for the shipped files and for ``--matrix``
    copies of them."""
    full_env = {**os.environ, **(env or {})}
    cache = full_env.get("GLMCOMPAT_CACHE_DIR")
    if cache and "--no-cache" not in args:
        base = Path(cwd) if cwd is not None else Path.cwd()
        seed_matrix(base / cache)
        given = [a.split("=", 1)[1] if a.startswith("--matrix=") else args[i + 1]
                 for i, a in enumerate(args) if a.startswith("--matrix=") or (a == "--matrix" and i + 1 < len(args))]
        if given:
            seed_matrix(base / cache, [str(base / g) for g in given])
    return subprocess.run([sys.executable, "-m", "glmcompat", *args], capture_output=True, text=True, cwd=cwd,
                          env=full_env, timeout=120)


def have(tool: str) -> bool:
    return shutil.which(tool) is not None
