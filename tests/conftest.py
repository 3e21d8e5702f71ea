from __future__ import annotations

import contextlib
import gc
import ipaddress
import os
import pickle
import py_compile
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
LOCKS = FIXTURES / "locks"


def json_dicts(node: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in a parsed document, the outer one first (a schema's objects, a fixture's project pages)."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from json_dicts(v)
    elif isinstance(node, list):
        for v in node:
            yield from json_dicts(v)

_TOML: dict[str, tuple[tuple[int, int, int], bytes]] = {}  # path -> (its stat as read, the document pickled)


def toml_file(path: Path) -> dict[str, Any]:
    """The TOML document at ``path``, as ``tomllib.loads(path.read_text(encoding="utf-8"))`` reads it: parsed once a
    process while the file's stat (inode, size, mtime) stays (the raise-site tables and the real-log cases are read by a
    dozen modules, at collection and in tests: seconds of tomllib a worker), and a fresh copy each call (unpickled: what
    one caller changes, the next does not see)."""
    st = path.stat()
    sig = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _TOML.get(str(path))
    if hit is None or hit[0] != sig:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        hit = _TOML[str(path)] = (sig, pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL))
        return doc
    return dict(pickle.loads(hit[1]))


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

_SHIPPED: dict[str, Any] = {}  # "files": [(name, bytes)] of the shipped matrix; "body": the entry's payload; "name": its name


def _matrix_contents(paths: Sequence[str | Path] | None) -> list[tuple[str, bytes]]:
    from glmcompat.matrix.store import matrix_files

    return [(f.name, f.read_bytes()) for f in matrix_files(paths)]


_FILES: dict[tuple[str, ...] | None, tuple[tuple[int, ...], list[Path]]] = {}


def _files_of(paths: Sequence[str | Path] | None) -> list[Path]:
    """:func:`glmcompat.matrix.store.matrix_files`, listed again only when a directory given (or the shipped one)
    changed (a file added, removed or renamed changes its stat)."""
    from glmcompat.matrix.store import default_matrix_dir, matrix_files

    key = None if paths is None else tuple(str(p) for p in paths)
    dirs = [Path(p) for p in key] if key is not None else [default_matrix_dir()]
    sig = tuple(x for d in dirs for st in [d.stat()] for x in (st.st_ino, st.st_mtime_ns, st.st_size))
    hit = _FILES.get(key)
    if hit is None or hit[0] != sig:
        if len(_FILES) >= 64:
            _FILES.clear()
        hit = _FILES[key] = (sig, matrix_files(paths))
    return hit[1]


_SAME: set[tuple[tuple[str, int, int, int, int], ...]] = set()  # stats of matrix files read and found the shipped ones


def _is_shipped(paths: Sequence[str | Path] | None) -> bool:
    """Whether matrix files ``paths`` are byte for byte the shipped ones: read and compared once per set of stats
    (device, inode, size, mtime in ns) of those files, so a test does not read the whole matrix again: any write to a
    file changes its stat, and is compared anew."""
    files = _files_of(paths)
    stats = tuple((str(f), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) for f in files for st in [f.stat()])
    if stats in _SAME:
        return True
    if [(f.name, f.read_bytes()) for f in files] != _SHIPPED["files"]:
        return False
    if len(_SAME) >= 64:
        _SAME.clear()
    _SAME.add(stats)
    return True


def _build_matrix_entry(kept: Path | None = None) -> None:
    """The shipped matrix validated (about 0.9 s of CPU a process: pydantic, each pattern's linearity) and its entry
    written into the session's cache. With ``kept``, a directory that outlives the session (:func:`kept_dir`), the
    entry an earlier session wrote for the same files and code is taken from there instead: the entry's name hashes the
    matrix files' content and paths and glmcompat's code (every module's size and mtime); the kept file's name adds
    pydantic's version; and the entry is sealed, so a damaged copy is a miss, validated again as on a cold cache."""
    from glmcompat.matrix.load import cache_entry_name, load_facts
    from glmcompat.matrix.locations import unseal
    from glmcompat.matrix.store import atomic_write, cache_dir

    name = cache_entry_name()
    copy = None
    if kept is not None and name is not None:
        import pydantic  # lazy: the validator's version keys the kept copy

        copy = kept / f"{pydantic.VERSION}-{name}"
        with contextlib.suppress(OSError):
            atomic_write(cache_dir() / name, copy.read_bytes())
    load_facts()  # served from the kept entry, or validates and writes the entry into the session's cache
    entry = (cache_dir() / name).read_bytes() if name else b""
    body = unseal("matrix", name, entry) if name else None
    if body is not None:
        _SHIPPED.update(files=_matrix_contents(None), body=body, name=name)
        with contextlib.suppress(OSError):
            if copy is not None and (not copy.exists() or copy.read_bytes() != entry):  # none kept, or a damaged one
                copy.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(copy, entry)


_SEALED: dict[tuple[str, ...] | None, tuple[str | None, bytes]] = {}  # paths -> (entry name, sealed entry)


def _sealed_entry(paths: Sequence[str | Path] | None) -> tuple[str | None, bytes]:
    """The entry's name and sealed bytes for matrix files ``paths`` that are the shipped ones, computed once per paths
    (the name hashes the files and glmcompat's code, the seal the 400 KB entry: milliseconds every test would pay); for
    the shipped matrix (None), the name of the entry the session validated."""
    key = None if paths is None else tuple(os.path.abspath(p) for p in paths)
    if key not in _SEALED:
        from glmcompat.matrix.load import cache_entry_name
        from glmcompat.matrix.locations import seal

        name = _SHIPPED["name"] if paths is None else cache_entry_name(paths)
        _SEALED[key] = (name, seal("matrix", name, _SHIPPED["body"]) if name is not None else b"")
    return _SEALED[key]


def seed_matrix(cache: Path, paths: Sequence[str | Path] | None = None) -> None:
    """Put the session's matrix entry for ``paths`` (default: the shipped matrix) into the glmcompat cache
    ``cache``, when those files are byte for byte the shipped matrix and no entry is there yet. The shipped matrix's
    entry goes in unread (each test's cache gets it: reading the 46 files' stats a test cost more than the rest of the
    test's set-up): it is named by the files as the session validated them, so if they were changed since, glmcompat
    looks for another name, misses, and validates them as they are."""
    if not _SHIPPED or cache.is_symlink() or (cache.exists() and not cache.is_dir()):
        return
    try:
        if paths is not None and not _is_shipped(paths):
            return
        name, sealed = _sealed_entry(paths)
        if name is not None and not (cache / name).exists():
            cache.mkdir(parents=True, exist_ok=True)
            os.link(_master(name, sealed), cache / name)
    except Exception:  # a matrix or a cache a test made unreadable on purpose: glmcompat meets it as it is
        return


_MASTERS: dict[str, tuple[int, int, int]] = {}  # entry name -> the stat of this process's copy as written


def _master(name: str, sealed: bytes) -> Path:
    """This process's copy of the sealed entry ``name``, which each seeded cache links to (a hard link: no 400 KB written
    per test). glmcompat replaces a cache file by renaming a new one over it, which leaves the copy as it was; a test that
    writes into its entry in place writes into the copy too, so a copy whose stat changed is written anew before it
    is linked again (the tests of one process run one after another)."""
    from glmcompat.matrix.store import atomic_write

    path = _MASTER_DIR[0] / name
    try:
        st = path.stat()
    except OSError:
        st = None
    if st is None or (st.st_ino, st.st_size, st.st_mtime_ns) != _MASTERS.get(name):
        atomic_write(path, sealed)
        st = path.stat()
        _MASTERS[name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return path


_TMP: list[Any] = []  # [the directory of this process's tests' tmp_path directories, how many were made]


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest) -> Path:
    """A fresh empty directory a test (pytest's own lists the session's directory to number each one: a cost that
    grows with every test before it, seconds a file of a few hundred tests); named by the test, numbered by a counter,
    under the session's temporary directory as pytest's are."""
    _TMP[1] += 1
    path = _TMP[0] / f"{re.sub(r'[^A-Za-z0-9_-]', '_', request.node.name)[:30]}{_TMP[1]}"
    path.mkdir()
    return path


_CACHES: list[Any] = []  # [the directory of this process's per-test caches, how many were made]
_MASTER_DIR: list[Path] = []  # this process's directory of entry copies (set by the session fixture)


@pytest.fixture(scope="session", autouse=True)
def _session_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Defaults for the whole session (fixtures of a wider scope than a test run under them): a private glmcompat
    cache, no installer variables of the developer's shell, the socket guard in every Python process a test starts
    (:data:`GUARD`, through ``PYTHONPATH``); and the shipped matrix validated once."""
    mp = pytest.MonkeyPatch()
    mp.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
    mp.setenv("GLMCOMPAT_NO_ARTIFACTS", "1")  # check reads no artifact over the network (ops/artifacts.py)
    mp.setenv("GLMCOMPAT_OFFLINE", "1")  # check's remedy search reads no index unless --index-url names one
    _strip_installer_env(mp, network=True)
    guard = tmp_path_factory.mktemp("socket-guard")
    (guard / "sitecustomize.py").write_text(GUARD)
    # compiled once here: under PYTHONDONTWRITEBYTECODE each of the suite's Python processes compiled it again at start-up
    py_compile.compile(str(guard / "sitecustomize.py"), doraise=True)
    _PYTHONPATH["unguarded"] = os.environ.get("PYTHONPATH")
    mp.setenv("PYTHONPATH", os.pathsep.join([str(guard), *filter(None, [os.environ.get("PYTHONPATH")])]))
    _MASTER_DIR[:] = [tmp_path_factory.mktemp("matrix-entries")]
    _CACHES[:] = [tmp_path_factory.mktemp("caches"), 0]
    _TMP[:] = [tmp_path_factory.mktemp("t"), 0]
    _build_matrix_entry(kept_dir(tmp_path_factory, "glmcompat-matrix-entries"))
    _install_socket_guard(mp)
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _hermetic(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test gets a private cache (holding only the validated shipped matrix); installer variables of the
    developer's shell (``UV_*``, ``PIP_*``) do not leak in; and no connection leaves the machine unless the test is
    marked ``network`` (:func:`_socket_guard`). One fixture with its own MonkeyPatch, undone after the test's own: each
    fixture a test sets up costs pytest's machinery a tenth of a millisecond, six thousand times a run."""
    mp = pytest.MonkeyPatch()
    try:
        _CACHES[1] += 1  # a fresh directory a test (pytest's mktemp lists the directory it numbers in: quadratic)
        cache = _CACHES[0] / f"cache{_CACHES[1]}"
        cache.mkdir()
        seed_matrix(cache)
        mp.setenv("GLMCOMPAT_CACHE_DIR", str(cache))
        network = request.node.get_closest_marker("network") is not None
        _strip_installer_env(mp, network=network)
        if network:  # the session sets GLMCOMPAT_NO_ARTIFACTS and GLMCOMPAT_OFFLINE; these read the index
            mp.delenv("GLMCOMPAT_NO_ARTIFACTS", raising=False)
            mp.delenv("GLMCOMPAT_OFFLINE", raising=False)
        _socket_guard(request.node.nodeid, network, mp)
        yield
    finally:
        _GUARDED.clear()
        mp.undo()


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


_GUARDED: list[str] = []  # the node id of the test running now, unless it is marked network: the guard refuses for it
_UNGUARDED: dict[str, Any] = {}  # the socket functions as they were before the session's guard


def _install_socket_guard(mp: pytest.MonkeyPatch) -> None:
    """The socket functions wrapped once a session (undone with ``mp``): each checks the address while a test not marked
    ``network`` runs (:data:`_GUARDED`, set by :func:`_socket_guard`), and passes through otherwise (a fixture of a
    wider scope, between tests)."""
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo
    _UNGUARDED.update(connect=connect, connect_ex=connect_ex, getaddrinfo=getaddrinfo)

    def check(sock: socket.socket, address: Any) -> None:
        if _GUARDED and sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
            raise NetworkBlocked(f"{_GUARDED[0]} is not marked network but connects to {address[0]!r}")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if _GUARDED:
            name = host.decode() if isinstance(host, bytes) else host
            if name is not None and not _is_local(name) and not str(name).rstrip(".").lower().endswith(".invalid"):
                raise NetworkBlocked(f"{_GUARDED[0]} is not marked network but looks up {name!r}")
        return getaddrinfo(host, *args, **kwargs)

    mp.setattr(socket.socket, "connect", guarded_connect)
    mp.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    mp.setattr(socket, "getaddrinfo", guarded_getaddrinfo)


def _socket_guard(nodeid: str, network: bool, mp: pytest.MonkeyPatch) -> None:
    """Refuse, in the test process and the Python processes it starts, any connection or name look-up beyond this
    machine (loopback: the local index servers the tests run) unless the test is marked ``network``. Names under
    ``.invalid`` (RFC 6761: never resolved) are looked up as usual: tests use them to see a name fail. A test marked
    ``network`` runs with the socket functions as they were and its processes without the guard."""
    if not network:
        _GUARDED[:] = [nodeid]
        return
    if _UNGUARDED:
        mp.setattr(socket.socket, "connect", _UNGUARDED["connect"])
        mp.setattr(socket.socket, "connect_ex", _UNGUARDED["connect_ex"])
        mp.setattr(socket, "getaddrinfo", _UNGUARDED["getaddrinfo"])
    if "unguarded" in _PYTHONPATH:
        if _PYTHONPATH["unguarded"] is None:
            mp.delenv("PYTHONPATH", raising=False)
        else:
            mp.setenv("PYTHONPATH", _PYTHONPATH["unguarded"])


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            process: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``glmcompat ARGS`` and return its exit code, stdout and stderr as a finished process does: in this process,
    through :func:`glmcompat.cli.main` (the streams captured, ``cwd`` and ``env`` in effect for the call only), or, with
    ``process``, as a real ``python -m glmcompat`` process -- where the process is the point: the start-up paths, what
    a fresh interpreter imports, signals, the hook. The cache it uses gets the session's validated matrix
    (:func:`seed_matrix`) for the shipped files and for ``--matrix`` copies of them."""
    full_env = {**os.environ, **(env or {})}
    cache = full_env.get("GLMCOMPAT_CACHE_DIR")
    if cache and "--no-cache" not in args:
        base = Path(cwd) if cwd is not None else Path.cwd()
        seed_matrix(base / cache)
        given = [a.split("=", 1)[1] if a.startswith("--matrix=") else args[i + 1]
                 for i, a in enumerate(args) if a.startswith("--matrix=") or (a == "--matrix" and i + 1 < len(args))]
        if given:
            seed_matrix(base / cache, [str(base / g) for g in given])
    if process:
        return subprocess.run([sys.executable, "-m", "glmcompat", *args], capture_output=True, text=True, cwd=cwd,
                              env=full_env, timeout=120)
    return _in_process(list(args), cwd, env or {})


def run_process(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` as a real process (the start-up paths, a fresh interpreter's imports, signals, the hook)."""
    return run_cli(*args, cwd=cwd, env=env, process=True)


def _in_process(args: list[str], cwd: Path | None, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import contextlib
    import io

    from glmcompat import cli

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code: object = cli.main(args)
            except SystemExit as e:  # argparse's usage errors and --help, as the interpreter turns them into codes
                code = e.code
                if code is not None and not isinstance(code, int):
                    print(code, file=sys.stderr)
                    code = 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["glmcompat", *args], int(code or 0), out.getvalue(), err.getvalue())  # type: ignore[call-overload]


GROWTH = 4  # growth() compares run(4 n) with run(n): 4 when linear, 16 when quadratic
LINEAR = 8.0  # the bound between them: a bigger input's cache misses on a loaded machine stay well under it


def growth(run: Callable[[int], object], n: int, repeat: int = 3) -> float:
    """How long ``run(GROWTH * n)`` takes against ``run(n)``, each the best of ``repeat`` runs, in turn: about 4 for a
    linear cost, 16 for a quadratic one, whatever the machine's load: a ratio measured in one test, never a wall-time
    bound, and of this process's CPU time (what other processes take of the machine is not in it); :data:`LINEAR`
    tells them apart."""
    best = {n: float("inf"), GROWTH * n: float("inf")}
    for attempt in range(2):  # a ratio past LINEAR is measured again, as long again (a loaded machine's stray slow run)
        for _ in range(repeat * (attempt + 1)):
            for size in best:
                t = time.process_time()
                run(size)
                best[size] = min(best[size], time.process_time() - t)
        if best[GROWTH * n] / max(best[n], 1e-9) < LINEAR:
            break
    return best[GROWTH * n] / max(best[n], 1e-9)


def kept_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A directory for artifacts a test builds in seconds from fixed inputs (nvcc libraries, hostile wheels), kept
    beside pytest's numbered temporary directories (``pytest-of-USER``), which outlive a session, so that a later
    session finds them: under xdist a worker's temporary directory is one level deeper (``pytest-N/popen-gwK``), and
    the numbered ``pytest-N`` is per session. The caller keys what it keeps by its inputs."""
    base = tmp_path_factory.getbasetemp()
    root = next((p for p in base.parents if p.name.startswith("pytest-of-")), base.parent)
    return root / name


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the cores this process may use. Much of the suite waits (real uv and pip
    processes, local index servers, the deadline tests' sleeps) rather than computes, so a third worker on two cores
    fills that time: measured here on 2 cores, the suite took 144 s with 3 workers and 145 s with 2 on a quiet
    machine, and 227 s against 275 s beside two CPU-bound loops (the scheduler shares the cores per process)."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_itemcollected(item: pytest.Item) -> None:
    """A test marked xfail without a condition (a known miss: ``xfail(reason=..., strict=...)``) reports its expected
    failure as the exception's own text, not as pytest's traceback: a failure in its call is always reported as xfailed,
    whose traceback no report shows, and building it parsed the test's whole module once a frame (about 30 ms each, the
    most of such a test's time). Not with ``--runxfail`` (the failure is then a failure, shown in full), nor for a marker
    with a condition, ``raises`` (another exception fails the test) or ``run=False``."""
    if item.config.option.runxfail or not isinstance(item, pytest.Function):
        return
    marks = list(item.iter_markers("xfail"))
    if not marks or any(m.args or {"condition", "raises"} & m.kwargs.keys() or not m.kwargs.get("run", True) for m in marks):
        return

    def expected_failure(excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return excinfo.exconly()

    item.repr_failure = expected_failure  # type: ignore[method-assign]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker (``--dist loadfile`` hands out whole files in collection order), the files holding the most
    tests marked ``slow`` go first, each file's tests in their order: the worker that picks a long file last would
    otherwise run on alone while the other has finished. A run in one process keeps the collection order."""
    if not hasattr(config, "workerinput"):
        return
    from collections import Counter

    def file(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    slow = Counter(file(item) for item in items if item.get_closest_marker("slow") is not None)
    items.sort(key=lambda item: -slow[file(item)])  # stable: files of equal weight keep their order


def _freeze() -> None:
    """What the process holds now moved out of the garbage collector's generations (:func:`gc.freeze`), after a
    collection of what is garbage already: the imported modules, their tables and compiled patterns, the collected
    items, the caches the tests so far have filled. Each full collection walked all of it again (a few dozen a worker,
    a tenth of a second each: four in five seconds of the collector's time); objects made later are collected as
    before, and anything frozen is still freed when nothing refers to it."""
    gc.collect()
    gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once a process has collected (:func:`_freeze`)."""
    _freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the last test of a file, its module's fixtures torn down (:func:`_freeze`)."""
    yield
    if nextitem is None or nextitem.path != item.path:
        _freeze()


def pytest_configure(config: pytest.Config) -> None:
    """Once per session, in the controller: the package's bytecode compiled, as an install compiles it. Where the
    environment sets PYTHONDONTWRITEBYTECODE, no process writes it, so each of the suite's hundreds of
    ``python -m glmcompat`` children would compile the package from source again (about 0.13 s of CPU each);
    ``compileall`` writes it regardless and leaves up-to-date files alone. In each process, pytest keeps the test
    modules' rewritten bytecode as it does by default (``__pycache__``, git-ignored): under PYTHONDONTWRITEBYTECODE each
    worker rewrote and compiled every test module at each collection, about 3 s of CPU a worker a run."""
    sys.dont_write_bytecode = False
    if hasattr(config, "workerinput"):
        return
    import compileall

    compileall.compile_dir(str(ROOT / "glmcompat"), quiet=1)
    _rewrite_tests(config)


def _rewrite_tests(config: pytest.Config) -> None:
    """The test modules' rewritten bytecode (pytest's assertion rewriting, kept in ``__pycache__`` as pytest keeps it),
    written once by the controller before the workers start: in a fresh checkout each xdist worker rewrote and compiled
    every test module itself as it collected them, all at once (about 4 s of CPU a worker). A module whose cached
    bytecode is current is left alone; a pytest whose rewriting machinery has moved leaves it to the workers, which
    rewrite what they find missing, as before. Not with ``--assert=plain`` (nothing is rewritten)."""
    import fnmatch

    try:
        from _pytest.assertion import rewrite
    except ImportError:  # pragma: no cover - a pytest without the module: the workers rewrite
        return
    state = config.stash.get(rewrite.assertstate_key, None)
    if state is None or not config.getoption("numprocesses", None):
        return  # no rewriting, or no workers: the one process rewrites each module as it imports it
    patterns = config.getini("python_files")
    try:
        for fn in sorted((ROOT / "tests").rglob("test_*.py")):
            if not any(fnmatch.fnmatch(fn.name, pat) for pat in patterns) or "fixtures" in fn.relative_to(ROOT).parts:
                continue
            pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(fn, pyc) is None and rewrite.try_makedirs(pyc.parent):
                source_hash, co = rewrite._rewrite_test(fn, config)
                rewrite._write_pyc(state, co, source_hash, pyc)
    except (AttributeError, TypeError, ValueError):  # pragma: no cover - pytest's private API changed: the workers rewrite
        return
