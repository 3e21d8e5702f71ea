"""Warm no-op ``glmcompat lock``: answer from a content-addressed verdict cache before importing anything heavy.

A ``glmcompat lock`` whose inputs are exactly those of an earlier run that changed nothing would change
nothing again: the core resolution is memoized (a stack's exclude-newer fixes what the index can answer),
its pyproject.toml is that run's, and ``uv lock`` on the same pyproject.toml and uv.lock, with the same uv,
configuration and environment, keeps the uv.lock. This path proves that sameness with ``os`` and
``_blake2`` alone (no packaging, pydantic, argparse, httpx, not even pathlib) and then prints what that run
printed and exits as it did — without running uv at all.

A record is keyed by what the answer depends on before any file is read: glmcompat's version and code, the
command line, the working directory, the interpreter, the uv binary beside it (path, size, mtime, inode),
the environment (all of it, less a few variables no run reads, such as ``OLDPWD``), whether stdout and
stderr are terminals, and each ``--matrix`` file's content (the shipped matrix is in the code fingerprint). It holds
the state of every input the run read -- its read log (:class:`glmcompat.matrix.readlog.ReadLog`: the four outputs
and the stamp, the absence of an interrupted publish, whatever else it opened or probed), the memoized resolution
(a stored thing the answer treats as a fact: named by the run), what uv reads (declared once, in
:func:`glmcompat.edges.uv.reads`: no audit hook sees a subprocess's reads) -- and is used only while each is
unchanged, checked under a shared ``flock`` on ``--out`` (the full path holds it exclusively while it writes), with no
staging directory in ``--out``. The full path stores a record (:func:`record`) only after a run that changed nothing, exited 0
and wrote nothing on its error stream, on a resolution the index cannot change: what ``lock`` wrote through the
streams :func:`record` gave it (``Output.out`` and ``Output.err``; ``sys.stdout`` is never swapped). Anything else — an unknown option,
``--check``, ``-v``, ``--no-cache``, a missing uv, any doubt — is a miss: the full path runs.
"""

from __future__ import annotations

import os
import sys

from glmcompat.cli.startup import REPLAY, keyed, load, parse_options, replay, save, still_true
from glmcompat.cli.streams import stderr, stdout
from glmcompat.matrix.locations import (cache_dir_name, input_state,
                                        matrix_file_names)
from glmcompat.ops.lockset import PAUSE_ENV, PUBLISHING, STAGING_PREFIX

FORMAT = 3  # 3: each input with its read-log state (glmcompat.matrix.locations.input_state)
MAGIC = b"glmcompat-lock-verdict"
HEADER = b"%s %d" % (MAGIC, FORMAT)
OUT_DIR = "out"  # the state field of the output directory's entry (no state input_state gives)
_VALUE_OPTIONS, _FLAGS = REPLAY["lock"]
# Variables no lock reads and shells change between two identical commands: not part of the key.
_VOLATILE = {"OLDPWD", "PWD", "SHLVL", "_", "COLUMNS", "LINES", "TERM_SESSION_ID", "WINDOWID", "SSH_AUTH_SOCK",
             "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "PS1", "PS2", "PROMPT_COMMAND", "HISTFILE", "MAIL",
             "DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "XDG_SESSION_ID"}

TYPE_CHECKING = False  # not typing's: importing typing costs this path more than its whole answer
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from glmcompat.matrix.readlog import ReadLog
    from typing import TextIO


def _uv_path() -> str:
    """The uv binary the full path runs when it sits beside this interpreter (the ``uv`` package's)."""
    return os.path.join(os.path.dirname(sys.executable), "uv")


def _options(argv: list[str]) -> dict[str, list[str]] | None:
    """The options of an argument list the fast path understands, as parsed; None for any other (``--check``,
    ``-v``, ``--no-cache``, ``--help``, ``--opt=value``, no ``--target``, a typo: the full path handles it)."""
    parsed = parse_options(argv, _VALUE_OPTIONS, _FLAGS)
    if parsed is None or parsed[1] or "--target" not in parsed[0]:
        return None
    return parsed[0]


def _tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def key(argv: list[str]) -> str | None:
    """The record key of ``glmcompat lock ARGV``, or None when the fast path must not answer."""
    opts = _options(argv)
    if opts is None or os.environ.get(PAUSE_ENV):
        return None
    try:
        st = os.stat(_uv_path())
    except OSError:
        return None
    h = keyed("lock", opts, [])
    if h is None:
        return None
    env = "\0".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k not in _VOLATILE)
    for part in (f"{MAGIC.decode()} {FORMAT}", sys.executable, sys.version, f"{_uv_path()}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}",
                 f"{_tty(sys.stdout)}{_tty(sys.stderr)}", env):
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


def _record_path(k: str) -> str | None:
    base = cache_dir_name()
    return os.path.join(base, "verdicts", f"lock-{k}") if base else None


def _still_true(deps: dict[str, str]) -> bool:
    """Whether every file a record depends on is as it was, checked under a shared lock on its ``--out``."""
    outs = [p for p, d in deps.items() if d == OUT_DIR]
    if len(outs) != 1:
        return False
    try:
        fd = os.open(outs[0], os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError):
        return False
    try:
        import fcntl  # lazy: start-up path (a record found)

        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # a run writing now holds it: let the full path wait
        if any(n.startswith(STAGING_PREFIX) or n == PUBLISHING for n in os.listdir(fd)):
            return False  # the full path would clean up or roll forward first
        return still_true({p: d for p, d in deps.items() if d != OUT_DIR})
    except (OSError, ImportError):
        return False
    finally:
        os.close(fd)  # releases the lock


def lookup(argv: list[str]) -> int | None:
    """Print the recorded answer of ``lock ARGV`` and return its exit code; None on a miss."""
    k = key(argv)
    path = _record_path(k) if k else None
    if path is None:
        return None
    return replay(load(HEADER, k, path) if k else None, _still_true)


class _Tee:
    """A text stream that writes through to ``stream`` and keeps what is written to it: the ``out`` or ``err`` a
    recorded ``lock`` is given (the process's own streams are never replaced)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, s: str) -> int:
        self.parts.append(s)
        return self.stream.write(s)

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


class Exit(int):
    """An exit code that carries what a lock that changed nothing read: its
    :class:`~glmcompat.ops.lockgen.NoopRecord` (``noop``), as ``lock``'s main returns it for :func:`record`."""

    noop: object = None

    def __new__(cls, code: int, noop: object = None) -> Exit:
        made = super().__new__(cls, code)
        made.noop = noop
        return made


def record(argv: list[str], run: Callable[[TextIO | None, TextIO | None], int]) -> int:
    """Run the full path of ``lock ARGV`` (``run(out, err)``: ``lock``'s main writing its answer to ``out`` and its
    errors to ``err``, None for the process's own streams) and, when it changed nothing (its :class:`Exit` carries
    the record of what it read) and the fast path could answer the same command line, store what it wrote there
    and its exit code (never raises for the record: a read-only cache costs speed only)."""
    k = key(argv)
    if k is None:
        return int(run(None, None))
    out, err = _Tee(stdout()), _Tee(stderr())
    from glmcompat.matrix.readlog import ReadLog  # lazy: start-up path (a full run only)
    from glmcompat.ops.speculate import private_prefixes  # lazy: start-up path (a full run only)

    matrices = matrix_file_names((_options(argv) or {}).get("--matrix", []))  # in the key by content
    with ReadLog(exclude=matrices if isinstance(matrices, list) else [], prefixes=private_prefixes()) as log:
        rc = run(out, err)  # type: ignore[arg-type]  # a _Tee is a TextIO by what it does (writes, and the rest passed on)
    try:
        _store(argv, k, log, "".join(out.parts), "".join(err.parts), int(rc), getattr(rc, "noop", None))
    except Exception:
        pass
    return int(rc)


SPAWNED = {"uv"}  # the programs a recorded answer may have run: what uv reads is named (edges.uv.reads, the key's environment)


def _store(argv: list[str], k: str, log: ReadLog, stdout: str, stderr: str, rc: int, noop: Any) -> None:
    """Store the answer of a run that changed nothing: ``log`` is what it read, ``noop`` what it read that the log
    does not see (a stack's lock's or a project's NoopRecord; None: it changed something, nothing is stored)."""
    if noop is None or rc != 0 or stderr or key(argv) != k or not set(log.spawned) <= SPAWNED:
        return  # key again: no input changed during the run
    path = _record_path(k)
    deps = log.inputs()
    if path is None or deps is None:
        return
    deps.update(noop.files)
    from glmcompat.edges.uv import reads  # lazy: start-up path (a full run only; loaded by then)

    for f in reads():  # uv's user and system configuration (a project's own files are the project's noop.files)
        d = input_state(f)
        if d is None:
            return
        deps[f] = d
    deps[noop.out] = OUT_DIR  # checked under its lock, for a staging directory or a publish (_still_true)
    save(HEADER, k, path, deps, stdout, stderr, rc)
