"""Where glmcompat's cache and matrix files are, and what its caches key on (the code fingerprint, the content
digest of a file), with ``os`` and ``_blake2`` alone: the warm start-up paths (:mod:`glmcompat.cli.fastpath`,
:mod:`glmcompat.cli.fastlock`) read these before they import pathlib or hashlib; :mod:`glmcompat.matrix.store`
wraps the same answers for everyone else, and :mod:`glmcompat.ops.lockset` digests what a lock writes with
:func:`hasher`."""

from __future__ import annotations

import os
import sys


try:
    from _blake2 import blake2b  # not hashlib, which loads OpenSSL
except ImportError:  # pragma: no cover - a CPython built without _blake2
    from hashlib import blake2b

MAX_DIGESTED = 64 << 20  # bytes: a file over this is not digested (no input or output of glmcompat's is near it)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")  # the shipped matrix
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the glmcompat package
_fingerprint: str | None = None


def matrix_file_names(paths: list[str]) -> list[str] | str:
    """Each path as given, or a directory's ``*.toml`` files (sorted); the first directory holding none
    is returned alone, as a string, for the caller to report."""
    out: list[str] = []
    for p in paths or [DATA]:
        if os.path.isdir(p):
            found = sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(".toml"))
            if not found:
                return p
            out.extend(found)
        else:
            out.append(p)
    return out


def cache_dir_name() -> str | None:
    """glmcompat's user cache directory (``GLMCOMPAT_CACHE_DIR`` overrides; else the XDG one on Linux), or
    None where only platformdirs knows it (macOS, Windows)."""
    env = os.environ.get("GLMCOMPAT_CACHE_DIR")
    if env:
        return env
    if os.name == "posix" and not sys.platform.startswith("darwin"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(base, "glmcompat")
    return None


def code_fingerprint() -> str:
    """glmcompat's version and the size and mtime of every module and shipped matrix file of the installed
    package (so an editable install whose code or matrix changed never serves a verdict or a parse the new code
    would not give). One ``stat`` per file; a matrix named with ``--matrix`` is keyed by its content instead."""
    global _fingerprint
    if _fingerprint is None:
        from glmcompat.model.public import __version__  # lazy: start-up path (a leaf, read only for a key)

        parts = [__version__]
        _walk(PACKAGE, "", parts)
        _fingerprint = "\n".join(parts)
    return _fingerprint


def _walk(directory: str, prefix: str, parts: list[str]) -> None:
    """``relative/path:size:mtime_ns`` of every ``.py`` and ``.toml`` file under ``directory``, sorted (scandir:
    one ``stat`` per file, no path arithmetic)."""
    with os.scandir(directory) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            if e.name != "__pycache__":
                _walk(e.path, f"{prefix}{e.name}/", parts)
        elif e.name.endswith((".py", ".toml")):
            st = e.stat()
            parts.append(f"{prefix}{e.name}:{st.st_size}:{st.st_mtime_ns}")


def hasher() -> blake2b:
    """A fresh hash of the kind every record and stamp of glmcompat's digests files with (blake2b-160)."""
    return blake2b(digest_size=20)


def text_digest(text: str) -> str:
    """The digest (:func:`hasher`, hex) of ``text``: what a stored thing's name is derived from when it is keyed by
    a question (a project path, a request, a URL) rather than by a file's content."""
    h = hasher()
    h.update(text.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def file_digest(path: str, *, follow: bool = True) -> str | None:
    """The content digest (:func:`hasher`, hex) of a regular file; ``""`` when nothing is there (its appearing
    later changes the answer); None for anything else: a FIFO (opened without blocking, never read), a
    directory, an unreadable file, one over :data:`MAX_DIGESTED`, or, with ``follow=False``, a link."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return ""
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_size > MAX_DIGESTED:  # S_ISREG without importing stat
            return None
        h = hasher()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


# -- stored things: one framing, one safe reader ------------------------------------------------------------------
#
# Every file glmcompat keeps for itself (verdict and lock records of the start-up paths, probe results, parsed locks,
# memoized resolutions, the validated matrix) is a convenience, never a fact: it is used only when it is exactly what
# glmcompat wrote under that very name. :func:`seal` frames a payload with a digest over its kind, its key and the whole
# payload; :func:`read_stored` opens without following a link and without blocking (a FIFO or a device planted in the
# cache is refused at once, never read), reads only a regular file of at most ``limit`` bytes, and returns the payload
# only when the digest matches: a truncated, edited, foreign or renamed entry is a miss that the caller recomputes and
# replaces.

MAX_STORED = 256 << 20  # bytes of one stored thing (the largest, a cached project page, is capped at 64 MiB on the wire)
_SEAL = b"glmcompat-sealed blake2b-160 "


def _seal_digest(kind: str, key: str, body: bytes) -> bytes:
    h = hasher()
    h.update(f"{kind}\0{key}\0".encode("utf-8", "surrogateescape"))
    h.update(body)
    return h.hexdigest().encode()


def seal(kind: str, key: str, body: bytes) -> bytes:
    """``body`` framed for storage as an entry of ``kind`` named ``key``: a first line holding the digest of all three."""
    return _SEAL + _seal_digest(kind, key, body) + b"\n" + body


def unseal(kind: str, key: str, raw: bytes | None) -> bytes | None:
    """The payload of a :func:`seal` frame of exactly this ``kind`` and ``key``; None for anything else."""
    if raw is None or not raw.startswith(_SEAL):
        return None
    digest, nl, body = raw[len(_SEAL):].partition(b"\n")
    if not nl or len(digest) != 40:
        return None
    import _operator  # lazy: start-up path (hmac.compare_digest without importing hmac, and hashlib with it)

    return body if _operator._compare_digest(_seal_digest(kind, key, body), digest) else None


def read_bounded(path: str, limit: int = MAX_STORED) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (not a link, a FIFO, a device, a directory) of at most ``limit``
    bytes; None otherwise or on any error. Never blocks and never reads more than ``limit + 1`` bytes, whatever the
    file turns into while it is read."""
    got = _read_regular(path, limit)
    return None if got is None else got[0]


def seal_line(path: str) -> bytes | None:
    """The first line of the stored entry ``path`` (its :func:`seal` line, the digest of its kind, key and payload) and
    then the file's size in bytes, read as :func:`read_bounded` reads (a regular file only, never blocking), without its
    payload; None where it has none. A process that already decoded and verified the payload of this very seal line, in
    a file of this size, needs no more of the file (a truncated or grown one is read again and found broken)."""
    got = _read_regular(path, MAX_STORED, first=len(_SEAL) + 41)
    if got is None or not got[0].startswith(_SEAL) or not got[0].endswith(b"\n"):
        return None
    return got[0] + str(got[1]).encode()


def _read_regular(path: str, limit: int, first: int = 0) -> tuple[bytes, int] | None:
    """(the bytes of ``path``, or its first ``first`` bytes, and its size) where it is a regular file of at most ``limit``
    bytes, opened without following a link and without blocking; None otherwise or on any error."""
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_NOCTTY", 0))
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError, TypeError):
        return None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_size > limit:
            return None
        if first:
            return os.read(fd, first), st.st_size
        parts: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            parts.append(chunk)
            left -= len(chunk)
        data = b"".join(parts)
        return (data, st.st_size) if len(data) <= limit else None  # it grew while read
    except OSError:
        return None
    finally:
        os.close(fd)


def read_stored(path: str, kind: str, key: str, limit: int = MAX_STORED) -> bytes | None:
    """The payload of the stored entry ``path`` (:func:`read_bounded`, then :func:`unseal`); None: a miss."""
    return unseal(kind, key, read_bounded(path, limit))


# -- what a start-up path compares of an input (the read log, :mod:`glmcompat.matrix.readlog`, records it) ---------

LISTING = "ls:"  # the state of a directory read by listing: its sorted names' digest
DIRECTORY = "dir"  # the state of a directory probed (not listed)
LINK = "link:"  # the state of a symbolic link: its target and the state of what it points to


def input_state(path: str, recorded: str | None = None) -> str | None:
    """What a start-up path compares of an input: a regular file's content digest (:func:`file_digest`), ``""`` when
    nothing is there, :data:`DIRECTORY` for a directory, :data:`LINK`, the target and its state for a link, or -- when
    ``recorded`` is a listing's state -- :data:`LISTING` and the digest of its sorted names; None for anything else (a
    FIFO, a device, an unreadable file: no record). ``recorded``, the state it had, only saves work."""
    if recorded is not None and recorded.startswith(LISTING):
        try:
            names = sorted(os.listdir(path))
        except FileNotFoundError:
            return ""
        except (OSError, ValueError):
            return None
        return LISTING + text_digest("\0".join(names))
    if recorded == DIRECTORY:  # one lstat says whether it still is one
        try:
            if os.lstat(path).st_mode & 0o170000 == 0o040000:
                return DIRECTORY
        except (OSError, ValueError):
            pass
    d = file_digest(path, follow=False)
    if d is not None:
        return d
    try:
        mode = os.lstat(path).st_mode & 0o170000
        if mode == 0o120000:  # a link: where it points, and what is there (a file replaced by a link is a change)
            inner = DIRECTORY if os.path.isdir(path) else file_digest(path)
            return None if inner is None else f"{LINK}{os.readlink(path)}:{inner}"
    except (OSError, ValueError):
        return None
    return DIRECTORY if mode == 0o040000 else None
