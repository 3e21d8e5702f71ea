"""Range reads keep their connection (issue 39: a cold lock read 51 wheels over about 1,600 new connections, one per
range request, because each answer was closed before its end had been read)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from glmcompat.edges.http import make_client
from glmcompat.edges.ranges import HttpRangeReader
from tests.localindex import POLL, Server

DATA = bytes(range(256)) * 4096  # 1 MiB


@pytest.fixture
def served() -> Iterator[tuple[str, list[str]]]:
    """A keep-alive HTTP/1.1 server of DATA with Range support; the list gains one entry per connection opened."""
    opened: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            opened.append(str(self.client_address))
            super().setup()

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            lo_s, _, hi_s = self.headers["Range"].removeprefix("bytes=").partition("-")
            lo, hi = int(lo_s), min(int(hi_s), len(DATA) - 1)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {lo}-{hi}/{len(DATA)}")
            self.send_header("Content-Length", str(hi - lo + 1))
            self.end_headers()
            self.wfile.write(DATA[lo:hi + 1])

    srv: ThreadingHTTPServer = Server(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": POLL}, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/x.whl", opened
    finally:
        srv.shutdown()
        srv.server_close()


def test_range_reads_share_one_connection(served: tuple[str, list[str]]) -> None:
    url, opened = served
    with make_client() as client:
        reader = HttpRangeReader(client, url, size=len(DATA))
        for off, n in [(0, 100), (5000, 70_000), (len(DATA) - 300, 300), (400_000, 1), (123, 65_536)]:
            assert reader.read(off, n) == DATA[off:off + n]
        assert b"".join(reader.stream(200_000, 300_000, chunk=65_536)) == DATA[200_000:500_000]
    assert reader.requests == 6
    assert len(opened) == 1, opened
