"""The read log: what a full run read, for a start-up path's record.

A recorded answer (:mod:`glmcompat.cli.fastpath`, :mod:`glmcompat.cli.fastlock`) is used only while every file the
full run read is as it was. That list is not kept by hand: while a :class:`ReadLog` is active, an audit hook
(:func:`sys.addaudithook`, installed once per process) sees every ``open`` (``open()``, ``os.open``, ``Path.read_*``),
every ``os.listdir``/``os.scandir`` and every process started. A ``stat`` raises no audit event, and nothing here
replaces a function of :mod:`os`: the code on a recorded path asks whether a file is there through this module
(:func:`stat`, :func:`lstat`, :func:`exists`, :func:`is_file`, :func:`is_dir`), which logs the path, absent or not.
A file the run created or wrote before reading it is its output, not an input.

Not inputs, by decision (each keyed another way, or no fact at all): the interpreter and installed packages (under
``sys.prefix``, ``sys.base_prefix``, ``sys.exec_prefix``); glmcompat's own code and shipped matrix (the code
fingerprint); module files (``.py``, ``.pyc``, ``.so``, ``.pth``) and the directories of ``sys.path`` (probed and
listed by the import system); glmcompat's cache directory (stored things are conveniences, never facts:
:mod:`glmcompat.matrix.locations`; a command names the one it treats as a fact, lock's resolution memo); ``/proc``,
``/sys`` and ``/dev``; what a caller excludes (the files its key holds by content: the files named on the command
line, the ``--matrix`` files) or names as its private directories; a directory probed that holds an input found in
it (implied by that input); and what runs inside :class:`unlogged` (housekeeping: a sweep of private directories).
What another process reads is not seen: the log names the programs started (``spawned``) and the command decides
(``check`` allows git, whose answer its key holds; ``lock`` allows uv and names uv's configuration files).
"""

from __future__ import annotations

import os
import sys
from stat import S_ISDIR, S_ISREG

from glmcompat.matrix.locations import DIRECTORY, LISTING, PACKAGE, cache_dir_name, input_state

_MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pth")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_active: ReadLog | None = None
_hooked = False


class ReadLog:
    """The inputs of a full run, as it reads them: ``with ReadLog(exclude, prefixes) as log: ...``, then
    :meth:`inputs`; ``exclude``: paths keyed another way; ``prefixes``: the start of the names of a command's private
    directories (what another process wrote there for it is its output). One log at a time per process (a nested one
    logs nothing of its own)."""

    def __init__(self, exclude: list[str] | tuple[str, ...] = (), prefixes: list[str] | tuple[str, ...] = ()) -> None:
        self.read: dict[str, bool] = {}  # path -> listed (True) or opened or probed (False), in order
        self.written: set[str] = set()
        self.spawned: list[str] = []
        roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, PACKAGE, cache_dir_name() or "", "/proc", "/sys", "/dev"]
        self._roots = tuple(os.path.join(os.path.abspath(r), "") for r in roots if r) + tuple(prefixes)
        self._above = {os.path.dirname(r.rstrip(os.sep)) for r in self._roots}  # their parents: a path resolved to them
        for d in list(self._above):
            while d != os.path.dirname(d):
                d = os.path.dirname(d)
                self._above.add(d)
        self._exact = {os.path.abspath(p) for p in exclude}
        self._paths = {os.path.abspath(p or ".") for p in sys.path}

    def __enter__(self) -> ReadLog:
        global _active, _hooked
        if _active is not None:
            return self  # nested: the outer log sees the reads
        if not _hooked:
            sys.addaudithook(_audit)
            _hooked = True
        _active = self
        return self

    def __exit__(self, *exc: object) -> None:
        global _active
        if _active is self:
            _active = None

    def _skip(self, path: str) -> bool:
        return (path in self._exact or path.startswith(self._roots) or path.endswith(_MODULE_SUFFIXES)
                or path in self._above or os.path.join(path, "") in self._roots)

    def saw(self, path: object, listed: bool = False, write: bool = False) -> None:
        """Log ``path`` as read (``listed``: its names) or, with ``write``, as written by the run."""
        if isinstance(path, int):
            return  # an open descriptor: its path was logged when it was opened
        try:
            p = os.path.abspath(os.fsdecode(path))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if write:
            if p not in self.read:
                self.written.add(p)
            return
        if p in self.written or self._skip(p) or p in self._paths:  # sys.path's directories: the import system's
            return
        if listed or p not in self.read:
            self.read[p] = listed or self.read.get(p, False)

    def inputs(self) -> dict[str, str] | None:
        """Each path read with its state now (:func:`input_state`), by path; None when one is in no state a start-up
        path can compare (a FIFO, an unreadable file: no record is kept)."""
        out: dict[str, str] = {}
        for path, listed in sorted(self.read.items()):  # sorted: a record is the same bytes however the run went
            s = input_state(path, LISTING if listed else None)
            if s is None:
                return None
            out[path] = s
        # A directory probed (as resolving a path does) that holds an input found there is implied by that input: left
        # out, so a run that resolved a path and one that did not (a parse read from its cache) keep the same record.
        held = {os.path.dirname(p) for p, s in out.items() if s}
        for d in list(held):
            while d != os.path.dirname(d):
                d = os.path.dirname(d)
                held.add(d)
        return {p: s for p, s in out.items() if not (s == DIRECTORY and p in held)}


class unlogged:  # noqa: N801 - used as a statement: ``with unlogged(): ...``
    """What runs inside is no input of the active log (housekeeping: a sweep of private directories)."""

    def __enter__(self) -> None:
        global _active
        self._log, _active = _active, None

    def __exit__(self, *exc: object) -> None:
        global _active
        _active = self._log


def stat(path: str | os.PathLike[str]) -> os.stat_result:
    """:func:`os.stat` of ``path``, logged as an input of the active log (an existence probe: the audit hook sees no
    stat). Raises as :func:`os.stat` does."""
    log = _active
    if log is not None:
        log.saw(path)
    return os.stat(path)


def lstat(path: str | os.PathLike[str]) -> os.stat_result:
    """:func:`os.lstat` of ``path``, logged as :func:`stat` logs it."""
    log = _active
    if log is not None:
        log.saw(path)
    return os.lstat(path)


def exists(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is there (links followed), as :meth:`pathlib.Path.exists`; logged, absent or not."""
    try:
        stat(path)
    except (OSError, ValueError):
        return False
    return True


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular file (links followed), as :meth:`pathlib.Path.is_file`; logged."""
    try:
        return S_ISREG(stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a directory (links followed), as :meth:`pathlib.Path.is_dir`; logged."""
    try:
        return S_ISDIR(stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _audit(event: str, args: tuple[object, ...]) -> None:
    """The audit hook: what the active log is told of (nothing while none is active). It never raises -- an exception
    here would fail the operation audited -- so an event of a shape it does not expect is left out."""
    log = _active
    if log is None:
        return
    try:
        if event == "open":
            log.saw(args[0], write=bool(isinstance(args[2], int) and args[2] & _WRITE_FLAGS))
        elif event == "os.listdir" or event == "os.scandir":
            log.saw(args[0] if args and args[0] is not None else ".", listed=True)
        elif event == "os.rename":
            log.saw(args[1], write=True)
        elif event == "os.mkdir":  # raised before the call: a directory already there is not the run's
            try:
                os.lstat(args[0])  # type: ignore[arg-type]
            except FileNotFoundError:
                log.saw(args[0], write=True)
        elif event == "subprocess.Popen":
            program = args[0] if args[0] is not None else args[1]
            if isinstance(program, (list, tuple)):
                program = program[0]
            log.spawned.append(os.path.basename(os.fsdecode(program)))  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - see above
        log.spawned.append("?")  # an event not understood: as a program whose reads are unseen (no record)
