"""The output directory of a lock (``--out``): whose files may be replaced, one run at a time, and the
stamped set published as one unit.

* ``--out`` and every file glmcompat touches in it must be real (no symbolic links, regular files); a
  pyproject.toml there must carry glmcompat's header, any other output the stamp's hash, else the run refuses
  (exit 2) unless ``force`` (:func:`claim`);
* one run at a time: an exclusive ``flock`` on the directory itself (or on ``.glmcompat.lock`` in it where a
  directory cannot be locked) is held for the whole run (:func:`exclusive`);
* publish: the new set and its stamp (the sha256 of each file, see :func:`verify_outputs`) are staged in a fresh
  ``.glmcompat-lock-*`` directory inside ``--out`` (same file system: the renames never cross devices) and
  committed by one rename of it to ``.glmcompat-publish``; the old stamp is removed, the four files are renamed
  into place, the new stamp is moved in last. A run killed before the commit leaves the old set (its staging
  directory is removed by the next run); one killed after it is rolled forward by the next run
  (:func:`recover`), so every glmcompat reader sees exactly one run's set.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from glmcompat.matrix import readlog
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import EnvironmentFailure, InputError
from glmcompat.model.public import __version__
from glmcompat.model.shapes import decoded
from glmcompat.ops.lockset import (
    GENERATED,
    LOCK_FILE,
    MAX_OUTPUT_BYTES,
    OUTPUTS,
    PAUSE_ENV,
    PUBLISHING,
    SET_FILES,
    STAGING_PREFIX,
    STAMP,
    STAMP_FORMAT,
)

_STAGING = re.compile(re.escape(STAGING_PREFIX) + r"[A-Za-z0-9_]{8}")  # the names publish() gives its staging (and mkdtemp gave)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stamp_of(facts: Facts, files: dict[str, bytes]) -> bytes:
    """The stamp (manifest) of one run's set: the sha256 of each output, the glmcompat version and the
    matrix it was checked with. Written last; a set whose files do not match it is not one run's."""
    return (json.dumps({"format": STAMP_FORMAT, "glmcompat": __version__, "matrix": facts.key,
                        "files": {n: sha(files[n]) for n in OUTPUTS}}, sort_keys=True, indent=1) + "\n").encode()


def stamp_files(data: bytes | None) -> dict[str, str]:
    """The per-file hashes a stamp records ({} for no stamp, an older format or anything malformed)."""
    d = decoded(data)
    if not isinstance(d, dict) or d.get("format") != STAMP_FORMAT or not isinstance(d.get("files"), dict):
        return {}
    files = d["files"]
    if set(files) != set(OUTPUTS) or not all(isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) for v in files.values()):
        return {}
    return dict(files)


def _lstat(p: Path) -> os.stat_result | None:
    try:
        return readlog.lstat(p)  # an input of a recorded run, there or not
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise InputError(f"{p.parent} is not a directory") from None
    except OSError as e:
        raise EnvironmentFailure(f"{p}: {e.strerror}") from None


def _refuse_link(p: Path, st: os.stat_result | None) -> None:
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise InputError(f"{p} is a symbolic link; glmcompat never writes through links in --out (remove it, or pass "
                         "an empty --out directory)")


def read_regular(p: Path) -> bytes | None:
    """The bytes of ``p``; None if absent. A link or anything but a regular file is refused (exit 2)."""
    st = _lstat(p)
    if st is None:
        return None
    _refuse_link(p, st)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{p} is not a regular file")
    if st.st_size > MAX_OUTPUT_BYTES:
        raise InputError(f"{p} is {st.st_size} bytes, more than any file glmcompat writes; pass an empty --out directory")
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            _refuse_link(p, os.lstat(p))
        raise EnvironmentFailure(f"{p}: cannot read: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise InputError(f"{p} is not a regular file")
        return f.read(MAX_OUTPUT_BYTES + 1)


def write_new(p: Path, data: bytes) -> None:
    """Create ``p`` (in a staging directory of ours) with ``data`` (flushed to disk before the commit)."""
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _fsync(p: Path) -> None:
    """Flush a file or directory to disk (directories: best effort, not every platform allows it)."""
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def pause(point: str) -> None:
    """Test hook (tests/ops/test_publish.py): with GLMCOMPAT_LOCK_PAUSE=POINT[:SECONDS] a run announces
    ``glmcompat: paused at POINT`` on stderr and sleeps there (default one hour), so a test can kill or
    race it at a chosen step. POINTs: ``locked`` (lock held, nothing staged), ``staged`` (the new set
    staged, not committed), ``publishing`` (committed, the first file moved)."""
    spec = os.environ.get(PAUSE_ENV)
    if not spec or spec.partition(":")[0] != point:
        return
    sys.stderr.write(f"glmcompat: paused at {point}\n")
    sys.stderr.flush()
    try:
        time.sleep(float(spec.partition(":")[2] or 3600))
    except ValueError:
        pass


def check_out(out: Path) -> bool:
    """Refuse an ``--out`` that is a link or not a directory; True if it exists."""
    st = _lstat(out)
    if st is None:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise InputError(f"--out {out} is a symbolic link; glmcompat never writes through links (pass the real directory)")
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"--out {out} is not a directory")
    return True


def make_out(out: Path) -> bool:
    """Create ``--out`` if it is missing; True if this run created it."""
    if check_out(out):
        return False
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(out)
    except FileExistsError:
        check_out(out)
        return False
    except NotADirectoryError:
        raise InputError(f"--out {out}: a parent is not a directory") from None
    except OSError as e:
        raise EnvironmentFailure(f"--out {out}: cannot create: {e.strerror}") from None
    return True


@contextmanager
def exclusive(out: Path, quiet: bool = True, create: bool = False) -> Iterator[int | None]:
    """Hold an exclusive lock on the output directory, so runs on one ``--out`` serialise: ``flock`` on the
    directory itself (nothing is created, and opening it with O_NOFOLLOW refuses a link atomically); where a
    directory cannot be locked, on ``.glmcompat.lock`` inside it; without ``fcntl`` (Windows), filelock."""
    try:
        import fcntl  # lazy: POSIX only, else filelock
    except ImportError:  # pragma: no cover - Windows
        from filelock import FileLock  # lazy: optional filelock (no fcntl)

        _refuse_link(out / LOCK_FILE, _lstat(out / LOCK_FILE))
        with FileLock(str(out / LOCK_FILE)):
            yield None
        return

    def flock(fd: int) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not quiet:
                print(f"glmcompat: waiting for another glmcompat run on {out} ...", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)

    for _attempt in range(5):
        if not check_out(out) and create:
            make_out(out)  # a failed first run removed the directory this run was waiting for
        try:
            fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            raise EnvironmentFailure(f"--out {out} was removed while this run started; run it again") from None
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                check_out(out)
            raise EnvironmentFailure(f"--out {out}: cannot open: {e.strerror}") from None
        fds = [fd]
        try:
            try:
                flock(fd)
            except OSError as e:
                if e.errno not in (errno.EBADF, errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP):
                    raise EnvironmentFailure(f"--out {out}: cannot lock: {e.strerror}") from None
                lf = out / LOCK_FILE
                _refuse_link(lf, _lstat(lf))
                try:
                    fds.append(os.open(lf, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644))
                    flock(fds[-1])
                except OSError as e2:
                    raise EnvironmentFailure(f"{lf}: cannot lock: {e2.strerror}") from None
            now = _lstat(out)
            held = os.fstat(fd)
            if now is None or (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
                continue  # the directory was removed or replaced while we waited: lock the one there now
            yield fd  # the directory held: publish writes through it, never through the path again
            return
        finally:
            for f in reversed(fds):
                os.close(f)
    raise EnvironmentFailure(f"--out {out} keeps being replaced; cannot lock it")


def _clean_stale(out: Path) -> None:
    """Remove staging directories a killed run left (only the lock holder stages, so all are stale)."""
    try:
        names = os.listdir(out)
    except OSError as e:
        raise EnvironmentFailure(f"--out {out}: cannot list: {e.strerror}") from None
    for n in names:
        if _STAGING.fullmatch(n):
            _remove_ours(out / n)


def _remove_ours(p: Path) -> bool:
    """Remove ``p`` if it is a directory glmcompat made for a set (holding nothing but set files, none a link or a
    directory); True if removed. Anything else in it is the user's: left where it is."""
    st = _lstat(p)
    if st is None or not stat.S_ISDIR(st.st_mode):
        return False
    try:
        names = os.listdir(p)
    except OSError:
        return False
    if any(n not in SET_FILES or not stat.S_ISREG(os.lstat(p / n).st_mode) for n in names):
        return False
    for n in names:
        os.unlink(p / n)
    os.rmdir(p)
    return True


def _open_dir(name: str | Path, dir_fd: int | None = None) -> int:
    return os.open(name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)


def _read_at(dir_fd: int, name: str, shown: Path) -> bytes | None:
    """:func:`read_regular` of ``name`` in the directory ``dir_fd``."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    _refuse_link(shown, st)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_OUTPUT_BYTES:
        raise InputError(f"{shown} is not a regular file glmcompat wrote")
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as f:
        return f.read(MAX_OUTPUT_BYTES + 1)


def _same_dir(out: Path, dir_fd: int) -> None:
    """Refuse to go on when ``out`` no longer names the directory this run holds (swapped for a link or another
    directory after the checks): nothing is written, through the path or otherwise."""
    now = _lstat(out)
    held = os.fstat(dir_fd)
    if now is None or stat.S_ISLNK(now.st_mode) or (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
        raise EnvironmentFailure(f"--out {out} was replaced while this run held it (a link or another directory); "
                                 "nothing was written there: run it again")


def _finish_publish(out: Path, dir_fd: int | None = None) -> bool:
    """Move a committed set from ``.glmcompat-publish`` into place (also one a killed run left: roll
    forward), through the held directory ``dir_fd`` (never by path names once the directory is held). The old
    stamp goes first, the new one last, so a half-moved set never carries a stamp. True if there was one."""
    own = dir_fd is None
    d = _open_dir(out) if dir_fd is None else dir_fd
    try:
        return _finish_publish_at(out, d)
    finally:
        if own:
            os.close(d)


def _finish_publish_at(out: Path, d: int) -> bool:
    pub = out / PUBLISHING
    try:
        st = os.stat(PUBLISHING, dir_fd=d, follow_symlinks=False)
    except FileNotFoundError:
        return False
    _refuse_link(pub, st)
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"{pub} is not a directory glmcompat wrote; remove it")
    p = _open_dir(PUBLISHING, d)
    try:
        foreign = sorted(n for n in os.listdir(p) if n not in SET_FILES)
        if foreign:
            raise InputError(f"{pub} holds files glmcompat did not write ({', '.join(foreign[:3])}); move them out of it")
        files = stamp_files(_read_at(p, STAMP, pub / STAMP))
        if files:  # else the new stamp was already moved in (or this is not a whole set): nothing left to move
            try:
                os.stat(STAMP, dir_fd=d, follow_symlinks=False)
                _refuse_link(out / STAMP, os.stat(STAMP, dir_fd=d, follow_symlinks=False))
                os.unlink(STAMP, dir_fd=d)
            except FileNotFoundError:
                pass
            first = True
            for n in OUTPUTS:
                try:
                    os.stat(n, dir_fd=p, follow_symlinks=False)
                except FileNotFoundError:
                    continue  # moved before a kill
                have = _read_at(d, n, out / n)
                if have is not None and sha(have) == files[n]:
                    os.unlink(n, dir_fd=p)  # unchanged: keep the file (and its mtime)
                else:
                    os.replace(n, n, src_dir_fd=p, dst_dir_fd=d)
                if first:
                    first = False
                    pause("publishing")
            os.fsync(d)
            os.replace(STAMP, STAMP, src_dir_fd=p, dst_dir_fd=d)
            os.fsync(d)
    except BaseException:
        os.close(p)
        raise
    _remove_set_dir(d, PUBLISHING, p)
    return True


def recover(out: Path) -> None:
    """Under the output lock: finish a publish a killed run committed, remove stale staging directories.
    Afterwards ``out`` holds exactly one run's set (or nothing glmcompat wrote). A no-op if ``out`` is missing."""
    if not check_out(out):
        return
    with exclusive(out):
        recover_locked(out)


def recover_locked(out: Path, dir_fd: int | None = None) -> None:
    try:
        _finish_publish(out, dir_fd)
        _clean_stale(out)
    except OSError as e:
        raise EnvironmentFailure(f"--out {out}: cannot recover an interrupted run: {e.strerror}") from None


def verify_outputs(out: Path) -> list[str]:
    """Why the files in ``out`` are not one run's set: an interrupted publish, or a stamp whose per-file
    hashes do not match the files (a mixed or edited set). An empty list when they are one set, and when
    there is no stamp at all (a fresh checkout of the committed files carries none). Reads only; refuses
    links."""
    problems: list[str] = []
    if not check_out(out):
        return problems
    if _lstat(out / PUBLISHING) is not None:
        problems.append(f"{out / PUBLISHING}: a run was interrupted while replacing the set; run `glmcompat lock` again")
    stamp = read_regular(out / STAMP)
    if stamp is None:
        return problems
    files = stamp_files(stamp)
    if not files:
        return problems  # an older glmcompat's stamp: no per-file hashes
    for n in OUTPUTS:
        data = read_regular(out / n)
        if data is None or sha(data) != files[n]:
            problems.append(f"{out / n}: {'missing' if data is None else 'not the file'} of the set the stamp records "
                            "(a mixed or edited set); run `glmcompat lock` again")
    return problems


def proven(old: dict[str, bytes | None], stamp: bytes | None) -> set[str]:
    """The outputs glmcompat is proven to have written as they are now: those whose bytes the stamp records (by
    sha256). A file no stamp records, or one edited since, is the user's."""
    files = stamp_files(stamp)
    return {n for n in OUTPUTS if old.get(n) is not None and files.get(n) == sha(old[n] or b"")}


def _not_ours(p: Path, why: str) -> InputError:
    return InputError(f"{p} is not a file glmcompat wrote; pass an empty --out directory (or --force to replace it; "
                      f"{why})")


def claim(out: Path, force: bool) -> tuple[dict[str, bytes | None], bytes | None]:
    """The previous set and its stamp, after refusing what glmcompat must not replace: links, non-regular
    files, and (unless ``force``) any output the stamp does not record as it is now — except a set that only
    looks like glmcompat's (a generated header, no stamp for it: a fresh checkout of a committed set), whose
    files :func:`check_replace` lets the run rewrite only with the bytes they already hold."""
    old = {n: read_regular(out / n) for n in OUTPUTS}
    stamp = read_regular(out / STAMP)
    if force:
        return old, stamp
    ours = proven(old, stamp)
    looks = old["pyproject.toml"] is not None and old["pyproject.toml"].startswith(GENERATED)
    for n in OUTPUTS:
        if old[n] is None or n in ours or looks:
            continue
        raise _not_ours(out / n, "no stamp of glmcompat's records it")
    return old, stamp


def check_replace(out: Path, old: dict[str, bytes | None], stamp: bytes | None, new: dict[str, bytes],
                  force: bool) -> None:
    """Refuse (exit 2, before anything is staged) to change a file glmcompat is not proven to have written: one
    the stamp does not record, or records with other bytes (edited since). Rewriting it with the bytes it holds
    changes nothing and is allowed; ``force`` allows everything."""
    if force:
        return
    ours = proven(old, stamp)
    files = stamp_files(stamp)
    for n in OUTPUTS:
        if old[n] is None or n in ours or new.get(n) == old[n]:
            continue
        why = "edited since the run that wrote it" if n in files else \
            f"no {STAMP} records it: a set copied without its stamp is the user's"
        raise _not_ours(out / n, why)


def publish(out: Path, new: dict[str, bytes], stamp_bytes: bytes, dir_fd: int | None = None) -> None:
    """Stage the set and its stamp in a fresh directory inside ``out`` (same file system: the renames never
    cross devices), flush it to disk, commit it with one rename to ``.glmcompat-publish``, and move it in — all
    through ``dir_fd``, the directory the run holds (its lock), never through the path ``out`` names now: an
    ``--out`` swapped for a link after the checks is refused, not written through."""
    own = dir_fd is None
    d = _open_dir(out) if dir_fd is None else dir_fd
    try:
        _same_dir(out, d)
        name = STAGING_PREFIX + os.urandom(6).hex()[:8]
        try:
            os.mkdir(name, 0o700, dir_fd=d)
        except OSError as e:
            raise EnvironmentFailure(f"--out {out}: cannot create a staging directory: {e.strerror}") from None
        committed = False
        try:
            w = _open_dir(name, d)
            try:
                for n in SET_FILES:
                    data = stamp_bytes if n == STAMP else new[n]
                    fd = os.open(n, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666,
                                 dir_fd=w)
                    with os.fdopen(fd, "wb") as f:
                        f.write(data)
                        f.flush()
                        os.fsync(f.fileno())
                os.fsync(w)
            finally:
                os.close(w)
            pause("staged")
            os.replace(name, PUBLISHING, src_dir_fd=d, dst_dir_fd=d)  # the commit point: the new set is current
            committed = True
        finally:
            if not committed:
                _remove_staged(d, name)
        os.fsync(d)
        _finish_publish(out, d)
    finally:
        if own:
            os.close(d)


def _remove_staged(d: int, name: str) -> None:
    try:
        w = _open_dir(name, d)
    except OSError:
        return
    _remove_set_dir(d, name, w)


def _remove_set_dir(d: int, name: str, w: int) -> None:
    """Empty the directory ``name`` of ``d`` (held as ``w``, closed here) of the set's files and remove it; one that
    holds anything else stays."""
    try:
        for n in os.listdir(w):
            if n in SET_FILES and stat.S_ISREG(os.stat(n, dir_fd=w, follow_symlinks=False).st_mode):
                os.unlink(n, dir_fd=w)
    finally:
        os.close(w)
    try:
        os.rmdir(name, dir_fd=d)
    except OSError:
        pass
