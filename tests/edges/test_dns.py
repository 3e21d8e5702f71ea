"""Each host looked up once, shared by every connection (glmcompat/edges/dns.py): a real local server, real
sockets, the lookup counted."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from glmcompat.edges import dns
from glmcompat.edges.http import make_client
from tests.localindex import serve_wheels


class Counted:
    """socket.getaddrinfo, counted, each call held until ``go`` is set (so concurrent callers really overlap)."""

    def __init__(self, fail: int = 0) -> None:
        self.calls = 0
        self.fail = fail
        self.go = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, host: str, port: int, *args: Any) -> Any:
        with self.lock:
            self.calls += 1
            failing = self.calls <= self.fail
        self.go.wait(5)
        if failing:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return socket.getaddrinfo(host, port, *args)


@pytest.fixture
def index() -> Iterator[str]:
    with serve_wheels({"a": "1.0"}) as url:
        yield url.replace("127.0.0.1", "localhost")


def test_concurrent_callers_share_one_lookup() -> None:
    lookup = Counted()
    r = dns.Resolver(lookup, hedge=30)
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(r.addresses, "localhost", 80) for _ in range(8)]
        lookup.go.set()
        got = [f.result() for f in futures]
    assert lookup.calls == 1 and r.lookups == 1
    assert all(g == got[0] for g in got) and "127.0.0.1" in got[0]


def test_a_failed_lookup_is_asked_again_and_an_old_answer_expires() -> None:
    lookup, now = Counted(fail=1), [0.0]
    lookup.go.set()
    r = dns.Resolver(lookup, ttl=10, clock=lambda: now[0], tries=1)
    with pytest.raises(socket.gaierror):
        r.addresses("localhost", 80)
    r.addresses("localhost", 80)
    r.addresses("localhost", 80)
    assert lookup.calls == 2
    now[0] = 11.0
    r.addresses("localhost", 80)
    assert lookup.calls == 3


def test_parallel_requests_of_one_client_look_the_host_up_once(index: str) -> None:
    lookup = Counted()
    resolver = dns.Resolver(lookup, hedge=30)
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
    with httpx.Client(transport=dns.transport(True, limits, resolver)) as client, ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(client.get, index + "/a/") for _ in range(16)]
        lookup.go.set()
        codes = [f.result().status_code for f in futures]
    assert codes == [200] * 16
    assert lookup.calls == 1


def test_an_unknown_host_is_a_connect_error_and_the_next_address_is_tried() -> None:
    def lookup(host: str, port: int, *args: Any) -> Any:
        if host == "nowhere.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        # an address nothing listens on first (a closed port on this host), then the real one
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    limits = httpx.Limits()
    with httpx.Client(transport=dns.transport(True, limits, dns.Resolver(lookup))) as client:
        with pytest.raises(httpx.ConnectError, match="Name or service not known"):
            client.get("http://nowhere.invalid/")
    with serve_wheels({"a": "1.0"}) as url:
        port = httpx.URL(url).port
        # the local index listens on 127.0.0.1 alone: 127.0.0.2 refuses, and the client goes on to the next address
        with httpx.Client(transport=dns.transport(True, limits, dns.Resolver(lookup))) as client:
            assert client.get(f"http://somewhere.test:{port}/simple/a/").status_code == 200


def test_make_client_connects_through_the_shared_resolver(index: str) -> None:
    before = dns.SHARED.lookups
    with make_client() as client:
        assert client.get(index + "/a/").status_code == 200
        assert client.get(index + "/a/").status_code == 200
    with make_client(max_connections=4) as client:
        assert client.get(index + "/a/").status_code == 200
    assert dns.SHARED.lookups - before <= 1


def test_a_lost_query_is_asked_again_beside_it() -> None:
    """The first lookup never answers (a lost query the C library would retry after 5 s): a second, started after
    the hedge, answers; nothing waits for the first."""
    never, calls = threading.Event(), []

    def lookup(host: str, port: int, *args: Any) -> Any:
        calls.append(host)
        if len(calls) == 1:
            never.wait(30)
        return socket.getaddrinfo(host, port, *args)

    try:
        assert "127.0.0.1" in dns.Resolver(lookup, hedge=0.05).addresses("localhost", 80)
        assert len(calls) == 2
    finally:
        never.set()


def test_every_lookup_failing_is_the_last_failure() -> None:
    calls = []

    def lookup(host: str, port: int, *args: Any) -> Any:
        calls.append(host)
        raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known ({len(calls)})")

    with pytest.raises(socket.gaierror, match=r"\(2\)"):
        dns.Resolver(lookup, tries=2).addresses("nowhere.invalid", 80)
    assert len(calls) == 2


def test_a_proxy_variable_still_carries_the_requests(index: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared resolver serves the direct connections only: with HTTP_PROXY set, the request goes to the proxy (here
    the local index's server, which answers the absolute URL it is sent) and the target host is never looked up."""
    monkeypatch.setenv("HTTP_PROXY", index.removesuffix("/simple"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    asked: list[str] = []
    real = dns.SHARED.addresses
    monkeypatch.setattr(dns.SHARED, "addresses", lambda host, port: asked.append(host) or real(host, port))
    with make_client() as client:
        r = client.get("http://nowhere.invalid/simple/a/")
    assert isinstance(r.status_code, int)
    assert "nowhere.invalid" not in asked


def test_nothing_is_held_for_a_host_but_its_live_answer() -> None:
    """A process that talks to many hosts (mirrors, redirects to file hosts) holds no lock per host it ever asked:
    while no lookup is in flight nothing waits, and an expired answer goes when a new one is kept."""
    now = [0.0]

    def lookup(host: str, port: int, *args: Any) -> Any:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    r = dns.Resolver(lookup, ttl=10, clock=lambda: now[0])
    for i in range(200):
        assert r.addresses(f"host{i}.test", 443) == ["127.0.0.1"]
    assert not r._asking and len(r._kept) == 200
    now[0] = 11.0
    r.addresses("host0.test", 443)
    assert list(r._kept) == [("host0.test", 443)] and not r._asking
    assert r.lookups == 201


def test_callers_waiting_on_a_failed_lookup_ask_again_once() -> None:
    """The lookup in flight fails: its waiting callers do not share the failure, one of them asks again and the
    others take that answer."""
    lookup = Counted(fail=1)
    r = dns.Resolver(lookup, hedge=30, tries=1)
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(r.addresses, "localhost", 80) for _ in range(6)]
        while lookup.calls < 1:
            threading.Event().wait(0.01)
        lookup.go.set()
        outcomes = [f.exception() is None for f in futures]
    assert outcomes.count(False) == 1 and lookup.calls == 2 and not r._asking


PROXY_SETTINGS = [
    {},
    {"HTTP_PROXY": "http://127.0.0.1:9"},
    {"HTTPS_PROXY": "proxy.test:3128", "ALL_PROXY": "socks5://127.0.0.1:9"},
    {"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "localhost,.example.test,10.0.0.0/8,::1,other.test, http://x.test"},
    {"HTTPS_PROXY": "http://127.0.0.1:9", "no_proxy": "a.test,*"},
]


@pytest.mark.parametrize("env", PROXY_SETTINGS, ids=[",".join(e) or "none" for e in PROXY_SETTINGS])
def test_the_proxy_variables_are_read_as_httpx_reads_them(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """make_client gives httpx its own transport, so httpx does not read the proxy variables: glmcompat reads them
    with httpx's rule. The guard of that copy: held equal to httpx's own reading (its private function, named here
    alone; if httpx moves or changes it, this fails and names it)."""
    from httpx import _utils

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    theirs = getattr(_utils, "get_environment_proxies", None)
    assert theirs is not None, f"httpx {httpx.__version__} no longer has _utils.get_environment_proxies: check dns.environment_proxies against its proxy rule"
    assert dns.environment_proxies() == theirs()


def test_make_client_builds_each_pool_once_for_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """No transport is built to be thrown away: one connection pool for the direct connections, one per proxy."""
    import httpcore

    built: list[str] = []
    for kind in ("ConnectionPool", "HTTPProxy"):
        real = getattr(httpcore, kind)
        monkeypatch.setattr(httpcore, kind, type(kind, (real,), {
            "__init__": lambda self, *a, _real=real, _kind=kind, **k: (built.append(_kind), _real.__init__(self, *a, **k))[1]}))
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    with make_client():
        assert built == ["ConnectionPool"]
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "localhost")
    built.clear()
    with make_client(max_connections=4):
        assert sorted(built) == ["ConnectionPool", "HTTPProxy"]


def test_a_no_proxy_host_connects_through_the_resolver(index: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a proxy set and the host in NO_PROXY, the request goes straight to the host, looked up by the shared
    resolver (the proxy, a closed port, would refuse it)."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "localhost")
    monkeypatch.delenv("no_proxy", raising=False)
    asked: list[str] = []
    real = dns.SHARED.addresses
    monkeypatch.setattr(dns.SHARED, "addresses", lambda host, port: asked.append(host) or real(host, port))
    with make_client() as client:
        assert client.get(index + "/a/").status_code == 200
    assert asked == ["localhost"]


def test_a_silent_server_is_httpx_read_timeout() -> None:
    """httpcore's errors reach the caller as httpx's (what request_with_retries retries on)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        resolver = dns.Resolver(lambda host, p, *a: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", p))])
        with httpx.Client(transport=dns.transport(True, httpx.Limits(), resolver), timeout=0.2) as client:
            with pytest.raises(httpx.ReadTimeout):
                client.get(f"http://silent.test:{port}/")
