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

# How often a serving thread looks for its shutdown: ``shutdown()`` waits up to this long (the default, 0.5 s, is half a
# second of idle worker at the end of every test that serves an index).
POLL = 0.02


class Server(ThreadingHTTPServer):
    """The index's server: a client that hangs up (uv ends with its keep-alive connections open) is no error of the
    index, and no traceback on the stderr an in-process run captures."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def tiny_wheel(name: str, version: str, requires: tuple[str, ...] = ()) -> tuple[str, bytes]:
    """(file name, bytes) of an installable pure wheel of ``name==version`` with nothing in it but its
    ``requires`` as Requires-Dist."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{dist}/__init__.py": b"",
             f"{info}/METADATA": meta.encode(),
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
    with serve_index({n: {v: ()} for n, v in pins.items()}) as url:
        yield url


def _served_requires(requires: Iterator[str] | tuple[str, ...] | list[str], names: set[str]) -> tuple[str, ...]:
    """The Requires-Dist lines that name a served project (the rest of a real wheel's requirements dropped)."""
    import re

    from packaging.utils import canonicalize_name

    out = []
    for r in requires:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", r)
        if m and canonicalize_name(m.group(1)) in names:
            out.append(r)
    return tuple(out)


@contextmanager
def serve_index(projects: Mapping[str, Mapping[str, tuple[str, ...] | list[str]]]) -> Iterator[str]:
    """Serve tiny wheels for ``name -> version -> Requires-Dist`` (real METADATA recorded from the index, reduced to
    the requirements on the served projects); yields the index's simple URL."""
    names = set(projects)
    files: dict[str, list[tuple[str, bytes]]] = {
        n: [tiny_wheel(n, v, _served_requires(list(reqs), names)) for v, reqs in versions.items()]
        for n, versions in projects.items()}
    wheels = {fn: data for fs in files.values() for fn, data in fs}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real index: uv's pool otherwise stalls on closed connections
        disable_nagle_algorithm = True  # headers and body leave at once: no delayed-ACK stall per request

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
            if len(parts) == 2 and parts[0] == "simple" and parts[1] in files:
                page = {"meta": {"api-version": "1.1"}, "name": parts[1],
                        "files": [{"filename": fn, "url": f"/files/{fn}", "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                                   "upload-time": "2025-01-01T00:00:00Z"} for fn, data in files[parts[1]]]}
                return self._send(json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
            if len(parts) == 2 and parts[0] == "files" and parts[1] in wheels:
                return self._send(wheels[parts[1]], "application/octet-stream")
            self.send_error(404)

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True).start()
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

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()


RECORDED_BASE = "https://index.invalid/"  # where the recorded pages (tests/fixtures/resolver/pages.json) say files are


@contextmanager
def serve_recorded(recorded: Mapping[str, Mapping[str, object]]) -> Iterator[str]:
    """Serve a recorded index (``{"pages": {name: PEP 691 page}, "metadata": {file URL + ".metadata": text}}``, as
    tests/fixtures/resolver/record.py records it) over HTTP: each page as its project's simple page, with the file
    URLs moved from the recording's placeholder host to this server, and each METADATA file at its path; anything
    else is 404, as on a real index. Yields the index's simple URL, for ``--index-url``."""
    pages = recorded["pages"]
    metadata = {url.removeprefix(RECORDED_BASE): str(text) for url, text in recorded["metadata"].items()}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path.split("?")[0].lstrip("/")
            parts = [p for p in path.split("/") if p]
            if len(parts) == 2 and parts[0] == "simple" and parts[1] in pages:
                text = json.dumps(pages[parts[1]]).replace(RECORDED_BASE, base)
                return self._send(200, text.encode(), "application/vnd.pypi.simple.v1+json")
            if path in metadata:
                return self._send(200, metadata[path].encode(), "application/octet-stream")
            return self._send(404, b"", "text/plain")

    server = Server(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True).start()
    try:
        yield base + "simple/"
    finally:
        server.shutdown()
