"""Where glmcompat keeps and finds its files: the user cache directory, atomic writes, bounded reads of
input files, and the matrix files (the shipped ``glmcompat/matrix/data/*.toml`` or the paths given)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from glmcompat.matrix.locations import cache_dir_name, matrix_file_names
from glmcompat.model.errors import GlmcompatError, MatrixError


def cache_dir() -> Path:
    """glmcompat's user cache directory (``GLMCOMPAT_CACHE_DIR`` overrides)."""
    name = cache_dir_name()
    if name is not None:
        return Path(name)
    import platformdirs  # lazy: platformdirs, only where no cache directory is set

    return Path(platformdirs.user_cache_dir("glmcompat"))


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a unique temporary file in the same directory and a rename:
    readers never see half a file, and concurrent writers never share a temporary name. ``mode``: the
    permission bits the file gets (else the temporary file's 0600)."""
    import tempfile  # lazy: start-up path (cli.fastpath and cli.fastlock record through it)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if mode is not None:
                os.fchmod(f.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class LockFile:
    """An exclusive lock on the file ``path`` (created where absent, never removed), held from :meth:`acquire` to
    :meth:`release`, between processes: ``flock`` on POSIX, as filelock's UnixFileLock takes it (the same file, the
    same lock: both exclude each other), polled every 50 ms until the timeout; filelock's where there is no ``fcntl``
    (Windows). filelock costs 15 ms of imports, which a cold project lock paid while its uv ran (issue 39)."""

    POLL = 0.05

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        self._other: object = None  # filelock's lock, without fcntl

    def acquire(self, timeout: float) -> None:
        """Take the lock, waiting at most ``timeout`` seconds; TimeoutError when another holder keeps it longer."""
        try:
            import fcntl  # lazy: POSIX only, else filelock
        except ImportError:  # pragma: no cover - Windows
            from filelock import FileLock, Timeout  # lazy: no fcntl

            lock = FileLock(self.path, timeout=timeout)
            try:
                lock.acquire()
            except Timeout:
                raise TimeoutError(self.path) from None
            self._other = lock
            return
        import time  # lazy: start-up path (store is imported before the command's engine)

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        end = time.monotonic() + timeout
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= end:
                        raise TimeoutError(self.path) from None
                    time.sleep(self.POLL)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Let the lock go (closing the file releases the ``flock``); nothing when it is not held."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
        other, self._other = self._other, None
        if other is not None:  # pragma: no cover - Windows
            other.release()  # type: ignore[attr-defined]


MAX_INPUT = 64 << 20  # bytes of one input file (a lock, a requirements file, a matrix file)


def read_input(path: Path, error: type[GlmcompatError], what: str, limit: int = MAX_INPUT) -> bytes:
    """The bytes of a user-named input file, or ``error`` (one line naming the file) — never a traceback.
    Only a regular file is read: a FIFO or a device is refused at once (opened without blocking, never
    read), and so is a file over ``limit`` bytes."""
    p = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise error(f"is a directory, not {what}", path=p) from None
    except FileNotFoundError:
        raise error("no such file", path=p) from None
    except (OSError, ValueError) as e:
        raise error(f"cannot read: {getattr(e, 'strerror', None) or e}", path=p) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"is a directory, not {what}", path=p)
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
            raise error(f"is {kind}, not a regular file; glmcompat reads {what} from a regular file only", path=p)
        if st.st_size > limit:
            raise error(f"is {st.st_size} bytes, more than the {limit >> 20} MiB glmcompat reads as {what}", path=p)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # grew while being read
                raise error(f"is more than the {limit >> 20} MiB glmcompat reads as {what}", path=p)
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise error(f"cannot read: {e.strerror or e}", path=p) from None
    finally:
        os.close(fd)


def default_matrix_dir() -> Path:
    """The shipped matrix: the TOML files in ``glmcompat/matrix/data/``, inside the package."""
    data = Path(__file__).resolve().parent / "data"
    if data.is_dir():
        return data

    raise MatrixError("the shipped matrix is missing (no glmcompat/matrix/data/ in the installed package)")


def matrix_files(paths: Sequence[str | Path] | None = None) -> list[Path]:
    """The matrix files of ``paths`` (files as given; a directory's ``*.toml``, sorted), or of the shipped
    matrix when none is given. A directory without one is a :class:`MatrixError`."""
    names = matrix_file_names([str(p) for p in paths] if paths else [str(default_matrix_dir())])
    if isinstance(names, str):
        raise MatrixError("directory holds no *.toml matrix files", path=names)
    return [Path(n) for n in names]

