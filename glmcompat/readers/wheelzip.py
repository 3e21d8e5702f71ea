"""Read single members of a wheel (a zip) through any random-access byte source (:class:`RangeSource`:
bytes in memory, or :class:`glmcompat.edges.ranges.HttpRangeReader` over HTTP range requests).

* :class:`RemoteZip` parses the central directory (zip64 included) with sanity limits (member count,
  directory size, declared sizes: a zip bomb is refused before anything is inflated), reads a member
  whole (size and CRC checked) or streams it.
* :class:`SparseMember` knows a member's uncompressed bytes in two regions, a prefix and a tail,
  without inflating the middle: the tail is decoded from a deflate block boundary found by trial,
  with two different made-up windows; the bytes on which both decodings agree are exact.

Every failure is a :class:`glmcompat.model.errors.WheelError`, one line naming the wheel and the member.
:class:`NeedBytes` is not a failure: a reader over a partial byte source raises it to ask for the spans it lacks.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from glmcompat.model.errors import WheelError

if TYPE_CHECKING:
    pass

MiB = 1 << 20
MAX_MEMBERS = 200_000
MAX_CD_SIZE = 64 * MiB
MAX_MEMBER_SIZE = 16 << 30  # declared uncompressed size of one member
MAX_RATIO = 1100  # deflate cannot exceed ~1032:1
MAX_READ = 256 * MiB  # what read() inflates into memory
EOCD_SEARCH = 65536 + 22


def _no_deadline() -> None:
    """The deadline of a source that has none (bytes in memory, a local file)."""


class RangeSource(Protocol):
    name: str
    bytes_fetched: int

    @property
    def size(self) -> int: ...

    def read(self, offset: int, length: int) -> bytes: ...

    def stream(self, offset: int, length: int, chunk: int = MiB) -> Iterator[bytes]: ...


class BytesSource:
    """A :class:`RangeSource` over bytes in memory (local wheels, tests)."""

    def __init__(self, data: bytes, name: str = "<bytes>") -> None:
        self._data = data
        self.name = name
        self.bytes_fetched = 0

    @property
    def size(self) -> int:
        return len(self._data)

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > len(self._data):
            raise WheelError(self.name, f"read past the end ({offset}+{length} > {len(self._data)})")
        self.bytes_fetched += length
        return self._data[offset:offset + length]

    def stream(self, offset: int, length: int, chunk: int = MiB) -> Iterator[bytes]:
        end = offset + length
        while offset < end:
            n = min(chunk, end - offset)
            yield self.read(offset, n)
            offset += n


# ------------------------------------------------------------------------------------------------
# Zip structure (pure)
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ZipMember:
    name: str
    method: int
    flags: int
    crc: int
    compressed_size: int
    size: int
    header_offset: int


def _find_eocd(tail: bytes) -> int:
    i = tail.rfind(b"PK\x05\x06")
    while i >= 0:
        if i + 22 <= len(tail):
            comment_len = struct.unpack_from("<H", tail, i + 20)[0]
            if i + 22 + comment_len <= len(tail):
                return i
        i = tail.rfind(b"PK\x05\x06", 0, i)
    return -1


def parse_central_directory(cd: bytes, count: int, wheel: str, archive_size: int) -> list[ZipMember]:
    """Parse ``count`` central-directory records (pure); sizes and offsets checked against the archive."""
    members: list[ZipMember] = []
    pos = 0
    for _ in range(count):
        if pos + 46 > len(cd) or cd[pos:pos + 4] != b"PK\x01\x02":
            raise WheelError(wheel, f"corrupt central directory (record at +{pos})")
        (_, _, _, flags, method, _, _, crc, csize, usize, nlen, xlen, clen, _, _, _, hoff) = struct.unpack_from(
            "<4sHHHHHHIIIHHHHHII", cd, pos)
        name_b = cd[pos + 46:pos + 46 + nlen]
        extra = cd[pos + 46 + nlen:pos + 46 + nlen + xlen]
        pos += 46 + nlen + xlen + clen
        if pos > len(cd):
            raise WheelError(wheel, "corrupt central directory (record runs past its end)")
        name = name_b.decode("utf-8" if flags & 0x800 else "cp437", "replace")
        if 0xFFFFFFFF in (usize, csize, hoff):
            usize, csize, hoff = _zip64_extra(extra, usize, csize, hoff, wheel, name)
        if method not in (0, 8):
            raise WheelError(wheel, f"unsupported compression method {method}", name)
        if hoff + 30 + csize > archive_size:
            raise WheelError(wheel, f"data runs past the end of the archive (offset {hoff}, {csize} bytes)", name)
        if usize > MAX_MEMBER_SIZE or (method == 8 and usize > csize * MAX_RATIO + MiB):
            raise WheelError(
                wheel, f"declared size {usize} bytes from {csize} compressed is beyond sane limits (zip bomb?)", name)
        if method == 0 and usize != csize:
            raise WheelError(wheel, f"stored member declares {csize} compressed vs {usize} bytes", name)
        members.append(ZipMember(name, method, flags, crc, csize, usize, hoff))
    return members


def _zip64_extra(extra: bytes, usize: int, csize: int, hoff: int, wheel: str, name: str) -> tuple[int, int, int]:
    pos = 0
    while pos + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4:pos + 4 + size]
        pos += 4 + size
        if tag != 1:
            continue
        vals = []
        for i in range(len(body) // 8):
            vals.append(struct.unpack_from("<Q", body, i * 8)[0])
        it = iter(vals)
        try:
            if usize == 0xFFFFFFFF:
                usize = next(it)
            if csize == 0xFFFFFFFF:
                csize = next(it)
            if hoff == 0xFFFFFFFF:
                hoff = next(it)
        except StopIteration:
            raise WheelError(wheel, "zip64 extra field too short", name) from None
        return usize, csize, hoff
    raise WheelError(wheel, "zip64 sizes without a zip64 extra field", name)


class RemoteZip:
    """A zip archive behind a :class:`RangeSource`: its members, read whole or streamed."""

    def __init__(self, source: RangeSource) -> None:
        self.source = source
        self.name = source.name
        # the source's deadline (a remote file's: its requests, and the inflating and parsing here, share it)
        self.tick: Callable[[], None] = getattr(source, "check", None) or _no_deadline
        self.members = self._read_directory()
        self._by_name = {m.name: m for m in self.members}
        self._data_offsets: dict[str, int] = {}

    def _read_directory(self) -> list[ZipMember]:
        size = self.source.size
        if size < 22:
            raise WheelError(self.name, f"not a zip archive ({size} bytes)")
        n = min(size, EOCD_SEARCH)
        tail = self.source.read(size - n, n)
        i = _find_eocd(tail)
        if i < 0:
            raise WheelError(self.name, "not a zip archive (no end-of-central-directory record)")
        (_, disk, _, _, count, cd_size, cd_off, _) = struct.unpack_from("<4sHHHHIIH", tail, i)
        if disk not in (0, 0xFFFF):
            raise WheelError(self.name, "multi-disk zip archives are not supported")
        eocd_pos = size - n + i
        if 0xFFFF == count or 0xFFFFFFFF in (cd_size, cd_off):
            loc = i - 20
            if loc < 0 or tail[loc:loc + 4] != b"PK\x06\x07":
                raise WheelError(self.name, "zip64 end-of-central-directory locator missing")
            z64_off = struct.unpack_from("<Q", tail, loc + 8)[0]
            if z64_off + 56 > size:
                raise WheelError(self.name, "zip64 end-of-central-directory record past the end")
            rec = self.source.read(z64_off, 56)
            if rec[:4] != b"PK\x06\x06":
                raise WheelError(self.name, "corrupt zip64 end-of-central-directory record")
            count, cd_size, cd_off = struct.unpack_from("<QQQ", rec, 32)
            eocd_pos = z64_off
        if count > MAX_MEMBERS:
            raise WheelError(self.name, f"{count} members is beyond sane limits")
        if cd_size > MAX_CD_SIZE or cd_off + cd_size > eocd_pos:
            raise WheelError(self.name, f"central directory of {cd_size} bytes at {cd_off} does not fit the archive")
        start_in_tail = cd_off - (size - n)
        if start_in_tail >= 0 and start_in_tail + cd_size <= len(tail):
            cd = tail[start_in_tail:start_in_tail + cd_size]
        else:
            cd = self.source.read(cd_off, cd_size)
        return parse_central_directory(cd, count, self.name, size)

    # -- lookup -------------------------------------------------------------------------------------
    def member(self, name: str) -> ZipMember:
        try:
            return self._by_name[name]
        except KeyError:
            raise WheelError(self.name, "no such member", name) from None

    def find_metadata(self) -> ZipMember:
        cands = sorted(m.name for m in self.members
                       if m.name.endswith(".dist-info/METADATA") and m.name.count("/") == 1)
        if not cands:
            raise WheelError(self.name, "no *.dist-info/METADATA (not a wheel?)")
        return self.member(cands[0])

    def data_offset(self, m: ZipMember) -> int:
        """Where the member's compressed bytes start (after its local header)."""
        off = self._data_offsets.get(m.name)
        if off is None:
            hdr = self.source.read(m.header_offset, 30)
            if hdr[:4] != b"PK\x03\x04":
                raise WheelError(self.name, "corrupt local header", m.name)
            nlen, xlen = struct.unpack_from("<HH", hdr, 26)
            off = m.header_offset + 30 + nlen + xlen
            if off + m.compressed_size > self.source.size:
                raise WheelError(self.name, "member data runs past the end of the archive", m.name)
            self._data_offsets[m.name] = off
        return off

    def read_compressed(self, m: ZipMember, offset: int, length: int) -> bytes:
        if offset < 0 or offset + length > m.compressed_size:
            raise WheelError(self.name, "compressed read outside the member", m.name)
        return self.source.read(self.data_offset(m) + offset, length)

    # -- whole members --------------------------------------------------------------------------------
    def read(self, m: ZipMember | str, *, limit: int = MAX_READ) -> bytes:
        """The member's bytes, inflated, with size and CRC checked."""
        if isinstance(m, str):
            m = self.member(m)
        if m.size > limit:
            raise WheelError(self.name, f"{m.size} bytes is more than the {limit} this reads into memory", m.name)
        raw = self.read_compressed(m, 0, m.compressed_size)
        data = self._inflate_all(m, [raw])
        return data

    def stream(self, m: ZipMember | str, chunk: int = 4 * MiB) -> Generator[bytes, None, None]:
        """Yield the member's inflated bytes in pieces; size and CRC checked at the end."""
        if isinstance(m, str):
            m = self.member(m)
        src = self.source.stream(self.data_offset(m), m.compressed_size, chunk)
        crc = 0
        total = 0
        if m.method == 0:
            for piece in src:
                crc = zlib.crc32(piece, crc)
                total += len(piece)
                yield piece
        else:
            d = zlib.decompressobj(-15)
            for piece in src:
                try:
                    out = d.decompress(piece, m.size + 1 - total)
                    while True:
                        self.tick()
                        total += len(out)
                        if total > m.size:
                            raise WheelError(self.name, f"inflates past its declared {m.size} bytes", m.name)
                        if out:
                            crc = zlib.crc32(out, crc)
                            yield out
                        if not d.unconsumed_tail:
                            break
                        out = d.decompress(d.unconsumed_tail, m.size + 1 - total)
                except zlib.error as e:
                    raise WheelError(self.name, f"corrupt deflate data ({e})", m.name) from None
            tail = d.flush()
            if tail:
                total += len(tail)
                crc = zlib.crc32(tail, crc)
                yield tail
        self._check(m, total, crc)

    def _inflate_all(self, m: ZipMember, pieces: list[bytes]) -> bytes:
        if m.method == 0:
            data = b"".join(pieces)
        else:
            d = zlib.decompressobj(-15)
            try:
                data = d.decompress(b"".join(pieces), m.size + 1)
            except zlib.error as e:
                raise WheelError(self.name, f"corrupt deflate data ({e})", m.name) from None
            if len(data) > m.size:
                raise WheelError(self.name, f"inflates past its declared {m.size} bytes", m.name)
        self._check(m, len(data), zlib.crc32(data))
        return data

    def _check(self, m: ZipMember, total: int, crc: int) -> None:
        if total != m.size:
            raise WheelError(self.name, f"inflates to {total} bytes, not the declared {m.size}", m.name)
        if crc != m.crc:
            raise WheelError(self.name, f"CRC mismatch ({crc:08x} != {m.crc:08x})", m.name)


# ------------------------------------------------------------------------------------------------
# Partial members: a prefix and a tail, without the middle
# ------------------------------------------------------------------------------------------------


class NeedBytes(Exception):
    """Raised by a parser for uncompressed ranges it needs and does not have yet."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        self.ranges = ranges
        super().__init__(f"need {ranges}")


_WINDOW_A = bytes(32768)
_WINDOW_B = b"\xff" * 32768


def _shift(data: bytes, bits: int) -> bytes:
    if bits == 0:
        return data
    return (int.from_bytes(data, "little") >> bits).to_bytes(len(data), "little")


def _candidates(region: bytes) -> Iterator[tuple[int, int]]:
    """Bit positions (byte, bit) in ``region`` where a stored or dynamic-Huffman block may start."""
    n = len(region) - 8
    for k in range(max(0, n)):
        w = region[k] | region[k + 1] << 8 | region[k + 2] << 16
        for s in range(8):
            h = w >> s
            t = h & 7
            if t == 4:  # BFINAL=0, BTYPE=2 (dynamic); HLIT <= 29 and HDIST <= 29
                if (h >> 3) & 31 <= 29 and (h >> 8) & 31 <= 29:
                    yield k, s
            elif t == 0 or t == 1:  # stored: LEN and ~LEN at the next byte boundary
                b = k + (s + 3 + 7) // 8
                ln = region[b] | region[b + 1] << 8
                nl = region[b + 2] | region[b + 3] << 8
                if ln ^ nl == 0xFFFF:
                    yield k, s


def decode_tail(comp: bytes, *, quick: int = 2048, search: int = 4 * MiB,
                limit: int = 1 << 30, check: Callable[[], None] | None = None) -> tuple[bytes, bytes] | None:
    """Decode the end of a raw deflate stream from some block boundary inside ``comp``.

    ``comp`` is the last bytes of the stream. Returns ``(a, b)``: the stream's last ``len(a)``
    inflated bytes decoded with two different made-up windows; where ``a`` and ``b`` agree the bytes
    are exact (bytes copied, directly or not, from before ``comp`` differ). None when no candidate
    boundary decodes exactly to the end of the stream. ``check`` is called before each candidate is tried (a
    deadline: hostile data can offer many candidates, each inflating up to ``limit`` bytes).
    """
    region = comp[: min(len(comp), search) + 16]
    shifted = [_shift(region, s) for s in range(8)]
    for k, s in _candidates(region):
        if check is not None:
            check()
        probe = shifted[s][k:k + quick]
        d = zlib.decompressobj(-15, zdict=_WINDOW_A)
        try:
            d.decompress(probe, 1 << 16)
        except zlib.error:
            continue
        rest = _shift(comp[k:], s)
        try:
            da = zlib.decompressobj(-15, zdict=_WINDOW_A)
            a = da.decompress(rest, limit)
            if not da.eof or da.unused_data.strip(b"\x00"):
                continue
            db = zlib.decompressobj(-15, zdict=_WINDOW_B)
            b = db.decompress(rest, limit)
        except zlib.error:
            continue
        if len(a) != len(b):
            continue
        return a, b
    return None


class SparseMember:
    """A member's uncompressed bytes known in a prefix ``[0, p)`` and a tail ``[size - t, size)``.

    :meth:`get` returns bytes or raises :class:`NeedBytes`; :meth:`ensure` grows the prefix or the
    tail to cover a range, whichever is cheaper; ``max_prefix``/``max_tail`` bound the memory.
    """

    def __init__(self, zf: RemoteZip, m: ZipMember, *, max_prefix: int = 512 * MiB,
                 max_tail: int = 512 * MiB) -> None:
        self.zf = zf
        self.m = m
        self.size = m.size
        self.max_prefix = max_prefix
        self.max_tail = max_tail
        self._prefix = bytearray()
        self._pd = zlib.decompressobj(-15)
        self._pc = 0  # compressed bytes consumed by the prefix
        self._tail = b""  # bytes of [size - len(_tail), size), exact where they equal _tail_b
        self._tail_b = b""
        self._tc = 0  # compressed bytes fetched for the tail
        self._tail_raw = b""
        if m.method == 8 and m.compressed_size == 0:
            raise WheelError(zf.name, "empty deflate data", m.name)

    # -- access -----------------------------------------------------------------------------------
    def get(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise WheelError(self.zf.name, f"reference past the end of the file ({offset}+{length} > {self.size})",
                             self.m.name)
        if offset + length <= len(self._prefix):
            return bytes(self._prefix[offset:offset + length])
        tstart = self.size - len(self._tail)
        if offset >= tstart:
            a = self._tail[offset - tstart:offset - tstart + length]
            if self._tail_b is self._tail or a == self._tail_b[offset - tstart:offset - tstart + length]:
                return a
        raise NeedBytes([(offset, length)])

    def require(self, ranges: list[tuple[int, int]]) -> None:
        missing = []
        for off, n in ranges:
            try:
                self.get(off, n)
            except NeedBytes:
                missing.append((off, n))
        if missing:
            raise NeedBytes(missing)

    def ensure(self, offset: int, length: int) -> None:
        """Make ``[offset, offset+length)`` available, growing the prefix or the tail."""
        end = offset + length
        try:
            self.get(offset, length)
            return
        except NeedBytes:
            pass
        if self.m.method == 0:  # stored: read it directly as a tail or prefix chunk
            if offset < self.size - offset - length:
                self._grow_prefix(end)
            else:
                self._stored_tail(offset)
            return
        if offset - len(self._prefix) <= (self.size - end):
            self._grow_prefix(end)
        else:
            self._grow_tail(offset, length)

    # -- prefix -------------------------------------------------------------------------------------
    def _grow_prefix(self, end: int) -> None:
        if end > self.max_prefix:
            raise WheelError(self.zf.name, f"needs {end} bytes from the start (limit {self.max_prefix})", self.m.name)
        if self.m.method == 0:
            self._prefix = bytearray(self.zf.read_compressed(self.m, 0, end))
            return
        step = 256 * 1024
        while len(self._prefix) < end:
            if self._pc >= self.m.compressed_size:
                raise WheelError(self.zf.name, "deflate data ends early", self.m.name)
            # Guess how much compressed data the rest needs from the ratio so far.
            if self._prefix:
                ratio = len(self._prefix) / max(1, self._pc)
                want = int((end - len(self._prefix)) / max(ratio, 1.0) * 1.2) + 65536
            else:
                want = step
            n = min(max(want, 65536), self.m.compressed_size - self._pc)
            raw = self.zf.read_compressed(self.m, self._pc, n)
            self._pc += n
            self.zf.tick()
            try:
                out = self._pd.decompress(raw, self.max_prefix + 1 - len(self._prefix))
            except zlib.error as e:
                raise WheelError(self.zf.name, f"corrupt deflate data ({e})", self.m.name) from None
            self._prefix += out
            if len(self._prefix) > self.size:
                raise WheelError(self.zf.name, f"inflates past its declared {self.size} bytes", self.m.name)

    # -- tail ----------------------------------------------------------------------------------------
    def _stored_tail(self, start: int) -> None:
        self._tail = self._tail_b = self.zf.read_compressed(self.m, start, self.size - start)

    def _grow_tail(self, start: int, length: int = 1) -> None:
        want_u = self.size - start
        if want_u > self.max_tail:
            raise WheelError(self.zf.name, f"needs the last {want_u} bytes (limit {self.max_tail})", self.m.name)
        ratio = self.m.size / max(1, self.m.compressed_size)
        guess = int(want_u / max(ratio, 1.0) * 1.3) + 256 * 1024
        n = max(guess, 2 * self._tc)
        while True:
            n = min(n, self.m.compressed_size)
            if n > self._tc:
                extra = self.zf.read_compressed(self.m, self.m.compressed_size - n, n - self._tc)
                self._tail_raw = extra + self._tail_raw
                self._tc = n
            if n == self.m.compressed_size:
                self._tail = self._tail_b = self._inflate_from(start)
                return
            found = decode_tail(self._tail_raw, limit=self.max_tail + 1, check=self.zf.tick)
            if found is not None:
                a, b = found
                if len(a) > self.size:
                    raise WheelError(self.zf.name, "the deflate tail decodes past the declared size", self.m.name)
                if len(a) >= len(self._tail):
                    self._tail, self._tail_b = a, b
                try:
                    self.get(start, length)
                    return
                except NeedBytes:
                    pass
            n = n * 2

    def _inflate_from(self, start: int) -> bytes:
        """The member's bytes from ``start`` to its end, inflating all of it in bounded pieces (only those bytes are
        kept: a member that declares gigabytes never makes this hold more than :attr:`max_tail`), size and CRC
        checked."""
        d = zlib.decompressobj(-15)
        kept: list[bytes] = []
        total = crc = 0
        data = self._tail_raw
        try:
            while True:
                self.zf.tick()
                out = d.decompress(data, 16 * MiB)
                data = d.unconsumed_tail
                if out:
                    crc = zlib.crc32(out, crc)
                    if total + len(out) > start:
                        kept.append(out[max(0, start - total):])
                    total += len(out)
                    if total > self.size:
                        raise WheelError(self.zf.name, f"inflates past its declared {self.size} bytes", self.m.name)
                if not data or d.eof:
                    break
            out = d.flush()
        except zlib.error as e:
            raise WheelError(self.zf.name, f"corrupt deflate data ({e})", self.m.name) from None
        if out:
            crc = zlib.crc32(out, crc)
            if total + len(out) > start:
                kept.append(out[max(0, start - total):])
            total += len(out)
        if total != self.size:
            raise WheelError(self.zf.name, f"inflates to {total} bytes, not {self.size}", self.m.name)
        if crc != self.m.crc:
            raise WheelError(self.zf.name, "CRC mismatch", self.m.name)
        return b"".join(kept)
