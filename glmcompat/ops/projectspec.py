"""Speculative ``uv lock`` for a project lock (issue 39): uv runs while the core still resolves.

A cold ``glmcompat lock`` in a project resolves the core (index pages, METADATA) before it knows the constraints it
writes, and ``uv lock`` then spends as long again, mostly waiting on the network. So, as soon as the command knows
the project (before the matrix loads), :func:`start` runs the real ``uv lock`` on the project *as the user wrote it*
(its pyproject.toml, the uv.lock it holds, the files of its root uv reads) in a private temporary directory
(:func:`glmcompat.ops.speculate.private_dir`): its prediction is that the core uv picks on its own is the safe one.
Once the matrix is loaded, :func:`start_predicted` starts a second one on the pyproject.toml the lock most likely
writes (the core resolved over the matrix's own releases: a kernel release pins its torch build, torch its family),
so that where uv alone picks another torch the lock still has a head start. Once the core is resolved,
:func:`settle` takes whichever answers first of:

* the first run, when every core package its lock holds is at the version the core pins (the prediction held):
  the lock it wrote, with glmcompat's constraints recorded in its ``[manifest]`` as uv records them;
* the predicted run, where the pyproject.toml written is byte for byte its prediction, else a run on the new
  pyproject.toml, started once the first run is in doubt (uv's log keeps a core package at another version than
  the core's, or its lock does not hold: two uv resolving at once slow each other): the lock uv wrote for exactly
  the new pyproject.toml and the same seed (the first run itself, where the pyproject.toml written is the one it
  ran on: a project that held glmcompat's lines and no uv.lock, its core unchanged).

Either way the lock is written in place (atomically, after the pyproject.toml) only for uv itself to confirm it:
``uv lock --offline --check`` in the project says the lock is current for the new pyproject.toml, so it is the
lock a ``uv lock`` there keeps, byte for byte. Anything else (uv fails, the check fails, the inputs changed) and
the lock is put back as it was and the caller runs ``uv lock`` in place as before. Nothing here writes into the
project but through that one confirmed path, and every uv started here is killed and its directory removed
(:meth:`Run.discard`) before the command returns. ``GLMCOMPAT_NO_SPECULATION`` turns it off.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TypeVar

from glmcompat.edges.uv import uv_binary
from glmcompat.ops.speculate import OFF_ENV, UV_PREFIX, private_dir, remove_private

T = TypeVar("T")

TYPE_CHECKING = False  # not typing's: :func:`start_early` runs before the command's imports, and each one delays uv
if TYPE_CHECKING:
    from glmcompat.edges.index import IndexOptions

SEEDS = ("uv.toml", ".python-version", ".python-versions")  # files of the project root uv reads besides the two
_REFUSED = (b"# glmcompat lock", b"workspace", b"sources", b"dynamic", b"\r")  # a copy might lock otherwise: none
# a project whose lock uv gives a [manifest] of its own (constraints, overrides, groups, members): a lock of it never
# takes glmcompat's constraints by :func:`with_manifest`, so the run on the new pyproject.toml starts at once
_MANIFESTED = (b"constraint-dependencies", b"override-dependencies", b"build-constraint", b"dependency-groups",
               b"dev-dependencies", b"members")
# uv's resolver log (-v): "DEBUG Selecting: torch==2.9.1 [compatible] (torch-2.9.1-cp311-...whl)"; the file is one of
# the release's (the one uv's log names), "(virtual)" or absent for the project itself
_SELECTING = re.compile(rb"Selecting: (?P<name>[A-Za-z0-9][A-Za-z0-9._-]{0,200})==(?P<version>[^\s\[]{1,100})"
                        rb"(?: \[[^\]\n]{0,40}\])?(?: \((?P<file>[^()\s]{1,300})\))?")
_PACKAGE = re.compile(rb'\[\[package\]\]\nname = "([^"\n]+)"\nversion = "([^"\n]+)"')  # at the start of a line
_PACKAGE_HEAD = b'[[package]]\nname = "'


def uv_env(index: IndexOptions | None) -> dict[str, str]:
    """The environment every ``uv`` of a project lock runs in: the caller's, no interpreter downloads, and the
    command line's index options (:meth:`IndexOptions.uv_env`; None: the defaults, which add nothing)."""
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": os.environ.get("UV_PYTHON_DOWNLOADS", "never")}
    if index is not None and index.url:
        env.pop("UV_INDEX_URL", None)
    env.update(index.uv_env() if index is not None else {})
    return env


class Run:
    """One ``uv lock`` in a private directory holding ``files`` (name -> bytes)."""

    def __init__(self, files: Mapping[str, bytes], env: dict[str, str]) -> None:
        self.files, self.env = dict(files), env
        self.guessed = False  # a run on the pyproject.toml glmcompat.ops.projectguess guessed (start_early's)
        self.path = private_dir(UV_PREFIX)
        self.proc: subprocess.Popen[bytes] | None = None
        self._selected: list[tuple[str, str, str]] = []  # (name, version, file) of each release uv's log selects
        self._listeners: list[Callable[[str, str, str], None]] = []
        self._mutex = threading.Lock()
        self._reader: threading.Thread | None = None
        try:
            for name, data in self.files.items():
                with open(os.path.join(self.path, name), "wb") as f:
                    f.write(data)
            # -v: uv's log names each release as it selects it (:meth:`on_select`); the lock it writes is the same
            self.proc = subprocess.Popen([uv_binary(), "lock", "-v"], cwd=self.path, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
            self._reader = threading.Thread(target=self._read_log, args=(self.proc.stderr,), daemon=True,
                                            name="glmcompat-uvlog")
            self._reader.start()
        except BaseException:
            self.discard()
            raise

    def _read_log(self, stream: IO[bytes] | None) -> None:
        """Read uv's log to its end (uv never blocks on a full pipe), telling each selection to the listeners."""
        if stream is None:
            return
        try:
            for line in stream:
                m = _SELECTING.search(line) if b"Selecting: " in line else None
                if m is None:
                    continue
                got = (m["name"].decode("utf-8", "replace"), m["version"].decode("utf-8", "replace"),
                       (m["file"] or b"").decode("utf-8", "replace"))
                with self._mutex:
                    self._selected.append(got)
                    listeners = list(self._listeners)
                _tell(listeners, [got])
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def on_select(self, fn: Callable[[str, str, str], None]) -> None:
        """Call ``fn(name, version, file)`` for each release uv selects: those selected so far at once, then each as
        uv's log names it (from the thread reading the log; ``fn`` returns at once and never raises)."""
        with self._mutex:
            self._listeners.append(fn)
            so_far = list(self._selected)
        _tell([fn], so_far)

    def done(self) -> bool:
        return self.proc is None or self.proc.poll() is not None

    def lock(self) -> bytes | None:
        """The uv.lock uv wrote (waits for it); None when uv failed."""
        if self.proc is None or self.proc.wait() != 0:
            return None
        if self._reader is not None:
            self._reader.join(timeout=5)  # uv's log read to its end: every selection told before its lock is
        try:
            with open(os.path.join(self.path, "uv.lock"), "rb") as f:
                return f.read()
        except OSError:
            return None

    def wait(self, timeout: float) -> None:
        """Wait ``timeout`` seconds, or less where uv's log ends first (it closes as uv exits): a caller polling
        :meth:`done` hears of the exit at once, not at its next tick."""
        reader = self._reader
        if reader is not None and reader.is_alive():
            reader.join(timeout)
        else:
            time.sleep(timeout)

    def discard(self) -> None:
        """Stop uv (its whole process group) and remove the directory (again: nothing more)."""
        _stop(self.proc)
        remove_private(self.path)


def _stop(p: subprocess.Popen[bytes] | None) -> None:
    """Kill ``p``'s whole process group where it still runs, and reap it."""
    if p is not None and p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            p.kill()
        p.wait()


def _tell(listeners: list[Callable[[str, str, str], None]], selected: list[tuple[str, str, str]]) -> None:
    """Each of ``selected`` to each listener; one that raises is not heard (a listener never stops the log)."""
    for got in selected:
        for fn in listeners:
            try:
                fn(*got)
            except Exception:
                pass


_NOT_EARLY = ("--index-url", "--no-cache", "--project", "--dry-run", "--check", "--stack", "--out", "--with", "--engine",
              "--matrix", "-h", "--help", "-o", "--output-file")
_VALUED = ("--target", "--platform", "--model", "--python", "--color", "--driver", "--glibc")


def start_early(argv: list[str]) -> Run | LockCheck | None:
    """Before the command's heavy imports, for ``glmcompat lock ARGV`` in a project found from the working directory
    with no option that changes what uv is asked (the index, a project or requirements file named, a dry run or a
    check): the ``uv lock`` the lock most likely takes, returned to the caller, which hands it to the command and
    discards it when the run ends, taken or not -- where the shipped table guesses the pyproject.toml the lock writes
    (:func:`glmcompat.ops.projectguess.guess`), a run on that one (:func:`start_predicted`, marked ``guessed``: the
    command takes it as its predicted run), else :func:`start` on the nearest pyproject.toml as it is (a locked
    project's: :class:`LockCheck`). None where nothing fits; never fails."""
    try:
        prev = ""
        for a in argv:
            if a.split("=", 1)[0] in _NOT_EARLY or (not a.startswith("-") and prev not in _VALUED):
                return None
            prev = a
        d = os.getcwd()
        while not os.path.isfile(os.path.join(d, "pyproject.toml")):
            if os.path.dirname(d) == d:
                return None
            d = os.path.dirname(d)
        from glmcompat.ops.projectguess import guess  # lazy: the project lock's start only

        seed = guess(Path(d), argv)
        run = start_predicted(Path(d), seed, None) if seed is not None else None
        if run is not None:
            run.guessed = True
            return run
        root = Path(d)
        if "--upgrade" in argv and (root / "uv.lock").is_file() and _REFUSED[0] in (root / "pyproject.toml").read_bytes():
            return None  # a locked project's: --upgrade resolves again, so the lock as it is is not asked about
        return start(root / "pyproject.toml", None)
    except Exception:
        return None


def _root_files(root: Path, pyproject: bytes, uvlock: bytes | None) -> dict[str, bytes] | None:
    files = {"pyproject.toml": pyproject}
    if uvlock is not None:
        files["uv.lock"] = uvlock
    for name in SEEDS:
        p = root / name
        if p.is_symlink() or (p.exists() and not p.is_file()):
            return None
        if p.is_file():
            files[name] = p.read_bytes()
    return files


def start(pyproject: Path, index: IndexOptions | None) -> Run | LockCheck | None:
    """``uv lock`` of the project whose root pyproject.toml is ``pyproject``, as it is, in a private copy; None
    where it is off, where the project is one a copy might lock otherwise (a workspace, ``[tool.uv.sources]``,
    dynamic metadata), or where uv cannot start. Never fails. A project that already holds glmcompat's lines beside
    a uv.lock (a clone of a locked project) starts from them, uv in place (:func:`glmcompat.ops.projectlock._as_is`):
    for it, :func:`check` instead (``uv lock --check`` in place, which writes nothing). (glmcompat's lines without a
    uv.lock -- a project committed without its lock -- are the likeliest answer itself: the run then asks exactly the
    question the lock asks where the core stays, and :func:`settle` takes its lock as it is.)"""
    root = pyproject.parent
    if (root / "uv.lock").is_file():
        try:
            if _REFUSED[0] in (root / "pyproject.toml").read_bytes():
                return check(root, index)
        except OSError:
            return None
    return _start(root, None, _REFUSED[1:], index)


class LockCheck:
    """``uv lock --check`` in the project itself (issue 39: a fresh clone of a locked project), started before the
    command's imports: it writes nothing (uv's cache aside), and where it passes, ``uv lock`` there leaves uv.lock
    byte for byte as it is (uv's own definition of ``--check``), so :func:`glmcompat.ops.projectlock._as_is` need not
    run it after the matrix loads. ``files``: the project root's files uv reads (as :func:`_root_files` names them),
    read before uv started; :meth:`confirms` holds only where they are the same bytes after it exited."""

    guessed = False  # never a run on a guessed pyproject.toml (:func:`start_early`'s callers read it of either kind)

    def __init__(self, root: Path, files: Mapping[str, bytes], env: dict[str, str]) -> None:
        self.root, self.files, self.env = os.path.realpath(root), dict(files), env
        self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [uv_binary(), "lock", "--check"], cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)

    def confirms(self, root: Path, env: Mapping[str, str]) -> bool:
        """Whether uv said the lock of ``root`` is current (waits for it), asked in ``env``, of the files ``root``
        holds now (the same bytes before uv started and now)."""
        if self.proc is None or os.path.realpath(root) != self.root or dict(env) != self.env or self.proc.wait() != 0:
            return False
        try:
            return _root_files(root, (root / "pyproject.toml").read_bytes(), (root / "uv.lock").read_bytes()) == self.files
        except OSError:
            return False

    def discard(self) -> None:
        """Stop uv (its whole process group) where it still runs (again: nothing more)."""
        _stop(self.proc)


def check(root: Path, index: IndexOptions | None) -> LockCheck | None:
    """:class:`LockCheck` of the project at ``root`` (glmcompat's lines beside a uv.lock); None where it is off, where
    the project is one whose files besides the root's uv reads (a workspace, ``[tool.uv.sources]``, dynamic
    metadata: those are not compared), or where uv cannot start. Never fails."""
    if os.environ.get(OFF_ENV) or os.name != "posix":
        return None
    try:
        data = (root / "pyproject.toml").read_bytes()
        if any(word in data for word in _REFUSED[1:]):
            return None
        files = _root_files(root, data, (root / "uv.lock").read_bytes())
        return LockCheck(root, files, uv_env(index)) if files is not None else None
    except Exception:
        return None


def start_predicted(root: Path, predicted: bytes | None, index: IndexOptions | None) -> Run | None:
    """``uv lock`` of the project at ``root`` with ``predicted`` as its pyproject.toml (the one the lock most likely
    writes: :func:`glmcompat.ops.projectlock._predicted`), seeded with the project's uv.lock and root files, in a
    private copy; :func:`settle` takes its lock only where the pyproject.toml written is byte for byte ``predicted``,
    so its lock is the one uv writes for exactly those files. None where it is off, where there is no prediction,
    where a copy might lock otherwise or uv cannot start. Never fails."""
    return None if predicted is None else _start(root, predicted, _REFUSED[1:], index)


def _start(root: Path, seed: bytes | None, refused: tuple[bytes, ...], index: IndexOptions | None) -> Run | None:
    """``uv lock`` in a private copy of ``root``'s files with ``seed`` as the pyproject.toml (None: the project's
    own), unless the project's own pyproject.toml holds a ``refused`` word; see :func:`start`."""
    if os.environ.get(OFF_ENV) or os.name != "posix":
        return None
    try:
        data = (root / "pyproject.toml").read_bytes()
        if any(word in data for word in refused):
            return None
        lock = root / "uv.lock"
        files = _root_files(root, data if seed is None else seed, lock.read_bytes() if lock.is_file() else None)
        return Run(files, uv_env(index)) if files is not None else None
    except Exception:
        return None


def packages(lock: bytes) -> list[dict[str, str]]:
    """``name`` and ``version`` of each ``[[package]]`` of a uv.lock, from the two lines uv writes first in each (a
    package without a version line is left out); empty where none is of that shape."""
    found = []
    at = lock.find(_PACKAGE_HEAD)  # found by a plain search, each tried where a line starts (a regular expression
    while at >= 0:  # tried at every line's start took 8 ms of a 1.4 MB lock, twice after a cold lock's uv answered)
        m = _PACKAGE.match(lock, at) if at == 0 or lock[at - 1] == 10 else None
        if m is not None:
            found.append({"name": m[1].decode("utf-8", "replace"), "version": m[2].decode("utf-8", "replace")})
        at = lock.find(_PACKAGE_HEAD, at + 1)
    return found


def holds(lock: bytes, pins: Mapping[str, str]) -> bool:
    """Whether every core package ``lock`` holds is at the version ``pins`` gives it (local label aside)."""
    from glmcompat.decide.stacks import CORE  # lazy: start-up path (start_early imports this module before uv starts)

    return all(pins.get(p["name"]) == p["version"].split("+")[0] for p in packages(lock) if p["name"] in CORE)


def with_manifest(lock: bytes, pins: Mapping[str, str], overrides: Mapping[str, str]) -> bytes | None:
    """``lock`` with the core recorded as uv records ``constraint-dependencies`` and ``override-dependencies`` in its
    ``[manifest]``; None where the lock has a manifest already (uv's to write)."""
    cons = [(n, v) for n, v in sorted(pins.items()) if n not in overrides]
    if not cons and not overrides:
        return lock
    at = lock.find(b"\n\n[[package]]\n")
    if b"\n[manifest]\n" in lock or at < 0:
        return None

    def table(key: str, items: list[tuple[str, str]]) -> str:
        rows = "".join(f'    {{ name = "{n}", specifier = "=={v}" }},\n' for n, v in items)
        return f"{key} = [\n{rows}]\n" if items else ""

    block = "\n[manifest]\n" + table("constraints", cons) + table("overrides", sorted(overrides.items()))
    return lock[:at + 1] + block.encode() + lock[at + 1:]


def _new_mode() -> int:
    """The mode uv gives a new uv.lock: 0666 less the umask (read from /proc where it can be: setting the umask to
    read it would change it for the threads running meanwhile)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            mask = next(int(line.split()[1], 8) for line in f if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def settle(first: Run | None, root: Path, old_py: bytes, old_lock: bytes | None, new_py: bytes, pins: Mapping[str, str],
           overrides: Mapping[str, str], index: IndexOptions, lock_mode: int | None, predicted: Run | None = None,
           meanwhile: Callable[[], T] | None = None, started: Callable[[Run], None] | None = None
           ) -> tuple[subprocess.CompletedProcess[str] | None, T | None]:
    """The lock for ``new_py`` (already written in place) from the speculation ``first``, from ``predicted`` where it
    ran on exactly the files the project now holds (:func:`start_predicted`), or from a run on ``new_py`` started
    now, written to ``root``'s uv.lock and confirmed there by ``uv lock --offline --check`` (its process is
    returned); None, with uv.lock as it was, where none gives one uv confirms (the caller runs ``uv lock``).
    ``predicted`` is the caller's to discard; a run that did not answer this question is stopped here at once.
    ``meanwhile``: what the caller does with the lock written in place while uv checks it (judging it), its value
    returned beside the check's process, None where the lock was not confirmed (and the value is then worthless).
    ``started``: told of a run started here on ``new_py`` (its selections are the likely lock's)."""
    env = uv_env(index)
    if first is not None and (first.files.get("pyproject.toml") != old_py or first.files.get("uv.lock") != old_lock
                              or first.env != env):
        first = None
    files = _root_files(root, new_py, old_lock)
    second: Run | None = None
    if predicted is not None and files is not None and predicted.files == files and predicted.env == env:
        second, predicted = predicted, None  # the very question: no need to ask it again
    elif predicted is not None:
        predicted.discard()  # another question: its uv only slows what is left
    if second is None and first is not None and files is not None and first.files == files:
        second, first = first, None  # the project as it was is the very question (its core stays): its lock as it is
    if first is None and second is None:
        return None, None
    spare: Callable[[], Run | None] | None = None
    if second is None and files is not None and first is not None and files == {**first.files, "pyproject.toml": new_py}:
        def spare() -> Run | None:
            try:
                run = Run(files, env)
                if started is not None:
                    started(run)
                return run
            except Exception:
                return None

        if any(word in old_py for word in _MANIFESTED):
            second, spare = spare(), None  # uv records a manifest of its own here: the first run's lock is never taken
    runs: list[Run] = []  # the run on the new pyproject.toml, where _first_answer starts it
    try:
        got = _first_answer(first, second, pins, overrides, spare, runs)
        if got is None:
            return None, None
        from glmcompat.matrix.store import atomic_write  # lazy: start-up path (see holds)

        lock = root / "uv.lock"
        atomic_write(lock, got, mode=lock_mode if lock_mode is not None else _new_mode())
        value: T | None = None
        try:
            args = [uv_binary(), "lock", "--offline", "--check"]
            with subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  stdin=subprocess.DEVNULL) as check:
                try:
                    value = meanwhile() if meanwhile is not None else None
                finally:
                    out, err = check.communicate()
            p = subprocess.CompletedProcess(args, check.returncode, out, err)
        except BaseException:
            restore(lock, old_lock, lock_mode)
            raise
        if p.returncode != 0:
            restore(lock, old_lock, lock_mode)
            return None, None
        return p, value
    finally:
        for run in [second, *runs]:
            if run is not None:
                run.discard()


def _first_answer(first: Run | None, second: Run | None, pins: Mapping[str, str], overrides: Mapping[str, str],
                  spare: Callable[[], Run | None] | None = None, runs: list[Run] | None = None) -> bytes | None:
    """The lock of whichever run answers first: ``first``'s (the manifest added) where its prediction held, else
    ``second``'s; None where neither does. ``spare``: starts the run on the new pyproject.toml in ``second``'s place
    (appended to ``runs``, the caller's to discard), only once the first's prediction is in doubt -- uv's log selects a
    core package at another version than ``pins`` (the lock would then not hold them), or its lock does not hold --
    so that where it holds, uv alone has the machine (two uv resolving at once slow each other)."""
    doubt = _Doubt(pins)
    if first is not None and second is None and spare is not None:
        first.on_select(doubt.heard)
    tried = first is None
    while True:
        if second is None and spare is not None and (tried or doubt):
            second, spare = spare(), None
            if second is not None and runs is not None:
                runs.append(second)
        if not tried and first is not None and first.done():
            tried = True
            got = first.lock()
            if got is not None and holds(got, pins):
                synthesized = with_manifest(got, pins, overrides)
                if synthesized is not None:
                    return synthesized
            if second is None and spare is None:
                return None
            continue  # the run on the new pyproject.toml is all that is left: started above, then waited for
        if second is not None and (tried or second.done()):
            return second.lock()  # waits for it, where it is all that is left (woken as uv exits, not polled)
        if second is None and spare is None and tried:
            return None
        if not tried and first is not None:
            first.wait(0.005)  # woken as its uv exits (the lock read at once: issue 39)
        else:
            time.sleep(0.005)


class _Doubt:
    """Whether the run on the project as written is in doubt: the version uv's log last selected of some core
    package has not been the one ``pins`` gives it (:func:`_contradicts`) for :data:`DOUBT_AFTER` seconds. The last
    one, and for a while: a forking resolution tries a version in one fork and settles on another within
    milliseconds (the SGLang API project: torch 2.15.0 selected once, then 2.14.1 in every fork; its lock holds
    2.14.1)."""

    def __init__(self, pins: Mapping[str, str]) -> None:
        self.pins = pins
        self.wrong: set[str] = set()
        self.since: float | None = None  # when ``wrong`` last became non-empty
        self.mutex = threading.Lock()

    def heard(self, name: str, version: str, _file: str) -> None:
        with self.mutex:
            if _contradicts(name, version, self.pins):
                self.wrong.add(name.lower())
            else:
                self.wrong.discard(name.lower())
            self.since = (self.since or time.monotonic()) if self.wrong else None

    def __bool__(self) -> bool:
        with self.mutex:
            return self.since is not None and time.monotonic() - self.since >= DOUBT_AFTER


DOUBT_AFTER = 0.25  # seconds a core package stays at another version than the core's before the second run starts


def _contradicts(name: str, version: str, pins: Mapping[str, str]) -> bool:
    """Whether uv selecting ``name==version`` leaves a lock :func:`holds` refuses (a core package at another version
    than ``pins`` gives it, local label aside), were it kept."""
    from glmcompat.decide.stacks import CORE  # lazy: start-up path (see holds)
    from glmcompat.model.names import canonicalize  # lazy: as above

    n = canonicalize(name)
    return n in CORE and pins.get(n) != version.split("+")[0]


def restore(path: Path, data: bytes | None, mode: int | None) -> None:
    """``path`` as it was: ``data`` (with ``mode``), or no file where ``data`` is None."""
    from glmcompat.matrix.store import atomic_write  # lazy: start-up path (see holds)
    if data is None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        return
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    atomic_write(path, data, mode=mode)
