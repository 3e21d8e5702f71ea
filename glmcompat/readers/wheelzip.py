"""Read single members of a wheel (a zip) through any random-access byte source (:class:`RangeSource`:
bytes in memory, or :class:`glmcompat.edges.ranges.HttpRangeReader` over HTTP range requests).

* :class:`RemoteZip` parses the central directory (zip64 included) with sanity limits (member count,
  directory size, declared sizes: a zip bomb is refused before anything is inflated), reads a member
  whole (size and CRC checked) or streams it.
* :class:`SparseMember` knows a member's uncompressed bytes in two regions, a prefix and a tail,
  without inflating the middle: the tail is decoded from a deflate block boundary found by trial,
  with two different made-up windows; the bytes on which both decodings agree are exact.

Inflation is bounded twice: no member inflates past its declared size, and one probe (one :class:`RemoteZip`)
inflates at most :attr:`RemoteZip.inflate_cap` bytes in all (:data:`INFLATE_PER_BYTE` times the archive's size, at
least :data:`INFLATE_FLOOR`: real wheels inflate to under ten times their size). Every stream is read in windows of
:data:`WINDOW` bytes, and the bytes the readers keep of all members at once are bounded by :data:`HOLD_CAP`, so a
sparse member of gigabytes or a decompression bomb is an error naming the member and the cap, in bounded memory.

Every failure is a :class:`glmcompat.model.errors.WheelError`, one line naming the wheel and the member.
:class:`NeedBytes` is not a failure: a reader over a partial byte source raises it to ask for the spans it lacks.
"""

from __future__ import annotations

import functools
import re
import struct
import threading
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from glmcompat.model.errors import EnvironmentFailure, WheelError

if TYPE_CHECKING:
    pass

MiB = 1 << 20
MAX_MEMBERS = 200_000
MAX_CD_SIZE = 64 * MiB
MAX_MEMBER_SIZE = 16 << 30  # declared uncompressed size of one member
MAX_RATIO = 1100  # deflate cannot exceed ~1032:1
MAX_READ = 64 * MiB  # what read() inflates into memory
WINDOW = 16 * MiB  # the most one decompress call returns
CONVERGE_WINDOW = 256 * 1024  # the most one decompress call returns while decoding a deflate tail (decode_tail)
INFLATE_FLOOR = 1 << 30  # bytes one probe may inflate, at least...
INFLATE_PER_BYTE = 16  # ...and this many times the archive's size (real wheels: under 10)
HOLD_CAP = 192 * MiB  # bytes of members' prefixes and tails the readers of one archive keep at once
# The byte budget of one member's reads, per member (so the answer does not depend on the order members are read in):
# for the parts a reader needs (the dynamic symbol tables, the read-only data NumPy's module name is in),
# BUDGET_SHARE of the archive's size (issue 39: `abi` reads no more than 5% of a wheel cold), at least REQUIRED_FLOOR:
# a member that needs more is left unread and named (tensorflow 2.19.0's libtensorflow_cc.so.2: about 40 MiB of its
# symbol tables); for the parts it can do without (a huge library's section-name table or .dynamic, hundreds of MiB
# into a deflated member), OPTIONAL_SHARE, at least OPTIONAL_FLOOR: it then names its sections by type and reads its
# DT_NEEDED from .dynstr.
BUDGET_SHARE = 0.05
OPTIONAL_SHARE = 0.01
OPTIONAL_FLOOR = 1 * MiB
REQUIRED_FLOOR = 16 * MiB
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


def _size(n: int) -> str:
    """``n`` bytes as a message says it (``3.0 GiB``, ``512 MiB``, ``800 bytes``)."""
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB"
    if n >= MiB:
        return f"{n / MiB:.0f} MiB"
    return f"{n} bytes"


def _find_eocd(tail: bytes) -> int:
    i = tail.rfind(b"PK\x05\x06")
    while i >= 0:
        if i + 22 <= len(tail):
            comment_len = struct.unpack_from("<H", tail, i + 20)[0]
            if i + 22 + comment_len <= len(tail):
                return i
        i = tail.rfind(b"PK\x05\x06", 0, i)
    return -1


_CD_RECORD = struct.Struct("<4sHHHHHHIIIHHHHHII")  # a central-directory record's fixed 46 bytes


def parse_central_directory(cd: bytes, count: int, wheel: str, archive_size: int) -> list[ZipMember]:
    """Parse ``count`` central-directory records (pure); sizes and offsets checked against the archive."""
    return [ZipMember(*r) for r in central_records(cd, count, wheel, archive_size)]


Record = tuple[str, int, int, int, int, int, int]  # a member's fields, in ZipMember's order


def central_records(cd: bytes, count: int, wheel: str, archive_size: int) -> list[Record]:
    """:func:`parse_central_directory`'s records, each checked alike, as plain tuples of ZipMember's fields: a
    torch wheel's 12,000 members are read in 20 ms where building a ZipMember of each took 45 ms, and a reader of its
    METADATA alone (:meth:`RemoteZip.find_metadata`) needs one (issue 39: a cold lock reads torch's directory)."""
    records: list[Record] = []
    append, unpack, end = records.append, _CD_RECORD.unpack_from, len(cd)
    limit_ratio, limit_size, sig = MAX_RATIO, MAX_MEMBER_SIZE, b"PK\x01\x02"
    pos = 0
    for _ in range(count):
        if pos + 46 > end:
            raise WheelError(wheel, f"corrupt central directory (record at +{pos})")
        (magic, _, _, flags, method, _, _, crc, csize, usize, nlen, xlen, clen, _, _, _, hoff) = unpack(cd, pos)
        if magic != sig:
            raise WheelError(wheel, f"corrupt central directory (record at +{pos})")
        start = pos + 46
        pos = start + nlen + xlen + clen
        if pos > end:
            raise WheelError(wheel, "corrupt central directory (record runs past its end)")
        name_b = cd[start:start + nlen]
        if name_b.isascii():
            name = name_b.decode("ascii")  # what utf-8 and cp437 both decode it to
        else:
            name = name_b.decode("utf-8" if flags & 0x800 else "cp437", "replace")
        if usize == 0xFFFFFFFF or csize == 0xFFFFFFFF or hoff == 0xFFFFFFFF:
            usize, csize, hoff = _zip64_extra(cd[start + nlen:start + nlen + xlen], usize, csize, hoff, wheel, name)
        if method != 8 and method != 0:
            raise WheelError(wheel, f"unsupported compression method {method}", name)
        if hoff + 30 + csize > archive_size:
            raise WheelError(wheel, f"data runs past the end of the archive (offset {hoff}, {csize} bytes)", name)
        if usize > limit_size or (method == 8 and usize > csize * limit_ratio + MiB):
            raise WheelError(
                wheel, f"declared size {usize} bytes from {csize} compressed is beyond sane limits (zip bomb?)", name)
        if method == 0 and usize != csize:
            raise WheelError(wheel, f"stored member declares {csize} compressed vs {usize} bytes", name)
        append((name, method, flags, crc, csize, usize, hoff))
    return records


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
        self._deadline: Callable[[], None] = getattr(source, "check", None) or _no_deadline
        self.tick: Callable[[], None] = self._tick
        self._records = self._read_directory()  # every record checked; a ZipMember made of one when it is asked for
        self._made: dict[int, ZipMember] = {}
        self._members: list[ZipMember] | None = None
        self._by_name: dict[str, int] | None = None  # a name -> its (last) record
        self._data_offsets: dict[str, int] = {}
        self.inflate_cap = max(INFLATE_FLOOR, INFLATE_PER_BYTE * source.size)
        self.inflated = 0  # bytes inflated so far, by every reader of this archive
        self.held = 0  # bytes of prefixes and tails kept now (SparseMember)
        # {member: (byte, bit, low)}: the earliest deflate block boundary in its compressed data a tail was decoded
        # from, and where the search that found it began (no candidate from low to byte decodes); {member: low}: no
        # candidate from low to its end decodes (SparseMember)
        self.boundaries: dict[str, tuple[int, int, int]] = {}
        self.no_boundary: dict[str, int] = {}
        self._budget = threading.Lock()

    def _tick(self) -> None:
        """The source's deadline, checked as the readers inflate and parse: a deadline passed here is named for the
        local work it covered too, not only the transfer."""
        try:
            self._deadline()
        except EnvironmentFailure:
            seconds = getattr(getattr(self.source, "deadline", None), "seconds", None)
            if not isinstance(seconds, (int, float)):
                raise
            raise EnvironmentFailure(f"{self.name}: not read within {seconds:g} s: fetching it and inflating and "
                                     f"parsing {_size(self.inflated)} of it here took longer (GLMCOMPAT_HTTP_DEADLINE "
                                     "sets this deadline)") from None

    def spend(self, n: int, m: ZipMember) -> None:
        """Count ``n`` bytes inflated from ``m`` against the probe's :attr:`inflate_cap`."""
        with self._budget:
            self.inflated += n
            over = self.inflated > self.inflate_cap
        if over:
            raise WheelError(self.name, f"inflating it passes the {_size(self.inflate_cap)} one probe may inflate "
                             f"({INFLATE_PER_BYTE} times the wheel's {_size(self.source.size)}, at least "
                             f"{_size(INFLATE_FLOOR)}; it declares {_size(m.size)} from {_size(m.compressed_size)}): a "
                             "decompression bomb or a sparse file, not something glmcompat reads", m.name)

    def budget(self, *, required: bool) -> int | None:
        """Bytes one member's reads may fetch (:data:`BUDGET_SHARE` of the archive, at least :data:`REQUIRED_FLOOR`,
        for the parts a reader needs; :data:`OPTIONAL_SHARE`, at least :data:`OPTIONAL_FLOOR`, for those it can do
        without); None for a source that fetches nothing (in memory, a local file)."""
        if not isinstance(getattr(self.source, "bytes_fetched", None), int):
            return None
        if required:
            return max(int(BUDGET_SHARE * self.source.size), REQUIRED_FLOOR)
        return max(int(OPTIONAL_SHARE * self.source.size), OPTIONAL_FLOOR)

    def hold(self, delta: int, m: ZipMember) -> None:
        """Count ``delta`` more (or, negative, fewer) bytes of ``m`` kept in memory against :data:`HOLD_CAP`."""
        with self._budget:
            self.held += delta
            over = delta > 0 and self.held > HOLD_CAP
            if over:
                self.held -= delta
        if over:
            raise WheelError(self.name, f"reading its tables needs more than the {_size(HOLD_CAP)} glmcompat keeps of "
                             f"a wheel's members at once (it declares {_size(m.size)})", m.name)

    @property
    def members(self) -> list[ZipMember]:
        """Every member, in the directory's order."""
        if self._members is None:
            self._members = [self._member_at(i) for i in range(len(self._records))]
        return self._members

    def members_named(self, keep: Callable[[str], bool]) -> list[ZipMember]:
        """The members whose name ``keep`` accepts, in the directory's order: a ZipMember made of those alone (a
        reader of a wheel's shared objects among its thousands of Python files needs a few)."""
        return [self._member_at(i) for i, r in enumerate(self._records) if keep(r[0])]

    def _member_at(self, i: int) -> ZipMember:
        m = self._made.get(i)
        if m is None:
            m = self._made.setdefault(i, ZipMember(*self._records[i]))
        return m

    def _read_directory(self) -> list[Record]:
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
        return central_records(cd, count, self.name, size)

    # -- lookup -------------------------------------------------------------------------------------
    def member(self, name: str) -> ZipMember:
        if self._by_name is None:
            self._by_name = {r[0]: i for i, r in enumerate(self._records)}
        try:
            return self._member_at(self._by_name[name])
        except KeyError:
            raise WheelError(self.name, "no such member", name) from None

    def find_metadata(self) -> ZipMember:
        cands = sorted(name for name, *_ in self._records
                       if name.endswith(".dist-info/METADATA") and name.count("/") == 1)
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
                    out = d.decompress(piece, min(WINDOW, m.size + 1 - total))
                    while True:
                        self.tick()
                        self.spend(len(out), m)
                        total += len(out)
                        if total > m.size:
                            raise WheelError(self.name, f"inflates past its declared {m.size} bytes", m.name)
                        if out:
                            crc = zlib.crc32(out, crc)
                            yield out
                        if not d.unconsumed_tail:
                            break
                        out = d.decompress(d.unconsumed_tail, min(WINDOW, m.size + 1 - total))
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
            self.spend(len(data), m)
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


class OverBudget(WheelError):
    """A member whose parts a reader needs lie beyond the bytes it may fetch (its limits, or the wheel's byte budget
    :data:`BUDGET_SHARE`): a fact about the budget, not a bad wheel."""


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


def _candidates_slow(region: bytes) -> Iterator[tuple[int, int]]:
    """:func:`_candidates`, bit by bit (the reference it is tested against)."""
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


@functools.cache
def _tables() -> tuple[re.Pattern[bytes], list[int], re.Pattern[bytes]]:
    """Built on first use (not at import: the start-up path of every command imports this module).

    * A dynamic block's first two bytes, read from its first bit: BFINAL=0 and BTYPE=2 (low 3 bits 100), HLIT <= 29,
      then HDIST <= 29 (the low 5 bits of the second byte);
    * Kraft's sum of four 3-bit code lengths (in units of 2**-7; a length 0 is no code): a dynamic block's code-length
      code must be complete (sum 128), or zlib refuses it ("invalid code lengths set"; inflate_table, CODES);
    * a stored block's LEN and NLEN: ``ff ff`` where a region and the region two bytes on are xored."""
    first = b"".join(re.escape(bytes([v])) for v in range(256) if v & 7 == 4 and v >> 3 <= 29)
    second = b"".join(re.escape(bytes([v])) for v in range(256) if v & 31 <= 29)
    share = [0, 64, 32, 16, 8, 4, 2, 1]
    return (re.compile(b"(?=[" + first + b"][" + second + b"])", re.S),
            [share[x & 7] + share[x >> 3 & 7] + share[x >> 6 & 7] + share[x >> 9] for x in range(4096)],
            re.compile(b"(?=\xff\xff)"))


_CHUNK = 32768  # bytes of a region whose candidates are found at once (the search stops at the first that decodes)


_WORD = struct.Struct("<Q").unpack_from
_LENGTHS = [(1 << 3 * (n + 4)) - 1 for n in range(16)]  # the bits of HCLEN + 4 code lengths


def _complete(c: bytes, ks: list[int], size: int) -> list[int]:
    """Those of the dynamic block headers at bytes ``ks`` of ``c`` (a piece of a region of ``size`` bytes from its
    start, shifted to their first bit) whose code-length code is complete: HCLEN + 4 code lengths of 3 bits from bit 17,
    their Kraft sum 128 (one whose lengths run past the region is kept, not judged here)."""
    t, word, lengths = _tables()[1], _WORD, _LENGTHS
    end = min(len(c), size) - 10
    # q: the 64 bits from byte k+2 (its bit 0 is HCLEN's high bit; the lengths follow)
    return [k for k in ks if k > end or t[(x := ((q := word(c, k + 2)[0]) >> 1) & lengths[(c[k + 1] >> 5) | (q & 1) << 3])
                                          & 4095] + t[(x >> 12) & 4095] + t[(x >> 24) & 4095] + t[(x >> 36) & 4095]
            + t[x >> 48] == 128]


def _candidates(region: bytes, *, complete: bool = True, stop: int | None = None) -> Iterator[tuple[int, int]]:
    """Bit positions (byte, bit) in ``region`` where a stored or dynamic-Huffman block may start, in order: the
    positions of :func:`_candidates_slow`, found a chunk at a time by regular expressions over the chunk's eight
    shifted copies; with ``complete``, less the dynamic ones whose code-length code is not complete (which zlib
    refuses); ``stop``: none at or past this byte."""
    n = len(region) - 8 if stop is None else min(len(region) - 8, stop)
    dynamic, _, stored = _tables()
    for lo in range(0, max(0, n), _CHUNK):
        hi = min(n, lo + _CHUNK)
        piece = region[lo:hi + 16]  # the chunk, and the bytes its last candidates' headers read
        found: list[tuple[int, int]] = []
        for s in range(8):
            c = _shift(piece, s)
            ks = [m.start() for m in dynamic.finditer(c, 0, hi - lo + 1)]
            if ks and ks[-1] >= hi - lo:
                ks.pop()
            if complete:
                ks = _complete(c, ks, len(region) - lo)
            found.extend((lo + k, s) for k in ks)
        whole = int.from_bytes(piece, "little")
        pairs = (whole ^ (whole >> 16)).to_bytes(len(piece), "little")  # pairs[b:b+2] == ff ff: LEN and ~LEN at b
        for m in stored.finditer(pairs, 1, hi - lo + 3):
            b = m.start()
            if lo + b + 3 >= len(region) or b + 3 >= len(piece):
                continue
            for k, ss in ((b - 1, range(6)), (b - 2, range(6, 8))):
                if 0 <= k < hi - lo:
                    w = piece[k] | piece[k + 1] << 8
                    found.extend((lo + k, s) for s in ss if (w >> s) & 6 == 0)
        found.sort()
        yield from found


def decode_tail(comp: bytes, *, quick: int = 2048, search: int = 4 * MiB, limit: int = 1 << 30,
                keep: int | None = None, check: Callable[[], None] | None = None,
                spend: Callable[[int], None] | None = None) -> tuple[bytes, bytes] | None:
    """Decode the end of a raw deflate stream from some block boundary inside ``comp``.

    ``comp`` is the last bytes of the stream. Returns ``(a, b)``: the stream's last ``len(a)``
    inflated bytes decoded with two different made-up windows; where ``a`` and ``b`` agree the bytes
    are exact (bytes copied, directly or not, from before ``comp`` differ). None when no candidate
    boundary decodes exactly to the end of the stream in at most ``limit`` bytes (the member's declared size).
    Each candidate is inflated in windows of :data:`WINDOW` bytes, of which only the last ``keep`` are kept (all,
    when None); ``spend`` is told how many bytes each window inflated (the probe's cap), and ``check`` is called
    before each window (a deadline: hostile data can offer many candidates).
    """
    found = _boundary(comp, quick=quick, search=search, limit=limit, keep=keep, check=check, spend=spend)
    return None if found is None else found[2]


def _boundary(comp: bytes, *, quick: int = 2048, search: int = 4 * MiB, limit: int = 1 << 30,
              keep: int | None = None, check: Callable[[], None] | None = None,
              spend: Callable[[int], None] | None = None, stop: int | None = None
              ) -> tuple[int, int, tuple[bytes, bytes]] | None:
    """:func:`decode_tail`, with the boundary it decoded from: ``(byte, bit, (a, b))``; ``stop``: no candidate at or
    past this byte of ``comp`` (those a search before tried)."""
    region = comp[: min(len(comp), search) + 16]
    for k, s in _candidates(region, stop=stop):
        if check is not None:
            check()
        probe = _shift(region[k:k + quick + 1], s)[:quick]
        d = zlib.decompressobj(-15, zdict=_WINDOW_A)
        try:
            d.decompress(probe, 1 << 16)
        except zlib.error:
            continue
        found = _decode_both(_shift(comp[k:], s), limit, keep, check, spend)
        if found is not None:
            return k, s, found
    return None


def _decode_both(rest: bytes, limit: int, keep: int | None, check: Callable[[], None] | None,
                 spend: Callable[[int], None] | None) -> tuple[bytes, bytes] | None:
    """``rest`` inflated with both made-up windows: the last ``keep`` bytes of each, or None when ``rest`` is no
    deflate stream ending there within ``limit`` bytes. Whether it is one does not depend on the window (a reference
    reaches at most 32 KiB back, into a window of 32 KiB, so only the values copied differ, never the lengths or a
    code's validity): it is decided by the first window alone, and most candidates a search tries are not (issue 39:
    they were inflated twice to find that out). Only a stream that is one is inflated with the second window, and only
    until the two agree over 32 KiB (every later byte is the same in both): the result is the one a lockstep decoding
    of both gives."""
    da = zlib.decompressobj(-15, zdict=_WINDOW_A)
    a = bytearray()
    total = 0
    dropped = 0  # bytes of ``a`` dropped from its front (``keep``)
    data = rest
    try:
        while True:
            if check is not None:
                check()
            oa = da.decompress(data, CONVERGE_WINDOW)
            if spend is not None:
                spend(len(oa))
            total += len(oa)
            if total > limit:
                return None
            a += oa
            if keep is not None and len(a) > keep:
                dropped += len(a) - keep
                del a[:len(a) - keep]
            data = da.unconsumed_tail
            if da.eof or not data:
                break
    except zlib.error:
        return None
    if not da.eof or da.unused_data.strip(b"\x00"):
        return None
    # the second window, until the last 32 KiB it inflated equal the first's (compared where ``a`` still holds them)
    db = zlib.decompressobj(-15, zdict=_WINDOW_B)
    b = bytearray()
    done = 0  # bytes the second window inflated
    data = rest
    try:
        while done < total:
            if check is not None:
                check()
            ob = db.decompress(data, CONVERGE_WINDOW)
            data = db.unconsumed_tail
            if spend is not None:
                spend(len(ob))
            if not ob:
                return None  # pragma: no cover - the lengths do not depend on the window
            if done + len(ob) > dropped:
                b += ob[max(0, dropped - done):]
            done += len(ob)
            if done >= 32768 and done - 32768 >= dropped and b[-32768:] == a[done - 32768 - dropped:done - dropped]:
                break
    except zlib.error:  # pragma: no cover - validity does not depend on the window
        return None
    if done > total:  # pragma: no cover - the lengths do not depend on the window
        return None
    b += a[done - dropped:]
    return bytes(a), bytes(b)


class SparseMember:
    """A member's uncompressed bytes known in a prefix ``[0, p)`` and a tail ``[size - t, size)``.

    :meth:`get` returns bytes or raises :class:`NeedBytes`; :meth:`ensure` grows the prefix or the
    tail to cover a range, whichever is cheaper; ``max_prefix``/``max_tail`` bound the memory.
    """

    def __init__(self, zf: RemoteZip, m: ZipMember, *, max_prefix: int = 128 * MiB,
                 max_tail: int = 64 * MiB) -> None:
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
        self._floor = m.compressed_size  # no block boundary at or past this byte of its compressed data left to try
        self._held = 0  # bytes counted against the archive's HOLD_CAP (RemoteZip.hold)
        if m.method == 8 and m.compressed_size == 0:
            raise WheelError(zf.name, "empty deflate data", m.name)

    def _account(self) -> None:
        """Count what this member keeps now against the archive's :data:`HOLD_CAP`."""
        now = len(self._prefix) + len(self._tail) + len(self._tail_raw)
        if self._tail_b is not self._tail:
            now += len(self._tail_b)
        self.zf.hold(now - self._held, self.m)
        self._held = now

    def close(self) -> None:
        """Drop what this member keeps (and its count against :data:`HOLD_CAP`)."""
        self.zf.hold(-self._held, self.m)
        self._held = 0
        self._prefix = bytearray()
        self._tail = self._tail_b = self._tail_raw = b""

    def _spend(self, n: int) -> None:
        self.zf.spend(n, self.m)

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

    def cost(self, offset: int, length: int) -> int | None:
        """The compressed bytes :meth:`ensure` would still fetch to make ``[offset, offset+length)`` available (an
        estimate from the member's mean ratio, as :meth:`_grow_tail` guesses); None where it is past the limits."""
        try:
            self.get(offset, length)
            return 0
        except NeedBytes:
            pass
        end = offset + length
        if self.m.method == 0:
            if offset < self.size - end:
                return None if end > self.max_prefix else end - len(self._prefix)
            return None if self.size - offset > self.max_tail else self.size - offset
        ratio = max(self.m.size / max(1, self.m.compressed_size), 1.0)
        if offset - len(self._prefix) <= self.size - end:
            return None if end > self.max_prefix else max(0, int((end - len(self._prefix)) / ratio) - (
                self._pc - int(len(self._prefix) / ratio)))
        want = self.size - offset
        return None if want > self.max_tail else max(0, int(want / ratio * 1.3) + 256 * 1024 - self._tc)

    def affordable(self, ranges: list[tuple[int, int]]) -> bool:
        """Whether ``ranges``, parts a reader can do without, can be made available within this member's byte budget
        (:meth:`RemoteZip.budget`) and limits: a reader skips what is not (:func:`glmcompat.readers.elf.parse_elf`)."""
        return self.within(ranges, required=False) is None

    def within(self, ranges: list[tuple[int, int]], *, required: bool = True) -> str | None:
        """None where ``ranges`` can be made available within this member's byte budget and limits, else why not,
        for a message. Counted per member (what this member fetched, against :meth:`RemoteZip.budget`), so the answer
        does not depend on the order in which the members of a wheel are read."""
        costs = [self.cost(off, n) for off, n in ranges]
        if any(c is None for c in costs):
            return f"they lie beyond the {_size(self.max_prefix)} read from its start or {_size(self.max_tail)} from its end"
        budget = self.zf.budget(required=required)
        need = self.spent + sum(c for c in costs if c is not None)
        if budget is not None and need > budget:
            frac = BUDGET_SHARE if required else OPTIONAL_SHARE
            of = f"{frac:.0%} of {_size(self.zf.source.size)}" if budget == int(frac * self.zf.source.size) else "its floor"
            return f"reading them fetches about {_size(need)} of the wheel, more than the {_size(budget)} ({of}) glmcompat reads of one member"
        return None

    @property
    def spent(self) -> int:
        """Bytes of the wheel this member has fetched so far."""
        return len(self._prefix) + len(self._tail) if self.m.method == 0 else self._pc + self._tc

    @property
    def prefix_len(self) -> int:
        """Bytes of the member known from its start."""
        return len(self._prefix)

    def ensure(self, offset: int, length: int, *, fetch_to: int | None = None) -> None:
        """Make ``[offset, offset+length)`` available, growing the prefix or the tail. ``fetch_to``: where the prefix
        grows, fetch the compressed bytes for that much of it at once (a reader that inflates a range piece by piece,
        and may stop early, makes one request, not one a piece)."""
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
            self._grow_prefix(end, max(end, min(fetch_to or end, self.size)))
        else:
            self._grow_tail(offset, length)

    # -- prefix -------------------------------------------------------------------------------------
    def _grow_prefix(self, end: int, fetch_to: int | None = None) -> None:
        if end > self.max_prefix:
            raise OverBudget(self.zf.name, f"needs {end} bytes from the start (limit {self.max_prefix})", self.m.name)
        if self.m.method == 0:
            self._prefix = bytearray(self.zf.read_compressed(self.m, 0, end))
            return
        step = 256 * 1024
        while len(self._prefix) < end:
            raw = self._pd.unconsumed_tail  # input a window left over: inflated before anything is fetched
            if not raw:
                if self._pc >= self.m.compressed_size or self._pd.eof:
                    raise WheelError(self.zf.name, "deflate data ends early", self.m.name)
                # Guess how much compressed data the rest needs from the ratio so far.
                if self._prefix:
                    ratio = len(self._prefix) / max(1, self._pc)
                    want = int(((fetch_to or end) - len(self._prefix)) / max(ratio, 1.0) * 1.2) + 65536
                else:
                    want = step
                n = min(max(want, 65536), self.m.compressed_size - self._pc)
                raw = self.zf.read_compressed(self.m, self._pc, n)
                self._pc += n
            self.zf.tick()
            try:  # in windows, and not much past what was asked for: a bomb's prefix is never inflated whole
                out = self._pd.decompress(raw, min(WINDOW, end - len(self._prefix) + MiB))
            except zlib.error as e:
                raise WheelError(self.zf.name, f"corrupt deflate data ({e})", self.m.name) from None
            self._spend(len(out))
            self._prefix += out
            self._account()
            if len(self._prefix) > self.size:
                raise WheelError(self.zf.name, f"inflates past its declared {self.size} bytes", self.m.name)

    # -- tail ----------------------------------------------------------------------------------------
    def _stored_tail(self, start: int) -> None:
        if self.size - start > self.max_tail:
            raise OverBudget(self.zf.name, f"needs the last {self.size - start} bytes (limit {self.max_tail})",
                             self.m.name)
        self._tail = self._tail_b = self.zf.read_compressed(self.m, start, self.size - start)
        self._account()

    def _grow_tail(self, start: int, length: int = 1) -> None:
        want_u = self.size - start
        if want_u > self.max_tail:
            raise OverBudget(self.zf.name, f"needs the last {want_u} bytes (limit {self.max_tail})", self.m.name)
        ratio = self.m.size / max(1, self.m.compressed_size)
        guess = int(want_u / max(ratio, 1.0) * 1.3) + 256 * 1024
        n = max(guess, 2 * self._tc)
        keep = min(self.max_tail, max(2 * want_u, want_u + 8 * MiB))  # the bytes asked for, and room for more
        while True:
            n = min(n, self.m.compressed_size)
            if n > self._tc:
                extra = self.zf.read_compressed(self.m, self.m.compressed_size - n, n - self._tc)
                self._tail_raw = extra + self._tail_raw
                self._tc = n
                self._account()
            if n == self.m.compressed_size:
                self._tail = self._tail_b = self._inflate_from(start)
                self._account()
                return
            found = self._decode_tail(keep, start, length)
            if found is not None:
                a, b = found
                if len(a) >= len(self._tail):
                    self._tail, self._tail_b = a, b
                    self._account()
                try:
                    self.get(start, length)
                    return
                except NeedBytes:
                    pass
            n = n * 2

    def _decode_tail(self, keep: int, start: int, length: int) -> tuple[bytes, bytes] | None:
        """The fetched tail decoded from its earliest block boundary, or None; from the boundary another reader of the
        member decoded from (:attr:`RemoteZip.boundaries`) where that gives ``[start, start+length)`` exactly. Each
        candidate is tried once: by this reader, the bytes before the earliest boundary it decoded from or searched
        down to (``_floor``); by this member's other readers, those a search of theirs tried (``.no_boundary``)."""
        base = self.m.compressed_size - self._tc  # where the fetched tail starts in the member's compressed bytes
        stop = self._floor - base
        none_from = self.zf.no_boundary.get(self.m.name)
        if none_from is not None:  # no candidate from there to the member's end decodes
            stop = min(stop, max(none_from, base) - base)
        known = self.zf.boundaries.get(self.m.name)
        from_known = None
        if known is not None and base <= known[0] < base + stop:
            from_known = _decode_both(_shift(self._tail_raw[known[0] - base:], known[1]), self.size, keep,
                                      self.zf.tick, self._spend)
            if from_known is not None:
                at = len(from_known[0]) - (self.size - start)  # where ``start`` is in what was decoded
                a, b = from_known[0][at:at + length], from_known[1][at:at + length]
                if at >= 0 and len(a) == length and a == b:  # what is asked for, exactly: no search
                    self._floor = known[0]
                    return from_known
                stop = max(known[2], base) - base  # from known[2] to known[0] every candidate was tried: none decodes
        hit = _boundary(self._tail_raw, limit=self.size, keep=keep, check=self.zf.tick, spend=self._spend,
                        stop=stop) if stop > 0 else None
        if hit is None and from_known is not None and known is not None:
            hit = known[0] - base, known[1], from_known
        with self.zf._budget:
            if hit is None:
                self._floor = base
                if none_from is None or base < none_from:
                    self.zf.no_boundary[self.m.name] = base
                return None
            k, bit, found = hit
            self._floor = base + k
            had = self.zf.boundaries.get(self.m.name)
            if had is None or (base + k, base) < (had[0], had[2]):
                self.zf.boundaries[self.m.name] = (base + k, bit, base)
        return found

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
                out = d.decompress(data, WINDOW)
                data = d.unconsumed_tail
                self._spend(len(out))
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
