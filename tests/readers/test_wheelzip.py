"""Remote zip reader over an httpx transport that serves byte ranges (and misbehaves on request)."""

from __future__ import annotations

import io
import random
import struct
import zipfile
import zlib

import httpx
import pytest

from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.model.errors import EnvironmentFailure, WheelError
from glmcompat.readers import wheelzip
from glmcompat.readers.wheelzip import BytesSource, RemoteZip, SparseMember, decode_tail

URL = "https://files.invalid/pkg-1.0-py3-none-any.whl"


def serve(data: bytes, mode: str = "range", calls: list[str] | None = None) -> httpx.Client:
    """A client whose transport serves ``data`` with Range support, or ignoring it, or short."""
    state = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        state["n"] += 1
        rng = request.headers.get("range")
        if calls is not None:
            calls.append(rng or "")
        if mode == "404":
            return httpx.Response(404)
        if mode == "flaky" and state["n"] <= 2:
            return httpx.Response(503)
        if mode == "ignore" or rng is None:
            return httpx.Response(200, content=data, headers={"content-length": str(len(data))})
        spec = rng.removeprefix("bytes=")
        lo_s, _, hi_s = spec.partition("-")
        if lo_s == "":
            lo, hi = max(0, len(data) - int(hi_s)), len(data) - 1
        else:
            lo, hi = int(lo_s), min(int(hi_s), len(data) - 1)
        body = data[lo:hi + 1]
        if mode == "short":
            body = body[: max(1, len(body) // 2)]
            hi = lo + len(body) - 1
        if mode == "stuck":
            body = b""
            return httpx.Response(206, content=body, headers={"content-range": f"bytes {lo}-{lo}/{len(data)}"})
        return httpx.Response(206, content=body, headers={"content-range": f"bytes {lo}-{hi}/{len(data)}"})

    return httpx.Client(transport=httpx.MockTransport(handler))


def make_zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


_TABLE = bytes(b"abcdefghijklmnopqrstuvwxyz_0123456789"[i % 37] for i in range(256))


def text_blob(n: int, seed: int = 1) -> bytes:
    """Symbol-table-like text: common words and fresh names (new literals keep appearing, as in .dynstr)."""
    rnd = random.Random(seed)
    words = [rnd.randbytes(rnd.randint(3, 12)).translate(_TABLE) for _ in range(20000)]
    out = bytearray()
    while len(out) < n:
        if rnd.random() < 0.1:
            out += rnd.choice(words)
        else:
            out += rnd.randbytes(rnd.randint(2, 8)).translate(_TABLE)
        out += b"\x00" if rnd.random() < 0.3 else b"_"
    return bytes(out[:n])


MEMBERS = {
    "pkg/__init__.py": b"print('hi')\n" * 100,
    "pkg/data.bin": text_blob(300_000),
    "pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\nRequires-Dist: torch==2.9.1\n",
}


@pytest.mark.parametrize("mode", ["range", "short", "ignore", "flaky"])
def test_read_members(mode: str) -> None:
    data = make_zip(MEMBERS)
    r = HttpRangeReader(serve(data, mode), URL, size=len(data), backoff=0)
    zf = RemoteZip(r)
    assert sorted(m.name for m in zf.members) == sorted(MEMBERS)
    for name, want in MEMBERS.items():
        assert zf.read(name) == want
    assert b"".join(zf.stream("pkg/data.bin", chunk=1000)) == MEMBERS["pkg/data.bin"]
    assert zf.read(zf.find_metadata()).startswith(b"Metadata-Version")
    if mode == "range":
        assert r.bytes_fetched < len(data) * 4
    if mode == "ignore":
        assert r.ignores_range


def test_size_learned_from_suffix_range() -> None:
    data = make_zip(MEMBERS)
    r = HttpRangeReader(serve(data), URL)
    assert RemoteZip(r).read("pkg/__init__.py") == MEMBERS["pkg/__init__.py"]
    assert r.size == len(data)


def test_ranges_are_used() -> None:
    big = make_zip({**MEMBERS, "pkg/huge.bin": random.Random(3).randbytes(2_000_000)})
    calls: list[str] = []
    r = HttpRangeReader(serve(big, calls=calls), URL, size=len(big))
    RemoteZip(r).read("pkg-1.0.dist-info/METADATA")
    assert r.bytes_fetched < 200_000
    assert all(c.startswith("bytes=") for c in calls)


def test_stuck_server_fails_cleanly() -> None:
    data = make_zip(MEMBERS)
    r = HttpRangeReader(serve(data, "stuck"), URL, size=len(data), backoff=0)
    with pytest.raises(WheelError, match="short answer|early"):
        RemoteZip(r)


def test_404() -> None:
    r = HttpRangeReader(serve(b"", "404"), URL, size=100)
    with pytest.raises(WheelError, match="HTTP 404"):
        RemoteZip(r)


def test_offline() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no route", request=request)

    r = HttpRangeReader(httpx.Client(transport=httpx.MockTransport(handler)), URL, size=100, backoff=0)
    with pytest.raises(EnvironmentFailure, match="cannot connect"):
        RemoteZip(r)


# -- bad archives -----------------------------------------------------------------------------------


def test_not_a_zip() -> None:
    with pytest.raises(WheelError, match="not a zip archive") as e:
        RemoteZip(BytesSource(b"hello world, not a zip" * 10, "bad.whl"))
    assert str(e.value).startswith("bad.whl: ")


def _patch_cd(data: bytes, name: str, **fields: int) -> bytes:
    """Change central-directory fields (crc, csize, usize) of member ``name``."""
    out = bytearray(data)
    pos = out.find(b"PK\x01\x02")
    offs = {"crc": 16, "csize": 20, "usize": 24}
    while pos >= 0:
        nlen = struct.unpack_from("<H", out, pos + 28)[0]
        if out[pos + 46:pos + 46 + nlen].decode() == name:
            for k, v in fields.items():
                struct.pack_into("<I", out, pos + offs[k], v)
            return bytes(out)
        pos = out.find(b"PK\x01\x02", pos + 4)
    raise AssertionError(name)


def test_zip_bomb_declared_sizes() -> None:
    data = _patch_cd(make_zip(MEMBERS), "pkg/__init__.py", usize=0xFFFFFFF0)
    with pytest.raises(WheelError, match="beyond sane limits") as e:
        RemoteZip(BytesSource(data, "bomb.whl"))
    assert "bomb.whl: pkg/__init__.py" in str(e.value)


def test_real_bomb_is_bounded() -> None:
    # A member that inflates far beyond what its directory entry declares.
    payload = bytes(50_000_000)
    data = make_zip({"pkg/zeros": payload})
    data = _patch_cd(data, "pkg/zeros", usize=1000)
    with pytest.raises(WheelError, match="beyond sane limits|inflates past"):
        zf = RemoteZip(BytesSource(data, "bomb.whl"))
        zf.read("pkg/zeros")


def test_crc_mismatch() -> None:
    data = _patch_cd(make_zip(MEMBERS), "pkg/__init__.py", crc=12345)
    zf = RemoteZip(BytesSource(data, "crc.whl"))
    with pytest.raises(WheelError, match="CRC mismatch"):
        zf.read("pkg/__init__.py")
    with pytest.raises(WheelError, match="CRC mismatch"):
        b"".join(zf.stream("pkg/__init__.py"))


def test_truncated_archive() -> None:
    data = make_zip(MEMBERS)
    cut = data[: len(data) // 2] + data[-200:]
    with pytest.raises(WheelError):
        zf = RemoteZip(BytesSource(cut, "cut.whl"))
        for m in zf.members:
            zf.read(m)


def test_no_such_member() -> None:
    zf = RemoteZip(BytesSource(make_zip(MEMBERS), "x.whl"))
    with pytest.raises(WheelError, match="x.whl: nope: no such member"):
        zf.read("nope")


def _zip64(members: dict[str, bytes]) -> bytes:
    """A zip whose central directory uses zip64 sizes, offsets and end records throughout."""
    out = bytearray()
    cd = bytearray()
    for name, data in members.items():
        comp = zlib.compress(data)[2:-4]
        crc = zlib.crc32(data)
        off = len(out)
        nb = name.encode()
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 45, 0, 8, 0, 0, crc, len(comp), len(data), len(nb), 0)
        out += nb + comp
        extra = struct.pack("<HHQQQ", 1, 24, len(data), len(comp), off)
        cd += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 45, 45, 0, 8, 0, 0, crc, 0xFFFFFFFF,
                          0xFFFFFFFF, len(nb), len(extra), 0, 0, 0, 0, 0xFFFFFFFF)
        cd += nb + extra
    cd_off = len(out)
    out += cd
    z64 = len(out)
    out += struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, len(members), len(members), len(cd), cd_off)
    out += struct.pack("<4sIQI", b"PK\x06\x07", 0, z64, 1)
    out += struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return bytes(out)


def test_zip64() -> None:
    data = _zip64(MEMBERS)
    zipfile.ZipFile(io.BytesIO(data)).testzip()  # the stdlib agrees it is valid
    zf = RemoteZip(BytesSource(data, "z64.whl"))
    for name, want in MEMBERS.items():
        assert zf.read(name) == want


# -- deflate tail trick -------------------------------------------------------------------------------


def test_decode_tail_exact() -> None:
    data = text_blob(3_000_000, seed=7)
    comp = zlib.compress(data, 6)[2:-4]
    found = decode_tail(comp[-200_000:])
    assert found is not None
    a, b = found
    assert len(a) == len(b) > 200_000
    base = len(data) - len(a)
    agree = [i for i in range(0, len(a), 997) if a[i] == b[i]]
    assert len(agree) > len(range(0, len(a), 997)) // 2
    assert all(data[base + i] == a[i] for i in agree)


def test_decoding_once_after_the_windows_agree_changes_nothing() -> None:
    """Once the two made-up windows' decodings agree over 32 KiB the rest is inflated once: both results are those of
    inflating every byte twice."""
    data = text_blob(1_500_000, seed=4)
    comp = zlib.compress(data, 6)[2:-4]
    hit = wheelzip._boundary(comp[-400_000:])
    assert hit is not None
    k, s, (a, b) = hit
    rest = wheelzip._shift(comp[-400_000:][k:], s)
    da = zlib.decompressobj(-15, zdict=wheelzip._WINDOW_A)
    db = zlib.decompressobj(-15, zdict=wheelzip._WINDOW_B)
    assert (a, b) == (da.decompress(rest), db.decompress(rest))
    assert a != b and a[-100_000:] == b[-100_000:] == data[-100_000:]


def test_block_candidates_are_the_bit_by_bit_ones() -> None:
    """The candidates found by regular expressions over shifted copies are those of the bit-by-bit search, in its
    order (random bytes across a chunk boundary, real deflate data, runs of one byte); those left out for an incomplete
    code-length code are exactly ones zlib refuses."""
    rnd = random.Random(5)
    comp = zlib.compress(text_blob(100_000, seed=5), 6)[2:-4]
    regions = [comp[len(comp) // 3:len(comp) // 3 + 8000], comp[-3000:],
               bytes(3000), b"\xff" * 3000, b"\x00\x00\xff\xff" * 700, rnd.randbytes(9), b""]
    regions += [rnd.randbytes(rnd.randrange(1, 600)) for _ in range(40)]
    regions += [rnd.randbytes(wheelzip._CHUNK + 8 + d) for d in (-1, 1, 5)]  # the last candidates near a chunk's edge
    for region in regions:
        shifted = [wheelzip._shift(region, s) for s in range(8)]
        every = list(wheelzip._candidates_slow(region))
        assert list(wheelzip._candidates(region, complete=False)) == every
        kept = list(wheelzip._candidates(region))
        left = set(kept)
        assert kept == [c for c in every if c in left]
        for k, s in set(every) - left:
            with pytest.raises(zlib.error):
                zlib.decompressobj(-15, zdict=wheelzip._WINDOW_A).decompress(shifted[s][k:k + 2048], 1 << 16)
    assert len(kept) < len(every)  # the filter leaves candidates out (random bytes: most of them)


def test_readers_of_one_member_search_its_tail_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second reader of a member (the NumPy scan after the symbol tables) decodes its tail from the boundary the first
    found, trying no candidate again, and gets the same bytes."""
    data = text_blob(2_000_000, seed=11)
    zf = RemoteZip(BytesSource(make_zip({"lib/x.so": data}), "w.whl"))
    m = zf.member("lib/x.so")
    tried: list[int] = []
    real = wheelzip._candidates

    def counted(*a: object, **k: object):  # type: ignore[no-untyped-def]
        for c in real(*a, **k):  # type: ignore[arg-type]
            tried.append(c[0])
            yield c

    monkeypatch.setattr(wheelzip, "_candidates", counted)
    first = SparseMember(zf, m)
    first.ensure(len(data) - 40_000, 40_000)
    assert first.get(len(data) - 40_000, 40_000) == data[-40_000:]
    assert tried and m.name in zf.boundaries
    tried.clear()
    second = SparseMember(zf, m)
    second.ensure(len(data) - 60_000, 20_000)  # further from the end (its fetch covers the first's boundary)
    assert second.get(len(data) - 60_000, 20_000) == data[-60_000:-40_000]
    assert tried == []
    third = SparseMember(zf, m)  # asks for bytes before what that boundary decodes to: it searches for an earlier one
    third.ensure(len(data) - 900_000, 1000)
    assert third.get(len(data) - 900_000, 1000) == data[-900_000:-899_000]
    assert tried


@pytest.mark.slow
def test_sparse_member_prefix_and_tail() -> None:
    data = text_blob(4_000_000, seed=9)
    z = make_zip({"lib/x.so": data})
    src = BytesSource(z, "w.whl")
    zf = RemoteZip(src)
    opened = src.bytes_fetched  # the central directory
    sm = SparseMember(zf, zf.member("lib/x.so"))
    sm.ensure(0, 1000)
    sm.ensure(len(data) - 50_000, 50_000)
    assert sm.get(0, 1000) == data[:1000]
    assert sm.get(len(data) - 50_000, 50_000) == data[-50_000:]
    assert src.bytes_fetched - opened < len(z) // 2  # the member's prefix and tail, not the whole of it


# -- issue 12: a server that cuts its answers short is an environment failure (exit 3) ------------


def test_range_answers_cut_short_are_a_transfer_error() -> None:
    """A 206 whose connection closes before the promised bytes raised httpx's RemoteProtocolError (a traceback)."""
    from glmcompat.model.errors import TransferError

    data = make_zip(MEMBERS)

    class Cut(httpx.SyncByteStream):
        def __init__(self, body: bytes) -> None:
            self.body = body

        def __iter__(self):  # type: ignore[no-untyped-def]
            yield self.body[: len(self.body) // 2]
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    def handler(request: httpx.Request) -> httpx.Response:
        lo_s, _, hi_s = request.headers["range"].removeprefix("bytes=").partition("-")
        lo, hi = (len(data) - int(hi_s), len(data) - 1) if lo_s == "" else (int(lo_s), min(int(hi_s), len(data) - 1))
        return httpx.Response(206, stream=Cut(data[lo:hi + 1]), headers={"content-range": f"bytes {lo}-{hi}/{len(data)}"})

    r = HttpRangeReader(httpx.Client(transport=httpx.MockTransport(handler)), URL, size=len(data), backoff=0)
    with pytest.raises(TransferError, match="keeps cutting its answers short") as e:
        RemoteZip(r).read("pkg-1.0.dist-info/METADATA")
    assert e.value.exit_code == 3 and isinstance(e.value, WheelError)


def test_one_cut_is_recovered() -> None:
    """A single cut connection is asked again from where it stopped (no error)."""
    data = make_zip(MEMBERS)
    state = {"cut": True}

    class CutOnce(httpx.SyncByteStream):
        def __init__(self, body: bytes) -> None:
            self.body = body

        def __iter__(self):  # type: ignore[no-untyped-def]
            if state["cut"] and len(self.body) > 10:
                state["cut"] = False
                yield self.body[:10]
                raise httpx.ReadError("connection reset")
            yield self.body

    def handler(request: httpx.Request) -> httpx.Response:
        lo_s, _, hi_s = request.headers["range"].removeprefix("bytes=").partition("-")
        lo, hi = (len(data) - int(hi_s), len(data) - 1) if lo_s == "" else (int(lo_s), min(int(hi_s), len(data) - 1))
        return httpx.Response(206, stream=CutOnce(data[lo:hi + 1]),
                              headers={"content-range": f"bytes {lo}-{hi}/{len(data)}"})

    r = HttpRangeReader(httpx.Client(transport=httpx.MockTransport(handler)), URL, size=len(data), backoff=0)
    zf = RemoteZip(r)
    assert zf.read("pkg-1.0.dist-info/METADATA") == MEMBERS["pkg-1.0.dist-info/METADATA"]


def test_range_requests_are_windowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """No request asks for more than WINDOW bytes (each has an overall deadline, so each must be bounded)."""
    import glmcompat.edges.ranges as rz

    monkeypatch.setattr(rz, "WINDOW", 4096)
    data = make_zip({"big.bin": bytes(range(256)) * 400}, zipfile.ZIP_STORED)
    calls: list[str] = []
    r = HttpRangeReader(serve(data, "range", calls), URL, size=len(data))
    zf = RemoteZip(r)
    assert b"".join(zf.stream("big.bin")) == bytes(range(256)) * 400
    spans = [c.removeprefix("bytes=").split("-") for c in calls if c and not c.startswith("bytes=-")]
    assert all(int(hi) - int(lo) + 1 <= 4096 for lo, hi in spans)
