"""A local PEP 691 index for the real uv: tiny pure wheels served by a thread of the test process."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
import zipfile
from collections.abc import Iterable, Iterator, Mapping
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


def metadata_wheel(metadata: str, files: Mapping[str, bytes] | None = None) -> tuple[str, str, str, bytes]:
    """(project, version, file name, bytes) of an installable pure wheel whose METADATA is ``metadata`` as given
    (a release's real headers: its Name, Version, Requires-Python, Requires-Dist) and whose payload is ``files``
    (default: an empty package ``<name>/__init__.py``)."""
    from email.parser import HeaderParser

    msg = HeaderParser().parsestr(metadata)
    name, version = str(msg["Name"]), str(msg["Version"])
    dist = name.replace("-", "_").replace(".", "_")
    info = f"{dist}-{version}.dist-info"
    body = {**(files if files is not None else {f"{dist.lower()}/__init__.py": b""}),
            f"{info}/METADATA": metadata.encode(),
            f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},{len(v)}\n"
                     for k, v in body.items()) + f"{info}/RECORD,,\n"
    body[f"{info}/RECORD"] = record.encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in body.items():
            z.writestr(zipfile.ZipInfo(k, (2020, 1, 1, 0, 0, 0)), v)
    return name, version, f"{dist}-{version}-py3-none-any.whl", buf.getvalue()


@contextmanager
def serve_releases(wheels: Iterable[tuple[str, str, str, bytes]], *, unavailable: Iterable[str] = ()) -> Iterator[str]:
    """Serve several releases per project (as :func:`metadata_wheel` returns them), PEP 691 JSON pages with
    PEP 658 metadata; yields the index's simple URL. Unknown projects are 404, as on a real index; so are the
    wheel files named in ``unavailable`` (their metadata is served: a plan succeeds, the install fails)."""
    gone = set(unavailable)
    import re

    projects: dict[str, list[tuple[str, bytes, bytes]]] = {}
    for name, _version, fn, data in wheels:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA")))
        projects.setdefault(re.sub(r"[-_.]+", "-", name).lower(), []).append((fn, data, meta))
    files = {fn: (data, meta) for rel in projects.values() for fn, data, meta in rel}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real index: uv's pool otherwise stalls on closed connections
        disable_nagle_algorithm = True  # headers and body leave at once: no delayed-ACK stall per request

        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _send(self, body: bytes, ctype: str) -> None:
            self.send_response(200)
            self.send_header("Cache-Control", "max-age=600")  # the index does not change while it is served
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = [p for p in self.path.split("?")[0].split("/") if p]
            if len(parts) == 2 and parts[0] == "simple" and parts[1] in projects:
                page = {"meta": {"api-version": "1.1"}, "name": parts[1], "versions": [],
                        "files": [{"filename": fn, "url": f"/files/{fn}", "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                                   "core-metadata": {"sha256": hashlib.sha256(meta).hexdigest()},
                                   "upload-time": "2025-01-01T00:00:00Z"} for fn, data, meta in projects[parts[1]]]}
                return self._send(json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
            if len(parts) == 2 and parts[0] == "files":
                fn = parts[1]
                if fn in files and fn not in gone:
                    return self._send(files[fn][0], "application/octet-stream")
                if fn.endswith(".metadata") and fn[:-9] in files:
                    return self._send(files[fn[:-9]][1], "application/octet-stream")
            self.send_error(404)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
