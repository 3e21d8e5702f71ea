"""The process's bounded memos: a value kept by its key for later calls in the same process, a few at most.

A memo holds what is costly to make again and cannot change for its key (a parsed file by its bytes' digest, the
rows of a cache entry by its seal, a walk of the matrix by its key). Bounded: at :attr:`BoundedMemo.bound` entries the
oldest goes first, so a long-lived process (the library, a refresh over many files) keeps a few, not all.
Thread-safe for the writers (a refresh parses matrix files from worker threads); a read is one ``dict.get``.
Imports nothing but ``_thread``: the start-up paths hold one (:mod:`glmcompat.cli.fastpath`).
"""

from __future__ import annotations

from _thread import allocate_lock

TYPE_CHECKING = False  # not typing's: the start-up paths import this module
if TYPE_CHECKING:
    from typing import TypeVar

    K = TypeVar("K")
    V = TypeVar("V")


class BoundedMemo(dict["K", "V"]):
    """A dict of at most ``bound`` entries, written through :meth:`keep` (the oldest entry goes first); read it as a
    dict (``get``)."""

    __slots__ = ("bound", "_lock")

    def __init__(self, bound: int) -> None:
        super().__init__()
        if bound < 1:
            raise ValueError(f"a memo keeps at least one entry, not {bound}")
        self.bound = bound
        self._lock = allocate_lock()

    def keep(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` (dropping the oldest entries first while the memo is full); ``value``."""
        with self._lock:
            self.pop(key, None)  # a key kept again is the newest
            while len(self) >= self.bound:
                del self[next(iter(self))]
            self[key] = value
        return value
