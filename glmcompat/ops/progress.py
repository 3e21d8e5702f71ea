"""Progress of long network work, on a terminal only: a one-line bar on stderr with the items done and the bytes
received, rewritten in place, cleared when the work ends. Nothing is shown when stderr is not a terminal (a pipe,
a file, CI) or with ``-q``; stdout is never touched, so a verdict or ``--json`` never mixes with it.

* :class:`Meter`: the bar itself (thread-safe: probes read in several threads). Items (``3/12 releases``) give the
  bar its fraction where their total is known; bytes (``4.1 MB of 8.0 MB``) give it where theirs is; where neither
  is known the bar only shows that work goes on. A byte count is never shown past its total, nor a share past 100%
  (a reader that asks for a span twice receives more bytes than the file has).
* :func:`watch`: a meter fed by an httpx client: each response an item (a request), each chunk of a body its bytes,
  whatever reads through the client (the index pages, METADATA, the range reads of wheels).
* :class:`Progress`: a resolver source wrapped so that ``lock``'s and ``upgrade``'s resolution shows the project
  pages and METADATA read, and the bytes the index client received.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol, TextIO, runtime_checkable

if TYPE_CHECKING:
    import httpx

    from glmcompat.decide.resolver import Source

WIDTH = 20  # cells of the bar
REDRAW = 0.08  # seconds between two redraws (a range read gets thousands of chunks)


def size(n: float) -> str:
    """A byte count for people: ``12.3 MB``, ``4.5 kB``, ``812 B``."""
    if n >= 1e5:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e3:.1f} kB" if n >= 1e3 else f"{int(n)} B"


def shown_bytes(done: int, total: int | None) -> str:
    """``done`` bytes as a share of ``total``: ``4.1 MB of 8.0 MB (51.2%)``, never past the total or 100%; without
    a total, ``4.1 MB``."""
    if not total:
        return size(done)
    part = min(done, total)
    return f"{size(part)} of {size(total)} ({100.0 * part / total:.1f}%)"


def on_terminal(stream: TextIO, quiet: bool | int = False) -> bool:
    """Whether a progress display shows on ``stream``: a terminal, and not ``-q``."""
    if quiet:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Meter:
    """A one-line progress bar on ``stream`` (stderr): ``label [#####.....] 3/12 releases · 4.1 MB of 8.0 MB · 2 s
    detail``. ``enabled`` None: only on a terminal and not ``quiet``. Every method is safe from any thread and costs
    nothing when disabled."""

    def __init__(self, label: str, *, stream: TextIO | None = None, quiet: bool | int = False,
                 enabled: bool | None = None, items: int | None = None, unit: str = "item(s)",
                 total_bytes: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = on_terminal(self.stream, quiet) if enabled is None else enabled
        self.label = label
        self.items_total = items
        self.unit = unit
        self.items = 0
        self.bytes = 0
        self.total_bytes = total_bytes
        self.detail = ""
        self._clock = clock
        self._t0 = clock()
        self._last = float("-inf")
        self._lock = threading.Lock()
        self._drawn = False

    # -- counting -----------------------------------------------------------------------------------
    def add_bytes(self, n: int) -> None:
        with self._lock:
            self.bytes += n
        self._draw()

    def advance(self, detail: str | None = None, n: int = 1) -> None:
        """``n`` more items done (``detail``: what is being done now)."""
        with self._lock:
            self.items += n
            if detail is not None:
                self.detail = detail
        self._draw(force=True)  # items are few (requests, releases): each one is shown

    def note(self, detail: str) -> None:
        """What is being done now, without an item done."""
        with self._lock:
            self.detail = detail
        self._draw(force=True)

    def expect(self, *, items: int | None = None, total_bytes: int | None = None) -> None:
        """The totals, once known (a wheel's size from the index page, the releases to probe)."""
        with self._lock:
            if items is not None:
                self.items_total = items
            if total_bytes is not None:
                self.total_bytes = total_bytes
        self._draw(force=True)

    # -- drawing ------------------------------------------------------------------------------------
    def line(self) -> str:
        """The bar as text (what is drawn)."""
        elapsed = self._clock() - self._t0
        if self.items_total:
            frac: float | None = min(self.items, self.items_total) / self.items_total
        elif self.total_bytes:
            frac = min(self.bytes, self.total_bytes) / self.total_bytes
        else:
            frac = None
        if frac is None:  # no total: a block that moves while work goes on
            pos = int(elapsed * 8) % (2 * (WIDTH - 3))
            pos = pos if pos < WIDTH - 3 else 2 * (WIDTH - 3) - pos
            bar = "." * pos + "###" + "." * (WIDTH - 3 - pos)
        else:
            filled = int(WIDTH * frac)
            bar = "#" * filled + "." * (WIDTH - filled)
        parts = [f"{self.items}/{self.items_total} {self.unit}" if self.items_total else f"{self.items} {self.unit}"]
        if self.bytes or self.total_bytes:
            parts.append(shown_bytes(self.bytes, self.total_bytes))
        parts.append(f"{elapsed:.0f} s")
        text = f"{self.label} [{bar}] " + " · ".join(parts)
        return text + (f"  {self.detail}" if self.detail else "")

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self._clock()
        with self._lock:
            if not force and now - self._last < REDRAW:
                return
            self._last = now
            text = self.line()
            cols = _columns(self.stream)
            try:
                self.stream.write("\r\033[2K" + text[: cols - 1])
                self.stream.flush()
                self._drawn = True
            except (OSError, ValueError):
                self.enabled = False

    def close(self) -> None:
        """Clear the line (the command's own output follows on a clean line)."""
        if self.enabled and self._drawn:
            try:
                self.stream.write("\r\033[2K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
        self.enabled = False

    def __enter__(self) -> Meter:
        return self  # drawn at the first item or bytes: work answered from the cache shows nothing

    def __exit__(self, *exc: object) -> None:
        self.close()


def _columns(stream: TextIO) -> int:
    try:
        cols = os.get_terminal_size(stream.fileno()).columns
        if cols > 0:  # a terminal whose size nobody set (a fresh pty) says 0
            return max(20, cols)
        raise ValueError(cols)
    except (OSError, ValueError, AttributeError):
        try:
            return max(20, int(os.environ.get("COLUMNS", "200")))
        except ValueError:
            return 200


def watch(client: httpx.Client, meter: Meter) -> Callable[[], None]:
    """Feed ``meter`` from the httpx client ``client``: each response an item, each body chunk its bytes. Returns the
    function that stops it. Nothing is added where the meter is disabled."""
    if not meter.enabled:
        return lambda: None
    import httpx  # lazy: heavy, needed only for a bar on a terminal (the lock path imports this module without it)

    class Counted(httpx.SyncByteStream):
        """A response body that tells the meter of every chunk it yields."""

        def __init__(self, inner: httpx.SyncByteStream) -> None:
            self._inner = inner

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._inner:
                meter.add_bytes(len(chunk))
                yield chunk

        def close(self) -> None:
            self._inner.close()

    def hook(response: httpx.Response) -> None:
        meter.advance()
        if isinstance(response.stream, httpx.SyncByteStream):
            response.stream = Counted(response.stream)

    hooks = client.event_hooks
    hooks.setdefault("response", [])
    hooks["response"] = [*hooks["response"], hook]
    client.event_hooks = hooks

    def stop() -> None:
        current = client.event_hooks
        current["response"] = [h for h in current.get("response", []) if h is not hook]
        client.event_hooks = current

    return stop


@runtime_checkable
class Received(Protocol):
    """A source that reads the network and can say how many bytes it has received (the index source:
    :meth:`glmcompat.edges.sources.IndexSource.bytes_received`); a recorded source is none."""

    def bytes_received(self) -> int: ...


class Progress:
    """A resolver source showing, on a terminal (stderr), the project pages and METADATA the resolver reads and the
    bytes the index client received; silent otherwise or with --quiet. Wraps the source and counts what the resolver
    asks of it (``pages``, ``metas``). The bytes shown are those a :class:`Received` source says it received (a
    recorded source receives none)."""

    def __init__(self, inner: Source, quiet: bool, *, stream: TextIO | None = None) -> None:
        self.inner = inner
        self.received: Received | None = inner if isinstance(inner, Received) else None
        self.meter = Meter("resolving the core", stream=stream, quiet=quiet, unit="read(s)")
        self.show = self.meter.enabled
        self.pages = 0
        self.metas = 0

    def _tick(self, what: str) -> None:
        if self.show:
            if self.received is not None:
                self.meter.bytes = self.received.bytes_received()
            self.meter.advance(f"{self.pages} project page(s), {self.metas} METADATA: {what}")

    def versions(self, name: str) -> list[str]:
        self.pages += 1
        self._tick(name)
        return self.inner.versions(name)

    def requires(self, name: str, version: str) -> list[str]:
        self.metas += 1
        self._tick(f"{name} {version}")
        return self.inner.requires(name, version)

    def done(self) -> None:
        self.meter.close()

    @property
    def machine(self) -> str:
        return self.inner.machine

    def unavailable(self, name: str) -> dict[str, list[str]]:
        return self.inner.unavailable(name)

    def platform(self) -> str:
        return self.inner.platform()


__all__ = ["Meter", "Progress", "Received", "on_terminal", "shown_bytes", "size", "watch"]
