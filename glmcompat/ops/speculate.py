"""Speculative ``uv lock``: start uv on a predicted pyproject.toml while the core still resolves.

A cold ``glmcompat lock`` spends seconds resolving the core (project pages, METADATA range reads) before it
can write the pyproject.toml that ``uv lock`` needs, and uv then spends seconds more, mostly waiting on the
network. The pyproject.toml is usually predictable: the one already in ``--out`` (a fresh checkout holds the
committed file; a re-lock after a matrix edit holds the previous one), or, for an empty ``--out``, the one the
stack's own pins give. A :class:`Speculation`
runs the real ``uv lock`` on a prediction in a private temporary directory — seeded exactly as the lock itself
would seed its own (the previous uv.lock) — as soon as the prediction is known, and the lock's two ``uv export``
runs after it. Once the core is resolved, :meth:`Speculation.result_for` says whether the run answered the very
question the lock asks: the same pyproject data (TOML comments aside: uv never reads them), the same seed
uv.lock, the same uv binary and environment. Only then is its directory used (its exports only when the
pyproject.toml bytes are the same too), so the outputs are byte for byte those of an unspeculated run; on any
difference it is killed and the lock runs uv as before.

Nothing here writes outside its own temporary directory, and a speculation is always killed and removed
(:meth:`Speculation.discard`) before the process exits: the command line holds the one :func:`start_early` gives
it and hands it to the lock (:func:`glmcompat.ops.lockgen.lock`'s ``spec``), discarding it once the run ends;
nothing is kept in this module between calls.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time

from glmcompat.edges.uv import uv_binary, uv_env
from glmcompat.matrix.locations import read_bounded
from glmcompat.model.cmdline import scan_options
from glmcompat.model.errors import EnvironmentFailure
from glmcompat.ops.lockset import GENERATED, MAX_OUTPUT_BYTES, STAMP

TYPE_CHECKING = False  # not typing's: this module is read before uv starts, and every import delays it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

OFF_ENV = "GLMCOMPAT_NO_SPECULATION"  # set (to anything): never speculate (benchmarks compare both ways)
LOCK = ("lock", "-q")
EXPORTS = (("export", "-q", "--format", "requirements.txt", "--no-emit-project", "-o", "requirements.txt"),
           ("export", "-q", "--format", "pylock.toml", "--no-emit-project", "-o", "pylock.toml"))


class Speculation:
    """One speculative ``uv lock -q`` on ``pyproject`` (seeded with ``uvlock``) in a private temporary directory,
    followed, once it succeeds, by the lock's two ``uv export`` runs (:data:`EXPORTS`) there."""

    def __init__(self, pyproject: bytes, uvlock: bytes | None, requires_python: str | None) -> None:
        self.pyproject = pyproject
        self.uvlock = uvlock
        self.uv = uv_binary()
        self.env = uv_env(requires_python)
        self.path = private_dir(UV_PREFIX)
        self.procs: list[subprocess.Popen[bytes]] = []  # the lock, then the exports as they start
        self._guard = threading.Lock()
        self._stopped = False
        self._chain: threading.Thread | None = None
        self._data: Any = None
        try:
            _write(os.path.join(self.path, "pyproject.toml"), pyproject)
            if uvlock is not None:
                _write(os.path.join(self.path, "uv.lock"), uvlock)
            self._spawn(LOCK)
            self._chain = threading.Thread(target=self._export, name="glmcompat-speculative-export", daemon=True)
            self._chain.start()
        except BaseException:
            self.discard()
            raise

    def _spawn(self, args: tuple[str, ...]) -> subprocess.Popen[bytes] | None:
        with self._guard:
            if self._stopped:
                return None
            p = subprocess.Popen([self.uv, *args], cwd=self.path, env=self.env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            self.procs.append(p)
            return p

    def _export(self) -> None:
        """After the lock: the exports, side by side, in the same directory (each reads uv.lock and writes its own
        file)."""
        try:
            if self.procs[0].wait() != 0:
                return
            started = [self._spawn(args) for args in EXPORTS]
            for p in started:
                if p is not None:
                    p.wait()
        except Exception:
            return  # an export that cannot start: the lock runs its own

    def data(self) -> Any:
        """The predicted pyproject.toml as data (None when it does not parse: then nothing matches it)."""
        if self._data is None:
            import tomllib  # lazy: start-up path (this module is read before uv starts)

            try:
                self._data = tomllib.loads(self.pyproject.decode("utf-8"))
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                self._data = False
        return self._data or None

    def matches(self, text: bytes, uvlock: bytes | None, requires_python: str | None) -> bool:
        """Whether this run answers the lock of ``text`` seeded with ``uvlock``: the same data, the same seed,
        the same uv binary and environment (it may still be running)."""
        import tomllib  # lazy: start-up path (this module is read before uv starts)

        try:
            want = tomllib.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return False
        return bool(self.procs and self.data() is not None and want == self.data() and uvlock == self.uvlock
                    and self.uv == uv_binary() and self.env == uv_env(requires_python))

    def result_for(self, text: bytes, uvlock: bytes | None, requires_python: str | None) -> Path | None:
        """The directory holding uv's lock for ``text`` seeded with ``uvlock`` — when this run answered exactly
        that (:meth:`matches`) and uv succeeded (waits for it); else None (then discard it)."""
        if not self.matches(text, uvlock, requires_python):
            return None
        if self.procs[0].wait() != 0 or not os.path.isfile(os.path.join(self.path, "uv.lock")):
            return None
        if text != self.pyproject:
            # The same data, other bytes (comments): the exports must not read the file while it is replaced.
            self.stop()
            _write(os.path.join(self.path, "pyproject.toml"), text)
        return self.dir

    @property
    def dir(self) -> Path:
        """The private directory uv runs in."""
        from pathlib import Path  # lazy: start-up path (this module is read before uv starts)

        return Path(self.path)

    def exported(self) -> bool:
        """Whether both exports ran to success in :attr:`dir` (waits for them); False once stopped."""
        if self._chain is not None:
            self._chain.join()
        with self._guard:
            return (not self._stopped and len(self.procs) == 1 + len(EXPORTS)
                    and all(p.returncode == 0 for p in self.procs))

    def stop(self) -> None:
        """Stop every uv this speculation started (each one's whole process group); start no other."""
        with self._guard:
            self._stopped = True
            procs = list(self.procs)
        for p in procs:
            _stop(p)
        if self._chain is not None:
            self._chain.join()

    def discard(self) -> None:
        """Stop uv and remove the directory."""
        self.stop()

        remove_private(self.path)


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


UV_PREFIX = "glmcompat-uv-"  # the private directories a lock runs uv in
STALE_AFTER = 60.0  # seconds: a private directory no run holds and untouched this long is a killed run's
_held: dict[str, int] = {}  # private directory -> the descriptor whose flock says a live run uses it


def _roots() -> list[str]:
    names = [os.environ.get(v, "") for v in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp", "/usr/tmp"]
    return [os.path.abspath(r) for r in dict.fromkeys(filter(None, names))]


def temp_failure(e: OSError, path: str | None = None) -> EnvironmentFailure:
    """The error for a failure inside a temporary directory of this run (``path``; else the one
    :func:`private_dir` would take): it names that directory and the variable that chose it, never ``--out``."""
    where = path or e.filename or (_roots() or ["/tmp"])[0]
    chosen = next((f"{v}={os.environ[v]}" for v in ("TMPDIR", "TEMP", "TMP") if os.environ.get(v)), None)
    why = f"the temporary directory {chosen} names" if chosen else "the system's temporary directory"
    return EnvironmentFailure(f"{where}: {e.strerror or e} (in {why}, where glmcompat stages its work; nothing "
                              "was written): free space there or set TMPDIR to a directory with room")


def private_prefixes(prefix: str = UV_PREFIX) -> list[str]:
    """Where the names of the private directories :func:`private_dir` makes begin (no input of a run: what uv
    writes there is its output)."""
    return [os.path.join(root, prefix) for root in _roots()]


def private_dir(prefix: str) -> str:
    """A new directory only this user can enter, under the first temporary directory :mod:`tempfile` would take
    (``TMPDIR``, ``TEMP``, ``TMP``, then ``/tmp``, ``/var/tmp``, ``/usr/tmp``: the first one a directory can be
    made in), where the lock runs its own uv too — so uv's view from it is the same. ``os`` only: tempfile
    imports shutil and ``re``, which would delay the speculative uv. OSError when none can be made.

    The directory is held (an ``flock`` on it) until :func:`remove_private`: one a ``kill -9`` left is no longer
    held, and the next lock removes it (:func:`sweep`)."""
    error: OSError = FileNotFoundError("no usable temporary directory")
    for root in _roots():
        path = os.path.join(root, prefix + os.urandom(8).hex())
        try:
            os.mkdir(path, 0o700)
        except OSError as e:
            error = e
            continue
        try:
            import fcntl  # lazy: optional (POSIX only)

            fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _held[path] = fd
        except (ImportError, OSError):
            pass  # unheld: removed by a sweep only once stale
        return path
    raise error


def remove_private(path: str) -> None:
    """Remove a directory :func:`private_dir` made, and release it."""
    import shutil  # lazy: start-up path (this module is read before uv starts)

    shutil.rmtree(path, ignore_errors=True)
    fd = _held.pop(path, None)
    if fd is not None:
        os.close(fd)


def sweep(prefix: str = UV_PREFIX, stale_after: float = STALE_AFTER) -> list[str]:
    """Remove the private directories (``prefix``) of this user's runs that a kill left behind: not held by any live
    run and untouched for ``stale_after`` seconds. Returns the paths removed; never raises."""
    import shutil  # lazy: start-up path (this module is read before uv starts)

    try:
        import fcntl  # lazy: optional (POSIX only)
    except ImportError:  # pragma: no cover - Windows
        return []
    from glmcompat.matrix.readlog import unlogged  # lazy: start-up path (this module is read before uv starts)

    removed: list[str] = []
    for root in _roots():
        try:
            with unlogged():  # housekeeping: the temporary directory's names are no input of the run
                names = [n for n in os.listdir(root) if n.startswith(prefix)]
        except OSError:
            continue
        for n in names:
            path = os.path.join(root, n)
            try:
                st = os.lstat(path)
                if (st.st_mode & 0o170000) != 0o040000 or st.st_uid != os.getuid() or path in _held \
                        or time.time() - st.st_mtime < stale_after:
                    continue
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live run holds it: leave it
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
            except OSError:
                pass
            finally:
                os.close(fd)
    return removed


def _stop(p: subprocess.Popen[bytes]) -> None:
    if p.poll() is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except OSError:
        p.terminate()
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            p.kill()
        p.wait()


def start(pyproject: bytes, uvlock: bytes | None, requires_python: str | None) -> Speculation | None:
    """A running speculation on this prediction, or None where uv cannot be started (the lock then reports it)
    or where processes are not POSIX ones (a speculation stops uv by its process group)."""
    if os.name != "posix":
        return None
    try:
        return Speculation(pyproject, uvlock, requires_python)
    except Exception:
        return None


def read_prediction(path: str) -> bytes | None:
    """The bytes of a regular file (no link followed, a FIFO never waited on) of at most the output size cap;
    None otherwise: the one safe reader (:func:`glmcompat.matrix.locations.read_bounded`)."""
    return read_bounded(path, MAX_OUTPUT_BYTES)


def requires_python_of(pyproject: bytes) -> str | None:
    """``project.requires-python`` of a pyproject.toml (None when it has none or does not parse). The one-line
    ``requires-python = "..."`` of a ``[project]`` table, as glmcompat writes it, is read without tomllib (whose
    import would delay the speculative uv); any other layout is read with it."""
    table = b""
    for raw in pyproject.split(b"\n"):
        line = raw.strip()
        if line.startswith(b"["):
            table = line
        elif table == b"[project]" and line.startswith(b'requires-python = "') and line.endswith(b'"'):
            value = line[len(b'requires-python = "'):-1]
            if not any(c in value for c in (b'"', b"\\", b"'")):
                return value.decode("ascii", "replace")
    import tomllib  # lazy: start-up path (this module is read before uv starts)

    try:
        value = tomllib.loads(pyproject.decode("utf-8")).get("project", {}).get("requires-python")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return None
    return value if isinstance(value, str) else None


_VALUE_OPTIONS = {"--stack", "--engine", "--target", "--platform", "--model", "--with", "--python", "--out", "--matrix",
                  "--color"}


def predicted_out(argv: list[str], default_stack: str) -> str | None:
    """The output directory ``glmcompat lock ARGV`` most likely writes, from the arguments alone (no matrix):
    ``--out``, else ``locks/<stack>/<target>[-aarch64]`` for the stack named or the default one. None when the
    arguments leave it open, or ask for something a speculation cannot serve (``--check``, ``--index-url``,
    ``--no-cache``)."""
    scanned = scan_options(argv, _VALUE_OPTIONS)
    if scanned is None:
        return None
    opts, rest = scanned
    if any(a in ("--check", "--index-url", "--no-cache", "-h", "--help") or a.startswith("--index-url=") for a in rest):
        return None
    if "--out" in opts:
        return opts["--out"][-1] or None

    def last(option: str) -> str | None:
        return opts[option][-1] if option in opts else None

    engine = last("--engine")
    stack = last("--stack") or (default_stack if engine in (None, "sglang") else "*" if engine == "vllm" else None)
    target = last("--target")
    if not stack or not target or "/" in stack or "/" in target or stack in (".", ".."):
        return None
    platform = last("--platform")
    names = [target] if platform in ("x86_64", "amd64") else [f"{target}-aarch64"] if platform else [target, f"{target}-aarch64"]
    if stack == "*":  # --engine vllm: the newest vLLM stack's lock here (the matrix picks the stack; a guess costs a miss)
        return _newest_vllm_lock(names)
    for n in names:
        if os.path.isfile(os.path.join("locks", stack, n, "pyproject.toml")):
            return os.path.join("locks", stack, n)
    return None


def _newest_vllm_lock(names: list[str]) -> str | None:
    """Of the lock directories ``locks/*/<name>``, the one whose pyproject.toml pins the newest vllm."""
    import glob  # lazy: start-up path (this module is read before uv starts)

    best: tuple[tuple[int, ...], str] | None = None
    for n in names:
        for d in sorted(glob.glob(os.path.join("locks", "*", glob.escape(n)))):
            m = re.search(rb'\n\s*"vllm==([0-9][0-9.]*)"', read_prediction(os.path.join(d, "pyproject.toml")) or b"")
            if m:
                version = tuple(int(x) for x in m.group(1).decode().split(".") if x)
                if best is None or version > best[0]:
                    best = (version, d)
        if best is not None:
            return best[1]
    return None


def _header_fits(header: bytes, argv: list[str]) -> bool:
    """Whether the first line of a generated pyproject.toml could be this request's (a cheap filter: the lock
    compares the data exactly before it uses a speculation)."""
    line = header.split(b"\n", 1)[0].decode("utf-8", "replace")
    withs = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--with"]
    if any(f"--with '{w}'" not in line for w in withs) or line.count("--with ") != len(withs):
        return False
    if ("--upgrade" in argv) != (" --upgrade" in line) or ("--python" in argv) != (" --python " in line):
        return False
    stacks = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--stack"]
    return not stacks or f"--stack {stacks[-1]} " in line


def start_early(argv: list[str], default_stack: str) -> Speculation | None:
    """Before the command's heavy imports: a speculation started on the pyproject.toml glmcompat wrote in the
    output directory this command line most likely names (see :func:`predicted_out`), seeded with the uv.lock
    beside it; the caller hands it to the lock and discards it when the run ends. None where nothing fits. Never
    fails: a wrong guess only costs the killed uv process."""
    if os.environ.get(OFF_ENV):
        return None
    out = predicted_out(argv, default_stack)
    if out is None:
        return None
    text = read_prediction(os.path.join(out, "pyproject.toml"))
    if text is None or not text.startswith(GENERATED) or not _header_fits(text, argv):
        return None
    stamp = read_prediction(os.path.join(out, STAMP))
    if stamp is None or not stamped(stamp, "pyproject.toml", text):
        return None  # uv starts only on a pyproject.toml glmcompat is proven to have written: its stamp records it
    uvlock = read_prediction(os.path.join(out, "uv.lock"))  # None: absent (or not a file the lock would read)
    if uvlock is not None and not stamped(stamp, "uv.lock", uvlock):
        uvlock = None
    return start(text, uvlock, requires_python_of(text))


def stamped(stamp: bytes, name: str, data: bytes) -> bool:
    """Whether the stamp ``stamp`` records ``data`` (by its sha256) as the output ``name``: the stamp's own
    formatting (:func:`glmcompat.ops.publish.stamp_of`), read without json."""
    import hashlib  # lazy: start-up path (hashlib loads OpenSSL)

    return b'"%s": "%s"' % (name.encode(), hashlib.sha256(data).hexdigest().encode()) in stamp
