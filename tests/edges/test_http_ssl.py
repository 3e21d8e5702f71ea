"""One TLS context per CA bundle per process (issue 39): a cold lock opens a client per reading thread, and loading a
bundle costs tens of milliseconds of CPU each time. The bundle the usual variables name is still the one used."""
from __future__ import annotations

import ssl

import certifi
import pytest

from glmcompat.edges import http


def _transport_contexts(client: object) -> set[int]:
    return {id(ctx) for ctx in _contexts(client)}


def _contexts(x: object, depth: int = 0) -> list[ssl.SSLContext]:
    if isinstance(x, ssl.SSLContext):
        return [x]
    if depth > 6 or x is None or isinstance(x, (str, bytes, int, float, bool)):
        return []
    out: list[ssl.SSLContext] = []
    for v in getattr(x, "__dict__", {}).values():
        out += _contexts(v, depth + 1)
    return out


def test_clients_share_one_context_per_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"):
        monkeypatch.delenv(var, raising=False)
    with http.make_client() as a, http.make_client(max_connections=4) as b:
        shared = _transport_contexts(a)
        assert shared and shared == _transport_contexts(b)
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    named = http.ssl_context()
    assert id(named) not in shared, "the bundle SSL_CERT_FILE names gets its own context"
    assert named is http.ssl_context()
    assert named.cert_store_stats()["x509_ca"] > 50, "that context holds the named bundle's CAs"
    with http.make_client() as c:
        assert _transport_contexts(c) == {id(named)}
