"""The compiled wheels of a project's new lock, read while uv still resolves it (issue 39: a cold project lock).

The judge of a new uv.lock reads the bytes of every compiled package the matrix says nothing of
(:func:`glmcompat.ops.artifacts.probe_lock`), and on an empty cache that reading came after uv's answer: on a
serving project (sglang and its fifty compiled companions) it took four times as long as uv itself. But uv says
which release it takes as it takes it: ``uv lock -v`` logs ``Selecting: <name>==<version> [...] (<file>)`` for each
(:mod:`glmcompat.ops.projectspec` reads those lines). Here each release the judge would read is read as uv names it:
its wheel for the lock's Python and machine is looked up on the index uv asks and summarised into the same cache
the judge reads, under the wheel's own sha256 (:func:`glmcompat.ops.artifacts.summaries`, and torch's exports where
an extension needs them: read by the judge, once uv's answer names the torch). The judge then finds them stored; it waits (:meth:`Prefetch.drain`) for those still being
read rather than reading them twice.

Nothing here decides anything: a cache entry is the same bytes' summary whoever writes it, so a release uv later
drops costs only bandwidth, and a read that fails is left for the judge to make (and report). Nothing raises.
``GLMCOMPAT_NO_ARTIFACTS`` (nothing is read over the network) and ``GLMCOMPAT_NO_LOCK_PREFETCH`` turn it off.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future

    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import ClientFactory, IndexClient, IndexOptions
    from glmcompat.matrix.view import Facts
    from glmcompat.ops.projectspec import Run

WORKERS = 8  # as the judge's own reads (probe_lock)
# the most packages read ahead: each costs an index page and its wheel's bytes while uv still resolves, and beside a
# serving engine's fifty compiled companions (and the releases uv tries and drops) that reading slows uv and the judge
# more than it saves (sglang's: 17 s without, 23 s reading all of them ahead); the judge reads the rest from the lock's
# own URLs, as before
MAX_AHEAD = 8
OFF_ENV = "GLMCOMPAT_NO_LOCK_PREFETCH"  # set: nothing is read ahead (the judge reads after uv, as before)


class Prefetch:
    """Reads, in the background, the wheels :meth:`selected` names that the judge of the lock would read."""

    def __init__(self, facts: Facts, python: str, machine: str, options: IndexOptions, open_client: ClientFactory
                 ) -> None:
        self.facts, self.python, self.machine, self.platform = facts, python, machine, f"manylinux_{machine}"
        self._options, self._open = options, open_client
        from concurrent.futures import ThreadPoolExecutor  # lazy: started after the predicted uv (issue 39)

        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="glmcompat-lockprefetch")
        self._mutex = threading.Lock()
        self._seen: set[tuple[str, str]] = set()
        self._names: set[str] = set()  # the packages read ahead (the first release uv selects of each)
        self._taken = 0  # of them, how many for the run followed now (:meth:`follow`): at most MAX_AHEAD
        self._following = 0  # how many runs :meth:`follow` was given: only the last one's selections are read
        self._jobs: list[Future[None]] = []
        self._client: IndexClient | None = None
        self._cache: Cache | None = None
        self._closed = False
        self._tracked = facts.kernel_packages() | facts.family_packages()  # the names the judge takes from rows

    # -- what uv selected -------------------------------------------------------------------------
    def selected(self, name: str, version: str, filename: str) -> None:
        """uv took ``name==version`` (``filename``: one file of that release, as uv's log names it). Called from
        the thread reading uv's log; returns at once."""
        from glmcompat.model.names import canonicalize  # lazy: light, but not on the start-up path

        n = canonicalize(name)
        with self._mutex:
            if self._closed or (n, version) in self._seen:
                return
            self._seen.add((n, version))
        if not filename.endswith(".whl") or filename.endswith("-any.whl"):
            return  # pure (every file of a release is, where one is) or only an sdist: nothing compiled to read
        if n.startswith(("nvidia-", "triton", "pytorch-triton")) or n in ("numpy", "torch"):
            return  # judged from the matrix and torch's pins (probe_lock's candidates skip them alike)
        if n in self._tracked:
            from glmcompat.ops.artifacts import _has_row  # lazy: the judge's own test

            if _has_row(self.facts, n, version):
                return
        from glmcompat.ops import shipped  # lazy: the shipped rows, once uv selects a compiled release

        if shipped.covers(filename, self.python, self.machine):
            return  # its summary is shipped: the judge reads nothing of it, and an index page read now only slows uv
        self._submit(n, version)

    def _submit(self, name: str, version: str) -> None:
        with self._mutex:
            if self._closed or name in self._names or self._taken >= MAX_AHEAD:
                return
            self._names.add(name)
            self._taken += 1
            self._start(name, version)

    def _start(self, name: str, version: str) -> None:
        """Read ``name==version`` in the background (called with the mutex held)."""
        try:
            self._jobs.append(self._pool.submit(self._read, name, version))
        except RuntimeError:  # the pool is shut down
            pass

    def follow(self, run: Run) -> None:
        """Read what ``run`` selects (a uv run whose lock is the likely answer), in place of what any run followed
        before selects from now on (that one's lock is in doubt: settle starts a run on the new pyproject.toml only
        then), with a budget of its own (MAX_AHEAD packages; what was read already is not read again)."""
        with self._mutex:
            self._following += 1
            self._taken = 0
            self._seen.clear()  # its selections are judged afresh (a package read already is not read again)
            mine = self._following

        def heard(name: str, version: str, filename: str) -> None:
            if self._following == mine:
                self.selected(name, version, filename)

        run.on_select(heard)

    # -- reading ----------------------------------------------------------------------------------
    def _index(self) -> tuple[IndexClient, Cache]:
        with self._mutex:
            if self._client is None:
                from glmcompat.edges.cache import Cache  # lazy: only once something is to be read

                self._client = self._open(self._options)
                self._cache = Cache()
            assert self._cache is not None
            return self._client, self._cache

    def _read(self, name: str, version: str) -> None:
        from packaging.version import Version  # lazy: a reading thread's, not the start-up path's

        from glmcompat.ops.artifacts import _find_any_python, open_index, summaries  # lazy: as above

        try:
            index, cache = self._index()
            f = _find_any_python([index], cache, name, Version(version).public, self.python, self.platform,
                                 stated=False)
            if not f.is_wheel or f.filename.endswith("-any.whl"):
                return
            summaries(open_index(index, f), cache, True)
        except Exception:
            return  # the judge reads it again, and reports what fails

    # -- the end ----------------------------------------------------------------------------------
    def drain(self) -> None:
        """Wait for the reads started so far (the judge is about to need them); start no more."""
        with self._mutex:
            self._closed = True
            jobs = list(self._jobs)
        from concurrent.futures import wait  # lazy: see __init__

        wait(jobs)

    def close(self) -> None:
        """Stop: reads not yet started are dropped, running ones finish on their own; the client closes after them."""
        with self._mutex:
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        client = self._client

        from concurrent.futures import wait  # lazy: see __init__

        def later() -> None:
            wait(list(self._jobs))
            if client is not None:
                client.close()

        threading.Thread(target=later, daemon=True).start()


def start(facts: Facts, python: str, machine: str, options: IndexOptions, open_client: ClientFactory | None
          ) -> Prefetch | None:
    """A :class:`Prefetch` for a lock resolved from the index ``options`` name (None where the index is a recorded
    source, or reading over the network is off)."""
    from glmcompat.ops.artifacts import PROBE_ENV  # lazy: the judge's own switch

    if open_client is None or os.environ.get(PROBE_ENV) or os.environ.get(OFF_ENV):
        return None
    try:
        return Prefetch(facts, python, machine, options, open_client)
    except Exception:
        return None
