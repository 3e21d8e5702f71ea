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

# Installer variables of the developer's shell (an index, a cache, find-links, offline mode, a configuration file) would
# change what the real uv and pip do in a test: none reaches a test, except, for the tests marked `network` (and the
# session, whose fixtures they may use), the variables naming how pip reaches the real index.
_INSTALLER_ENV = ("UV_", "PIP_")
_INDEX_ACCESS = frozenset({"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT", "PIP_TRUSTED_HOST", "PIP_CLIENT_CERT"})


def _strip_installer_env(mp: pytest.MonkeyPatch, *, network: bool = False) -> None:
    for k in list(os.environ):
        if k.startswith(_INSTALLER_ENV) and not (network and k in _INDEX_ACCESS):
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
    cache, no installer variables of the developer's shell, the socket guard in every Python process a test starts
    (:data:`GUARD`, through ``PYTHONPATH``); and the shipped matrix validated once."""
    mp = pytest.MonkeyPatch()
    mp.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
    mp.setenv("GLMCOMPAT_OFFLINE", "1")  # check's remedy search reads no index unless --index-url names one
    _strip_installer_env(mp, network=True)
    guard = tmp_path_factory.mktemp("socket-guard")
    (guard / "sitecustomize.py").write_text(GUARD)
    _PYTHONPATH["unguarded"] = os.environ.get("PYTHONPATH")
    mp.setenv("PYTHONPATH", os.pathsep.join([str(guard), *filter(None, [os.environ.get("PYTHONPATH")])]))
    _build_matrix_entry()
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _hermetic(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets a private cache (holding only the validated shipped matrix); installer variables of the
    developer's shell (``UV_*``, ``PIP_*``) do not leak in."""
    cache = tmp_path_factory.mktemp("cache")
    seed_matrix(cache)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(cache))
    network = request.node.get_closest_marker("network") is not None
    _strip_installer_env(monkeypatch, network=network)
    if network:  # a process a test starts reads no index (check's remedy search) unless --index-url or `network`
        monkeypatch.delenv("GLMCOMPAT_OFFLINE", raising=False)


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


# The same guard in the Python processes a test starts (glmcompat's CLI, pip): a sitecustomize module on PYTHONPATH
# that patches the socket module when something imports it (importing nothing itself: the start-up paths' import
# tests see the modules they would see without it). uv, which is not Python, is pointed at local indexes by the tests.
GUARD = '''"""The test suite's socket guard (tests/conftest.py): no connection or name look-up beyond this machine."""
import sys


def _local(host):
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    h = host.strip("[]").lower().split("%", 1)[0].rstrip(".")
    return (h in ("localhost", "::1") or h.endswith((".localhost", ".invalid")) or h.startswith("127.")
            or h == "0:0:0:0:0:0:0:1")


def _patch(socket):
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def check(sock, host):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _local(host):
            raise OSError(f"the test suite's socket guard refuses a connection to {host!r} (mark the test network)")

    def guarded_connect(self, address):
        check(self, address[0])
        return connect(self, address)

    def guarded_connect_ex(self, address):
        check(self, address[0])
        return connect_ex(self, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if host is not None and not _local(host):
            raise socket.gaierror(socket.EAI_NONAME, f"the test suite's socket guard refuses to look up {host!r}")
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = (guarded_connect, guarded_connect_ex,
                                                                           guarded_getaddrinfo)


class _Finder:
    """Patches the socket module as it is first imported, then steps aside."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "socket":
            return None
        sys.meta_path.remove(cls)
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None and spec.loader is not None:
                exec_module = spec.loader.exec_module

                def patched(module, exec_module=exec_module):
                    exec_module(module)
                    _patch(module)

                spec.loader.exec_module = patched
                return spec
        return None


if "socket" in sys.modules:
    _patch(sys.modules["socket"])
else:
    sys.meta_path.insert(0, _Finder)
'''
_PYTHONPATH: dict[str, str | None] = {}


@pytest.fixture(autouse=True)
def _socket_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse, in the test process and the Python processes it starts, any connection or name look-up beyond this
    machine (loopback: the local index servers the tests run) unless the test is marked ``network``. Names under
    ``.invalid`` (RFC 6761: never resolved) are looked up as usual: tests use them to see a name fail."""
    if request.node.get_closest_marker("network"):
        if "unguarded" in _PYTHONPATH:
            if _PYTHONPATH["unguarded"] is None:
                monkeypatch.delenv("PYTHONPATH", raising=False)
            else:
                monkeypatch.setenv("PYTHONPATH", _PYTHONPATH["unguarded"])
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


# The files whose tests take seconds each (real uv locks, many CLI processes, deadlines waited out, fuzzing): marked
# `slow`, for a developer's quick `-m 'not slow'`; the README's command runs them all.
SLOW_FILES = frozenset({
    "test_lock_fast.py", "test_lock_safety.py", "test_lock_fast_spec.py", "test_project_lock.py", "test_lock.py",
    "test_fastpath.py", "test_reliability_deadlines.py", "test_network_faults.py", "test_reliability_linear.py",
    "test_fuzz.py", "test_realworld.py", "test_pip_guard.py", "test_refresh.py", "test_gates.py",
})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)


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
