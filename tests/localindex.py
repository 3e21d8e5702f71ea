"""A local PEP 691 index for the real uv: tiny pure wheels served by a thread of the test process."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tiny_wheel(name: str, version: str) -> tuple[str, bytes]:
    """(file name, bytes) of an installable pure wheel of ``name==version`` with nothing in it."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    files = {f"{dist}/__init__.py": b"",
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},{len(v)}\n"
                     for k, v in files.items()) + f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record.encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in files.items():
            z.writestr(zipfile.ZipInfo(k, (2020, 1, 1, 0, 0, 0)), v)
    return f"{dist}-{version}-py3-none-any.whl", buf.getvalue()


@contextmanager
def serve_wheels(pins: Mapping[str, str]) -> Iterator[str]:
    """Serve one tiny wheel per ``name: version``; yields the index's simple URL."""
    wheels = {n: tiny_wheel(n, v) for n, v in pins.items()}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:  # uv probes for range requests; say no
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _send(self, body: bytes, ctype: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = [p for p in self.path.split("?")[0].split("/") if p]
            if len(parts) == 2 and parts[0] == "simple" and parts[1] in wheels:
                fn, data = wheels[parts[1]]
                page = {"meta": {"api-version": "1.1"}, "name": parts[1],
                        "files": [{"filename": fn, "url": f"/files/{fn}", "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                                   "upload-time": "2025-01-01T00:00:00Z"}]}
                return self._send(json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
            for fn, data in wheels.values():
                if parts == ["files", fn]:
                    return self._send(data, "application/octet-stream")
            self.send_error(404)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
