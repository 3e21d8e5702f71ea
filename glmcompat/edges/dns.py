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

:class:`ResolvingBackend` is an httpcore network backend; :class:`ResolvingTransport` is the httpx transport over
httpcore's pool that uses it, and :func:`client` the httpx client that uses that transport for its direct
connections and httpx's own for the proxies the environment names, which :func:`glmcompat.edges.http.make_client`
builds. Public API of httpx and httpcore only; ``socket`` itself is never changed.
"""

from __future__ import annotations

import contextlib
import ipaddress
import queue
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import httpcore
import httpx

TTL = 300.0  # seconds an answer is kept: a command's whole run, and a library caller's next few minutes
HEDGE = 0.75  # seconds a lookup may take before it is asked again beside the first (a resolver answers in ms)
TRIES = 2  # lookups of one host at most at a time, the first included

Lookup = Callable[..., Sequence[tuple[Any, ...]]]  # socket.getaddrinfo's shape


def _getaddrinfo(*args: Any, **kwargs: Any) -> Sequence[tuple[Any, ...]]:
    return socket.getaddrinfo(*args, **kwargs)


class Resolver:
    """``host:port`` -> its addresses, asked of ``lookup`` (``socket.getaddrinfo``) at most once per ``ttl`` seconds;
    a failed lookup is not kept (the next caller asks again). Thread-safe: callers for one host wait for the one
    lookup in flight; callers for different hosts do not wait for each other."""

    def __init__(self, lookup: Lookup | None = None, ttl: float = TTL,
                 clock: Callable[[], float] = time.monotonic, hedge: float = HEDGE, tries: int = TRIES) -> None:
        # None: ``socket.getaddrinfo`` as it is when asked, not as it was when this module was imported (the process's
        # shared resolver outlives whatever wrapped the function then)
        self._lookup: Lookup = lookup if lookup is not None else _getaddrinfo
        self._ttl, self._clock, self._hedge, self._tries = ttl, clock, hedge, max(1, tries)
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


# httpcore's errors as httpx's (the names httpx's own transport gives them), the most specific first by each error's MRO.
_ERRORS: dict[type[Exception], type[httpx.HTTPError]] = {
    httpcore.TimeoutException: httpx.TimeoutException, httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout, httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout, httpcore.NetworkError: httpx.NetworkError,
    httpcore.ConnectError: httpx.ConnectError, httpcore.ReadError: httpx.ReadError, httpcore.WriteError: httpx.WriteError,
    httpcore.ProxyError: httpx.ProxyError, httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
    httpcore.ProtocolError: httpx.ProtocolError, httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
}


@contextlib.contextmanager
def _as_httpx() -> Iterator[None]:
    try:
        yield
    except Exception as e:
        for kind in type(e).__mro__:
            if kind in _ERRORS:
                raise _ERRORS[kind](str(e)) from e
        raise


class _Body(httpx.SyncByteStream):
    """A response's body from httpcore, its errors as httpx's."""

    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            with _as_httpx():
                close()


class ResolvingTransport(httpx.BaseTransport):
    """An httpx transport (HTTP/1.1, certificates as ``ssl_context`` says, its pool sized by ``limits``) over
    httpcore's connection pool, its connections opened through :class:`ResolvingBackend`. httpx's and httpcore's
    public API only: httpx's own transport takes no network backend, httpcore's pool does."""

    def __init__(self, ssl_context: ssl.SSLContext, limits: httpx.Limits, resolver: Resolver = SHARED) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context, max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            http1=True, http2=False, network_backend=ResolvingBackend(resolver))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        url = request.url
        sent = httpcore.Request(
            method=request.method, headers=request.headers.raw, content=request.stream, extensions=request.extensions,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path))
        with _as_httpx():
            got = self._pool.handle_request(sent)
        assert isinstance(got.stream, Iterable)
        return httpx.Response(status_code=got.status, headers=got.headers, stream=_Body(got.stream),
                              extensions=got.extensions)

    def close(self) -> None:
        with _as_httpx():
            self._pool.close()


def transport(verify: Any, limits: httpx.Limits, resolver: Resolver = SHARED) -> ResolvingTransport:
    """The transport of a client's direct connections; ``verify`` as httpx takes it (an ``ssl.SSLContext`` is used as
    it is: loading the CA bundle is the slow part)."""
    context = verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify=verify)
    return ResolvingTransport(context, limits, resolver)


def environment_proxies() -> dict[str, str | None]:
    """The proxy of each URL pattern the proxy variables name (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, read by
    :func:`urllib.request.getproxies`), None for a ``NO_PROXY`` host (curl's rule: ``*`` turns every proxy off, a
    name matches itself and its subdomains, an address or ``localhost`` itself): httpx's own reading of them, which
    it makes only for a client that builds its own transport (``tests/edges/test_dns.py`` holds the two equal)."""
    found = urllib.request.getproxies()
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            url = found[scheme]
            mounts[f"{scheme}://"] = url if "://" in url else f"http://{url}"
    for host in (h.strip() for h in found.get("no", "").split(",")):
        if host == "*":
            return {}
        if not host:
            continue
        if "://" in host:
            mounts[host] = None
        elif _address(host, ipaddress.IPv4Address):
            mounts[f"all://{host}"] = None
        elif _address(host, ipaddress.IPv6Address):
            mounts[f"all://[{host}]"] = None
        elif host.lower() == "localhost":
            mounts[f"all://{host}"] = None
        else:
            mounts[f"all://*{host}"] = None
    return mounts


def _address(host: str, kind: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]) -> bool:
    try:
        kind(host.split("/")[0])
    except ValueError:
        return False
    return True


def client(limits: httpx.Limits, verify: ssl.SSLContext, resolver: Resolver = SHARED,
           **options: Any) -> httpx.Client:
    """An httpx client whose direct connections go through ``resolver`` and whose proxied ones (the proxy variables,
    as httpx reads them) through httpx's own proxy transports; each transport built once, for use. ``options``: the
    client's other keywords (timeout, headers...). A proxy variable httpx cannot use raises what httpx raises for it
    (``ImportError`` for SOCKS without socksio, ``ValueError``, ``httpx.InvalidURL``)."""
    mounts: dict[str, httpx.BaseTransport | None] = {
        pattern: None if proxy is None else httpx.HTTPTransport(verify=verify, limits=limits, proxy=proxy)
        for pattern, proxy in environment_proxies().items()}
    return httpx.Client(transport=transport(verify, limits, resolver), mounts=mounts, **options)
