"""Builders shared by the probe tests: gcc-built fake torch and extension wheels, and an index that
serves them (an httpx transport, or a real local HTTP server with misbehaving modes).

No tests here; other test modules import it as ``tests.abifakes``.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import shutil
import struct
import subprocess
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import httpx

from tests.localindex import POLL

BASE = "https://index.invalid/simple"
FILES = "https://files.invalid"
HAVE_GXX = shutil.which("g++") is not None

C10_OLD = r"""
namespace c10 { struct MessageLogger { MessageLogger(const char*, int, int); };
MessageLogger::MessageLogger(const char*, int, int) {}
namespace cuda { void check(int) {} } }
extern "C" int torch_c_api(void) { return 1; }
"""
C10_NEW = r"""
namespace c10 { struct MessageLogger { MessageLogger(const char*, int, int, bool); };
MessageLogger::MessageLogger(const char*, int, int, bool) {}
namespace cuda { void check(int) {} } }
extern "C" int torch_c_api(void) { return 1; }
extern "C" void* torch_new_stable_ivalue(void) { return 0; }
"""
EXT = r"""
namespace c10 { struct MessageLogger { MessageLogger(const char*, int, int); };
namespace cuda { void check(int); } }
extern "C" int cudaRuntimeGetVersion(int*);
extern "C" __attribute__((weak)) void optional_hook(void);
extern "C" int torch_c_api(void);
extern "C" int ext_entry(void) {
  c10::MessageLogger m("f", 1, 2); c10::cuda::check(0);
  int v; cudaRuntimeGetVersion(&v);
  if (optional_hook) optional_hook();
  return torch_c_api();
}
"""
# An extension built on torch's stable C ABI: it needs a C-named function only the newer torch exports.
STABLE_EXT = r"""
extern "C" void* torch_new_stable_ivalue(void);
extern "C" int torch_c_api(void);
extern "C" void* stable_entry(void) { torch_c_api(); return torch_new_stable_ivalue(); }
"""
CUDART = 'extern "C" int cudaRuntimeGetVersion(int* v) { *v = 12080; return 0; }\n'


# (source, its name, the soname, the arguments as gcc sees them) -> (the library, its mode): the fake wheels are built
# from the same sources in a dozen test modules a process (``build_fakes``, seven builds each); g++'s output depends
# only on what it is given, never on the folder (tests/ops/verify/gcconce.py says why), so a build seen before is copied
_GXX: dict[tuple[object, ...], tuple[bytes, int]] = {}


def gxx(tmp: Path, name: str, src: str, soname: str, *extra: str) -> Path:
    """``g++ -shared -fPIC -O1`` of ``src`` (written to ``tmp/NAME.cpp``) into ``tmp/SONAME``, run once a process for
    each distinct build (the arguments identified as :func:`tests.ops.verify.gcconce.gcc` identifies them)."""
    from tests.ops.verify.gcconce import identify  # lazy: the verify tests' helper, one rule for both compilers

    c = tmp / f"{name}.cpp"
    c.write_text(src)
    out = tmp / soname
    key = (src, name, soname, tuple(("-L", identify(a[2:])) if a.startswith("-L") else identify(a) for a in extra))
    if key in _GXX:
        data, mode = _GXX[key]
        out.write_bytes(data)
        out.chmod(mode)
        return out
    subprocess.run(["g++", "-shared", "-fPIC", "-O1", "-o", str(out), str(c), f"-Wl,-soname,{soname}", *extra],
                   check=True, capture_output=True)
    _GXX[key] = (out.read_bytes(), out.stat().st_mode & 0o7777)
    return out


def patchelf_like(data: bytes, pad: int, seed: int = 0) -> bytes:
    """Move .dynstr after ``pad`` random bytes at the end of the file, as patchelf leaves torch's libs."""
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 58)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynsym = next(i for i, s in enumerate(secs) if s[1] == 11)
    idx = secs[dynsym][6]
    s = secs[idx]
    blob = data[s[4]:s[4] + s[5]]
    out = bytearray(data) + random.Random(seed).randbytes(pad)
    out += bytes(-len(out) % 16)
    rec = list(s)
    rec[4] = len(out)
    out += blob
    struct.pack_into("<IIQQQQIIQQ", out, shoff + idx * shentsize, *rec)
    out[s[4]:s[4] + s[5]] = b"\xee" * s[5]
    return bytes(out)


def wheel(members: dict[str, bytes], name: str, version: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            zf.writestr(n, d)
        zf.writestr(f"{name}-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return buf.getvalue()


def fatbin_section() -> bytes:
    def entry(kind: int, arch: int, flags: int = 0) -> bytes:
        h = bytearray(64)
        struct.pack_into("<HHIQ", h, 0, kind, 0x101, 64, 16)
        struct.pack_into("<I", h, 28, arch)
        struct.pack_into("<Q", h, 40, flags | 0x11)
        return bytes(h) + b"\xcd" * 16

    body = entry(2, 80) + entry(2, 90, 0x100000) + entry(2, 120, 0x100000)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def build_fakes(tmp: Path) -> dict[str, bytes]:
    """{wheel filename: bytes} for torch 9.0.0 / 9.1.0 (cp311 manylinux x86_64), ext 1.0 (abi3) and
    stableext 1.0 (needs the C-named ``torch_new_stable_ivalue`` that only torch 9.1.0 exports)."""
    tmp.mkdir(parents=True, exist_ok=True)
    old = gxx(tmp, "c10old", C10_OLD, "libc10.so")
    old_b = old.read_bytes()
    new = gxx(tmp, "c10new", C10_NEW, "libc10.so").read_bytes()
    cudart = gxx(tmp, "cudart", CUDART, "libcudart.so.12")
    (tmp / "link").mkdir(exist_ok=True)
    shutil.copy(old, tmp / "link" / "libc10.so")
    shutil.copy(cudart, tmp / "link" / "libcudart.so")
    ext = gxx(tmp, "ext", EXT, "_C.so", f"-L{tmp / 'link'}", "-lc10", "-lcudart").read_bytes()
    fat_src = "__attribute__((section(\".nv_fatbin\"), used)) const unsigned char fb[] = {" + \
        ",".join(str(b) for b in fatbin_section()) + "};\n"
    fat = gxx(tmp, "fat", fat_src, "_kernels.so").read_bytes()
    (tmp / "link-new").mkdir(exist_ok=True)
    (tmp / "link-new" / "libc10.so").write_bytes(new)
    stable = gxx(tmp, "stable", STABLE_EXT, "_C_stable.so", f"-L{tmp / 'link-new'}", "-lc10").read_bytes()
    cuda_lib = gxx(tmp, "torchcuda", "", "libtorch_cuda.so").read_bytes()  # a CUDA build's library (no exports)
    out = {}
    for ver, c10 in (("9.0.0", old_b), ("9.1.0", new)):
        members = {"torch/__init__.py": b"", "torch/lib/libc10.so": patchelf_like(c10, 3_000_000),
                   "torch/lib/libtorch_global_deps.so": cudart.read_bytes(), "torch/lib/libtorch_cuda.so": cuda_lib}
        out[f"torch-{ver}-cp311-cp311-manylinux_2_28_x86_64.whl"] = wheel(members, "torch", ver)
    out["ext-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = wheel(
        {"ext/__init__.py": b"", "ext/_C.so": ext, "ext/_kernels.so": fat}, "ext", "1.0")
    out["stableext-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = wheel(
        {"stableext/__init__.py": b"", "stableext/_C_stable.so": stable}, "stableext", "1.0")
    return out


def pages(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for fn, data in sorted(files.items()):
        name = fn.split("-")[0]
        page = out.setdefault(name, {"meta": {"api-version": "1.1"}, "name": name, "files": [], "versions": []})
        page["files"].append({"filename": fn, "url": f"{FILES}/{fn}", "size": len(data),
                              "hashes": {"sha256": hashlib.sha256(data).hexdigest()}, "requires-python": ">=3.10",
                              "yanked": False})
        ver = fn.split("-")[1]
        if ver not in page["versions"]:
            page["versions"].append(ver)
    return out


def serve_range(data: bytes, rng: str | None) -> tuple[int, bytes, dict[str, str]]:
    if not rng:
        return 200, data, {"content-length": str(len(data))}
    lo_s, _, hi_s = rng.removeprefix("bytes=").partition("-")
    if lo_s == "":
        lo, hi = max(0, len(data) - int(hi_s)), len(data) - 1
    else:
        lo, hi = int(lo_s), min(int(hi_s), len(data) - 1)
    return 206, data[lo:hi + 1], {"content-range": f"bytes {lo}-{hi}/{len(data)}"}


class Transport:
    """httpx transport: the fake index and its files. ``calls`` records every URL asked for."""

    def __init__(self, files: dict[str, bytes], *, offline: bool = False) -> None:
        self.files = files
        self.pages = pages(files)
        self.calls: list[str] = []
        self.offline = offline

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.calls.append(url)
        if self.offline:
            raise httpx.ConnectError("offline", request=request)
        if url.startswith(BASE + "/"):
            name = url[len(BASE) + 1:].strip("/")
            if name not in self.pages:
                return httpx.Response(404)
            return httpx.Response(200, content=json.dumps(self.pages[name]).encode(),
                                  headers={"content-type": "application/vnd.pypi.simple.v1+json"})
        fn = url.rsplit("/", 1)[-1]
        if fn not in self.files:
            return httpx.Response(404)
        status, body, headers = serve_range(self.files[fn], request.headers.get("range"))
        return httpx.Response(status, content=body, headers=headers)

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))


class LocalServer:
    """A real HTTP server on 127.0.0.1 serving the fake index; ``modes[filename]`` makes it misbehave:
    ``ignore-range`` (200 with the whole body), ``short`` (206 bodies cut in half), ``stall``; ``digests[filename]``
    adds a ``Repr-Digest`` header to its answers."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.modes: dict[str, str] = {}
        self.digests: dict[str, str] = {}  # filename -> a Repr-Digest header value (RFC 9530) sent with its bytes
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:  # noqa: N802  (uv asks a wheel's size before reading its METADATA by ranges)
                outer.requests += 1
                data = outer.files.get(self.path.rsplit("/", 1)[-1])
                self.send_response(404 if data is None else 200)
                self.send_header("content-length", str(0 if data is None else len(data)))
                self.send_header("accept-ranges", "bytes")
                self.end_headers()

            def do_GET(self) -> None:  # noqa: N802
                outer.requests += 1
                path = self.path
                if path.startswith("/simple/"):
                    name = path[len("/simple/"):].strip("/")
                    pg = pages_local.get(name)
                    if pg is None:
                        self.send_response(404)
                        self.end_headers()
                        return
                    body = json.dumps(pg).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/vnd.pypi.simple.v1+json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                fn = path.rsplit("/", 1)[-1]
                data = outer.files.get(fn)
                if data is None:
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                mode = outer.modes.get(fn, "")
                rng = None if mode == "ignore-range" else self.headers.get("range")
                status, body, headers = serve_range(data, rng)
                if mode == "short" and status == 206:
                    lo = int(headers["content-range"].split()[1].split("-")[0])
                    body = body[: max(1, len(body) // 2)]
                    headers["content-range"] = f"bytes {lo}-{lo + len(body) - 1}/{len(data)}"
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if fn in outer.digests:
                    self.send_header("repr-digest", outer.digests[fn])
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{port}/simple"
        pages_local = pages(files)
        for pg in pages_local.values():
            for f in pg["files"]:
                f["url"] = f"http://127.0.0.1:{port}/files/{f['filename']}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(POLL,), daemon=True)

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def served_fakes(factory: Any) -> Iterator[tuple[LocalServer, dict[str, bytes]]]:
    """The fake wheels built once and served from 127.0.0.1, for a module fixture (``yield from`` it); the test is
    skipped where g++ is missing."""
    import pytest  # lazy: only the fixtures that serve the wheels need it

    if not HAVE_GXX:
        pytest.skip("g++ builds the fake wheels")
    files = build_fakes(factory.mktemp("fakes"))
    with LocalServer(files) as server:
        yield server, files
