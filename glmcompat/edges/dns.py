"""Each host looked up once, shared by every connection of every client (issue 39).

A cold lock reads index pages and METADATA from several threads at once, and each new connection httpx opens
asks ``getaddrinfo`` on its own. A resolver that loses one of many queries sent together makes one of those
lookups wait out the C library's retry (5 s, then again): a cold lock was seen waiting about 10 s in
``socket.getaddrinfo`` in its range-read threads. Here a host's addresses are asked once (callers for the same
host meanwhile wait for that one answer, not for their own) and kept for :data:`TTL` seconds; a lookup still
unanswered after :data:`HEDGE` seconds is asked once more beside it, and the first answer is taken (a lost query
costs that, not the retry); every connection
then connects to an address, in the order the system's resolver gave them, trying the next on failure as
``socket.create_connection`` does. The TLS name stays the host's (httpcore passes it to ``start_tls`` apart).

:class:`ResolvingBackend` is an httpcore network backend; :func:`transport` builds the httpx transport that uses
it, which :func:`glmcompat.edges.http.make_client` gives every client it makes. ``socket`` itself is never changed.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import httpcore
import httpx

TTL = 300.0  # seconds an answer is kept: a command's whole run, and a library caller's next few minutes
HEDGE = 0.75  # seconds a lookup may take before it is asked again beside the first (a resolver answers in ms)
TRIES = 2  # lookups of one host at most at a time, the first included

Lookup = Callable[..., Sequence[tuple[Any, ...]]]  # socket.getaddrinfo's shape


class Resolver:
    """``host:port`` -> its addresses, asked of ``lookup`` (``socket.getaddrinfo``) at most once per ``ttl`` seconds;
    a failed lookup is not kept (the next caller asks again). Thread-safe: callers for one host wait for the one
    lookup in flight; callers for different hosts do not wait for each other."""

    def __init__(self, lookup: Lookup = socket.getaddrinfo, ttl: float = TTL,
                 clock: Callable[[], float] = time.monotonic, hedge: float = HEDGE, tries: int = TRIES) -> None:
        self._lookup, self._ttl, self._clock, self._hedge, self._tries = lookup, ttl, clock, hedge, max(1, tries)
        self._guard = threading.Lock()
        # What is held per host: its answer until it expires (expired ones go when a new one is kept), and, while
        # its lookup is in flight, the event its other callers wait on. Nothing is held for a host otherwise.
        self._kept: dict[tuple[str, int], tuple[float, list[str]]] = {}
        self._asking: dict[tuple[str, int], threading.Event] = {}
        self.lookups = 0  # how many times ``lookup`` was asked (what the tests count)

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses of ``host`` for a TCP connection to ``port``, best first, without repeats."""
        key = (host, port)
        while True:
            with self._guard:
                kept = self._kept.get(key)
                if kept is not None and kept[0] > self._clock():
                    return kept[1]
                asked = self._asking.get(key)
                if asked is None:
                    done = self._asking[key] = threading.Event()
                    break
            asked.wait()  # the one lookup in flight: its answer is kept, or it failed and a caller asks again
        try:
            infos = self._ask(host, port)
            found = list(dict.fromkeys(str(info[4][0]) for info in infos))
            if not found:
                raise socket.gaierror(f"no address for {host}")
            with self._guard:
                now = self._clock()
                for old in [k for k, (until, _) in self._kept.items() if until <= now]:
                    del self._kept[old]
                self._kept[key] = (now + self._ttl, found)
            return found
        finally:
            with self._guard:
                del self._asking[key]
            done.set()

    def _ask(self, host: str, port: int) -> Sequence[tuple[Any, ...]]:
        """The first answer of up to ``tries`` lookups, each started ``hedge`` seconds after the one before while
        none has answered (or at once after one failed); the last failure where all fail."""
        answers: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()

        def one() -> None:
            try:
                answers.put((True, self._lookup(host, port, 0, socket.SOCK_STREAM)))
            except OSError as e:
                answers.put((False, e))

        asked = failed = 0
        last: BaseException = socket.gaierror(f"no address for {host}")
        while True:
            if asked == failed or asked < self._tries:
                if asked == self._tries:
                    raise last
                self.lookups += 1
                asked += 1
                threading.Thread(target=one, name="glmcompat-dns", daemon=True).start()
            try:
                ok, value = answers.get(timeout=self._hedge if asked < self._tries else None)
            except queue.Empty:
                continue
            if ok:
                return value  # type: ignore[no-any-return]
            failed, last = failed + 1, value


SHARED = Resolver()  # the process's: every client make_client builds shares it


class ResolvingBackend(httpcore.NetworkBackend):
    """httpcore's own synchronous backend, connecting to the addresses ``resolver`` keeps for the host."""

    def __init__(self, resolver: Resolver = SHARED, inner: httpcore.NetworkBackend | None = None) -> None:
        self.resolver = resolver
        self.inner = inner if inner is not None else httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        try:
            addresses = self.resolver.addresses(host, port)
        except OSError as e:  # socket.gaierror included: what httpcore's backend maps it to
            raise httpcore.ConnectError(str(e) or type(e).__name__) from e
        last: Exception | None = None
        for address in addresses:
            try:
                return self.inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as e:
                last = e
        assert last is not None
        raise last

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return self.inner.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def transport(verify: Any, limits: httpx.Limits, resolver: Resolver = SHARED) -> httpx.HTTPTransport:
    """httpx's own transport (HTTP/1.1, its pool sized by ``limits``, certificates as ``verify`` says), its
    connections opened through :class:`ResolvingBackend`."""
    context = httpx.create_ssl_context(verify=verify)  # once (loading the CA bundle is the slow part)
    t = httpx.HTTPTransport(verify=context, limits=limits)
    # httpx's transport takes no network backend: its pool is made again, alike but for the backend.
    t._pool = httpcore.ConnectionPool(
        ssl_context=context, max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
        http1=True, http2=False, network_backend=ResolvingBackend(resolver))
    return t
