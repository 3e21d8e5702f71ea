"""Warm ``glmcompat check``: answer from a content-addressed verdict cache before importing anything heavy.

A pre-commit hook runs ``check`` on every commit, mostly on files that did not change. The full path
imports packaging, argparse and the rules, reads the lock's cached environments and judges each one;
this path imports only ``os``, ``sys`` and ``_blake2`` (not ``hashlib``, which loads OpenSSL, nor ``json``,
which imports ``re``: together they cost more than the rest of a warm answer). Its records are a small
line-oriented format read without either. A verdict is keyed by glmcompat's
version, the command line, the working directory, whether stdout is a terminal, the matrix snapshot
(the shipped matrix as part of the code fingerprint; each ``--matrix`` file by its path and content digest) and
the bytes of every file named on the command line; it also records every other file the verdict read
(includes, the pyproject.toml beside a lock, the lock beside a pyproject.toml, each with its digest or
its absence) and is used only while they are unchanged. It stores exactly what the full path printed
and its exit code, so a hit prints the same bytes and exits the same way (a test compares both on every
fixture). With ``--against HEAD`` (the pre-commit hook's), the key also holds the commit ``HEAD`` names, read
from the repository's files (:mod:`glmcompat.readers.githead`). Anything the fast path does not understand
(another ``--against`` revision, an unknown option, a repository layout that reader does not follow, a cache
miss) falls through to the full path.
"""

from __future__ import annotations

import os
import sys

from glmcompat.cli.startup import MAX_RECORD, encode, load, parse_options, use_color
from glmcompat.matrix.locations import cache_dir_name, code_fingerprint, file_digest, hasher, matrix_file_names


FORMAT = 3
MAGIC = b"glmcompat-verdict"
HEADER = b"%s %d" % (MAGIC, FORMAT)
_VALUE_OPTIONS = {"--target", "--model", "--stack", "--matrix", "--color", "--against"}
_FLAGS = {"--allow-unknown", "--json", "-q", "--quiet", "-qq"}  # -v writes timings to stderr: the full path


def _parse(argv: list[str]) -> tuple[list[str], list[str], str, bool] | None:
    """The files named by ``check ARGV``, its ``--matrix`` values, its ``--color`` and whether it judges bumps
    against ``HEAD``; None when the fast path does not understand the command line (``--help``, another
    ``--against`` revision, a bad ``--color``, a typo: the full path handles and reports it)."""
    parsed = parse_options(argv, _VALUE_OPTIONS, _FLAGS)
    if parsed is None or not parsed[1]:
        return None
    opts, paths = parsed
    colors, against = opts.get("--color", ["auto"]), opts.get("--against", [])
    if any(c not in ("auto", "always", "never") for c in colors) or any(rev != "HEAD" for rev in against):
        return None
    return paths, opts.get("--matrix", []), colors[-1], bool(against)


def key(argv: list[str]) -> str | None:
    """The verdict key of ``glmcompat check ARGV``, or None when the fast path must not answer."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    paths, matrices, color, against = parsed
    # a --matrix by content; the shipped matrix is part of the code fingerprint (by size and mtime, as the modules)
    names = matrix_file_names(matrices) if matrices else []
    if isinstance(names, str):
        return None  # a directory with no matrix file: the full path reports it
    h = hasher()
    for part in (str(FORMAT), code_fingerprint(), os.getcwd(), str(use_color(color)), "\0".join(argv)):
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    for f in names:  # by content, not size and mtime: a same-size edit with the mtime kept is still seen
        d = file_digest(f)
        if not d:
            return None
        h.update(f"{f}\0{d}\n".encode("utf-8", "surrogateescape"))
    for p in paths:
        d = file_digest(p)
        if not d:
            return None  # a missing file: the full path says so
        h.update(f"{p}\0{d}\n".encode("utf-8", "surrogateescape"))
        if against:  # the file at HEAD: fixed by the commit HEAD names and the file's place in the work tree
            from glmcompat.readers.githead import head_state

            state = head_state(p)
            if state is None:
                return None  # not a plain repository, or one this reader does not follow: git answers
            h.update(f"HEAD\0{state}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def lookup(argv: list[str]) -> int | None:
    """Print the cached verdict of ``check ARGV`` and return its exit code; None on a miss."""
    base = cache_dir_name()
    k = key(argv) if base else None
    if k is None or base is None:
        return None
    rec = load(HEADER, k, os.path.join(base, "verdicts", k))
    if rec is None:
        return None
    deps, out, err, rc = rec
    if any(file_digest(path) != digest for path, digest in deps.items()):
        return None
    if out:
        sys.stdout.write(out)
    if err:
        sys.stderr.write(err)
    return rc


def store(argv: list[str], before: str, deps: list[str], stdout: str, stderr: str, rc: int) -> None:
    """Record the full path's verdict of ``check ARGV``, whose key was ``before`` when the run began: nothing
    when an input changed during the run (never raises: a read-only cache costs speed only)."""
    base = cache_dir_name()
    k = key(argv) if base else None
    if k is None or base is None or k != before:
        return
    parsed = _parse(argv)
    named = {os.path.abspath(p) for p in (parsed[0] if parsed else [])}  # in the key already: not hashed twice
    files = sorted({os.path.abspath(p) for p in deps} - named)
    digests = {p: file_digest(p) for p in files}
    if any(d is None for d in digests.values()):
        return  # a file the verdict read is no regular file now: nothing to compare it with later
    record = encode(HEADER, k, {p: d or "" for p, d in digests.items()}, stdout, stderr, rc)
    if len(record) > MAX_RECORD:
        return  # it would be read back as no record
    try:
        from pathlib import Path

        from glmcompat.matrix.store import atomic_write

        atomic_write(Path(base) / "verdicts" / k, record)
    except OSError:
        pass
