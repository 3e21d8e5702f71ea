"""What both start-up paths (:mod:`glmcompat.cli.fastpath` for ``check``, :mod:`glmcompat.cli.fastlock` for
``lock``) share, with ``os`` and ``sys`` only, read before anything heavy is imported: the one record they keep
(what a full run printed and exited with, and the state of every input that run read, as its read log --
:class:`glmcompat.matrix.readlog.ReadLog` -- saw it), its codec, its validation (:func:`still_true`) and its store
(:func:`save`), the reading of a command line they may answer, and the colour decision (a verdict printed in colour
is another verdict). One module, not several: each module a start-up path imports costs it about 0.15 ms."""

from __future__ import annotations

import os
import sys

from glmcompat.matrix.locations import (DIRECTORY, PACKAGE, code_fingerprint, hasher, input_state, matrix_file_names,
                                        read_stored, seal)
from glmcompat.cli.streams import stderr, stdout
from glmcompat.model.cmdline import scan_options

# The options each start-up path answers, as the command's parser takes them: (those followed by a value, flags);
# any other option -- those of FULL_PATH, and one a parser gains later -- leaves the command to the full path.
# Declared once, here, for both paths; tests/cli/test_fastpath.py holds them to the parsers (build_parser), so an option
# added to a parser and not here, or taking a value here and none there, fails that test.
REPLAY: dict[str, tuple[set[str], set[str]]] = {
    "check": ({"--target", "--model", "--platform", "--stack", "--matrix", "--color", "--against", "--driver", "--glibc",
               "--manylinux", "--index-url"},
              {"--allow-unknown", "--json", "-q", "--quiet", "-qq"}),
    "lock": ({"--stack", "--engine", "--target", "--platform", "--model", "--with", "--python", "--out", "--matrix",
              "--index-url", "--color", "--project", "--driver", "--glibc", "--manylinux"},
             {"--upgrade", "--force", "--quiet", "-q"}),
}
# The parsers' options only the full path answers: --help, -v (timings on stderr), and lock's --check, --dry-run,
# --no-cache, --json and -o (no record of them is kept).
FULL_PATH: dict[str, set[str]] = {
    "check": {"-h", "--help", "-v", "--verbose", "--no-cache"},
    "lock": {"-h", "--help", "-v", "--verbose", "--check", "--dry-run", "--no-cache", "--json", "-o", "--output-file"},
}
MAX_RECORD = 8 << 20  # bytes of one record: a longer answer is not recorded, and a longer file is no record
TYPE_CHECKING = False  # not typing's: importing typing costs the start-up paths more than their whole answer
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

    from _blake2 import blake2b


def encode(header: bytes, key: str, deps: dict[str, str], stdout: str, stderr: str, rc: int) -> bytes:
    """The record stored under ``key``: ``header``, the exit code, each input the answer depends on with its state
    (:func:`glmcompat.matrix.locations.input_state`), stdout, stderr; sealed (:func:`glmcompat.matrix.locations.seal`) with a digest over the key and all of it, so an
    edited exit code, a flipped bit or a record copied under another key is no record."""
    out = [b"%s\n%d\n%d\n" % (header, rc, len(deps))]
    for path, digest in deps.items():
        out.append(os.fsencode(path) + b"\0" + digest.encode() + b"\n")
    for text in (stdout, stderr):
        data = text.encode("utf-8", "surrogateescape")
        out.append(b"%d\n" % len(data) + data)
    return seal(header.decode(), key, b"".join(out))


def load(header: bytes, key: str, path: str) -> tuple[dict[str, str], str, str, int] | None:
    """The record :func:`encode` stored under ``key`` at ``path``; None (a miss) for anything else: no regular file
    (a link, a FIFO, a device: never followed, never waited on), one over :data:`MAX_RECORD`, a digest that does not
    match, a body that does not parse."""
    body = read_stored(path, header.decode(), key, MAX_RECORD)
    if body is None:
        return None
    try:
        return decode(header, body)
    except (ValueError, UnicodeDecodeError):
        return None


def still_true(deps: dict[str, str]) -> bool:
    """Whether every input a record names is in the state it recorded (one comparison for both start-up paths)."""
    return all(input_state(path, state) == state for path, state in deps.items())


def replay(rec: tuple[dict[str, str], str, str, int] | None, valid: Callable[[dict[str, str]], bool] = still_true,
           ) -> int | None:
    """Print the recorded answer ``rec`` (:func:`load`'s) while its inputs are as they were (``valid``) and return its
    exit code; None on a miss."""
    if rec is None:
        return None
    deps, out, err, rc = rec
    if not valid(deps):
        return None
    if out:
        stdout().write(out)
    if err:
        stderr().write(err)
    return rc


def save(header: bytes, key: str, path: str, deps: dict[str, str], stdout: str, stderr: str, rc: int) -> bool:
    """Store the record of a full run under ``key`` at ``path`` (:func:`encode`); False when it is not stored (one
    over :data:`MAX_RECORD`, which would read back as no record, or a cache that cannot be written: a read-only
    cache costs speed only)."""
    record = encode(header, key, deps, stdout, stderr, rc)
    if len(record) > MAX_RECORD:
        return False
    from pathlib import Path  # lazy: start-up path (only a full run stores)

    from glmcompat.matrix.store import atomic_write  # lazy: start-up path (only a full run stores)

    try:
        atomic_write(Path(path), record)
    except OSError:
        return False
    return True


def decode(header: bytes, blob: bytes) -> tuple[dict[str, str], str, str, int]:
    """The body of a record :func:`encode` wrote; ValueError on anything else (a truncated or foreign file is a
    miss)."""
    head, rest = blob.split(b"\n", 1)
    if head != header:
        raise ValueError("not a record of this kind")
    rc_s, n_s, rest = rest.split(b"\n", 2)
    rc, n = int(rc_s), int(n_s)
    deps: dict[str, str] = {}
    for _ in range(n):
        line, rest = rest.split(b"\n", 1)
        path, digest = line.split(b"\0")
        deps[os.fsdecode(path)] = digest.decode()
    texts = []
    for _ in range(2):
        size_s, rest = rest.split(b"\n", 1)
        size = int(size_s)
        if len(rest) < size:
            raise ValueError("truncated")
        if size < 0:
            raise ValueError("negative size")
        texts.append(rest[:size].decode("utf-8", "surrogateescape"))
        rest = rest[size:]
    if rest:
        raise ValueError("trailing data")
    return deps, texts[0], texts[1], rc


def matrix_part(matrices: list[str]) -> str | None:
    """The ``--matrix`` files by path and state (:func:`glmcompat.matrix.locations.input_state`: by content, not size
    and mtime, so a same-size edit with the mtime kept is still seen; the shipped matrix is part of the code
    fingerprint, by size and mtime, as the modules); None when one is not a file a start-up path can compare (a
    directory with no matrix file, a missing file: the full path reports it)."""
    names = matrix_file_names(matrices) if matrices else []
    if isinstance(names, str):
        return None
    out = []
    for f in names:
        state = input_state(f)
        if not state or state == DIRECTORY:
            return None
        out.append(f"{f}\0{state}\n")
    return "".join(out)


def keyed(command: str, opts: dict[str, list[str]], positional: list[str]) -> blake2b | None:
    """The key of a record of ``command`` as far as every command's is the same: a hash fed with the command, glmcompat's
    code (its fingerprint and its place), the working directory, the options as parsed (:func:`parse_options` with
    :data:`REPLAY`: each option with its values, or one entry per use of a flag, in the parser's terms, so ``-q -q``
    is not ``-q`` and two spellings of one command line are one key) and the positional arguments in order, and the
    ``--matrix`` files by content (:func:`matrix_part`); the command then feeds its own inputs. None when a
    ``--matrix`` file is none a start-up path can compare."""
    part = matrix_part(opts.get("--matrix", []))
    if part is None:
        return None
    h = hasher()
    canonical = "".join(f"{o}\0" + "\0".join(opts[o]) + "\n" for o in sorted(opts))
    for p in (f"{command} record", code_fingerprint(), PACKAGE, os.getcwd(), canonical, "\0".join(positional), part):
        h.update(p.encode("utf-8", "surrogateescape") + b"\0")
    return h


def use_color(mode: str = "auto", stream: TextIO | None = None) -> bool:
    """Whether to colour ``stream`` (default stdout), as uv and pre-commit decide it: ``always`` and ``never``
    are final; ``auto`` colours a terminal, except that ``NO_COLOR`` (any non-empty value) or ``TERM=dumb``
    turn it off, and ``FORCE_COLOR`` (any non-empty value) turns it on even for a pipe (``NO_COLOR`` wins)."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    env = os.environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    s = sys.stdout if stream is None else stream
    try:
        tty = bool(s.isatty())
    except (AttributeError, ValueError, OSError):  # a closed or replaced stream
        tty = False
    return tty and env.get("TERM") != "dumb"


def parse_options(argv: list[str], values: set[str], flags: set[str]) -> tuple[dict[str, list[str]], list[str]] | None:
    """``ARGV`` as ``{option: [value, ...]}`` (a flag to one ``""`` per use) and its positional arguments, for a start-up
    path that knows the options ``values`` (each followed by its value) and ``flags``; None at anything else (an
    unknown option, ``--opt=value``, a value option without its value): the full path handles and reports it."""
    scanned = scan_options(argv, values)
    if scanned is None:
        return None
    opts, rest = scanned
    positional: list[str] = []
    for a in rest:
        if not a.startswith("-"):
            positional.append(a)
        elif a in flags:
            opts.setdefault(a, []).append("")
        else:
            return None
    return opts, positional
