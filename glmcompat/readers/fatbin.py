"""A pure-Python reader of CUDA fatbins (the ``.nv_fatbin`` section of a shared object).

A fatbin section is a run of containers; each container holds entries, each either SASS (a cubin
for one ``sm_XY``, kind 2) or PTX (``compute_XY``, kind 1). Layout (little-endian):

* container header, 16 bytes: magic ``0xBA55ED50`` (u32), version (u16), header size (u16),
  size of the entries that follow (u64);
* entry header, at least 64 bytes: kind (u16, +0), header size (u32, +4), payload size (u64, +8),
  ..., arch (u32, +28: 90 for sm_90), flags (u64, +40). Flag ``0x100000`` marks arch-specific
  code (``sm_90a``), ``0x200000`` family code (``sm_100f``). The next entry starts after the
  header and the payload.

By default only headers are read and payloads are skipped, so a section of hundreds of MB can be
streamed with bounded memory (:class:`FatbinStream`). Counts per name match ``cuobjdump --list-elf/--list-ptx``
(which prints ``sm_100f`` as ``sm_100``).

With ``payloads=True`` each entry's payload is read too (one at a time) and kept as two facts:

* its **kernels**: a cubin's entry functions (``.symtab`` symbols of type FUNC with the CUDA entry bit
  ``0x10`` in ``st_other``, which nvcc gives ``__global__`` functions and no ``__device__`` one: the
  names ``cuobjdump -res-usage`` lists per ``arch``), a PTX's ``.entry`` names;
* the **toolkit** that built a cubin: the ELF header's ``e_version`` is the CUDA release times ten
  (124: 12.4) in cubins of ELF ABI 7 (``e_ident[8]``); in ABI 8 (CUDA 12.8 for sm_100 and up, every
  cubin of CUDA 13) ``e_version`` is 1 and the ``.note.nv.tkinfo`` note names the release
  (``Cuda compilation tools, release 12.8, V12.8.93``) -- the field ``cuobjdump -elf`` prints as ``toolkit``.

A payload may be compressed: entry flag ``0x2000`` is an LZ4 block (nvcc's default for PTX up to CUDA
12.9 and ``-Xfatbin -compress-all`` for cubins; decoded here in pure Python), ``0x8000`` a zstd frame (CUDA
13's default for PTX; decoded with the standard library's ``compression.zstd`` (Python 3.14) or the
``zstandard`` module where one is present, else its kernels stay unknown: ``None``). The compressed length is
the u32 at +16 and the inflated length the u64 at +56 of the entry header.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from collections import Counter
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from glmcompat.model.errors import InputError
from glmcompat.model.gpu import sort_codes
from glmcompat.readers.elf import BytesView, ElfError, parse_elf

MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_ELF = 2
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY = 0x200000
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
ENTRY_HEADER_MIN = 64
MAX_PAYLOAD = 1 << 30  # an entry that claims to inflate to more is not read (its kernels stay unknown)
MAX_PAYLOAD_READ = 64 << 20  # an entry whose payload is longer is not read into memory (its kernels stay unknown)
ENTRY_FLOOR = 4096  # entries any fatbin may hold, and...
BYTES_PER_ENTRY = 256  # ...one more per this many bytes actually present (a real entry's payload is kilobytes)
STO_CUDA_ENTRY = 0x10


class FatbinError(InputError):
    """A fatbin that is not well formed."""


@dataclass(frozen=True, slots=True)
class FatbinEntry:
    kind: str  # "sass" or "ptx"
    arch: int
    flags: int
    offset: int  # of the entry header, inside the section
    size: int  # payload bytes
    kernels: tuple[str, ...] | None = None  # entry names, sorted (None: payload not read or not readable)
    toolkit: str | None = None  # the CUDA release that built a cubin ("12.4"); None for PTX or unread
    undecoded: bool = False  # a zstd frame this Python has no decoder for (a later run with one reads it)

    @property
    def name(self) -> str:
        suffix = "a" if self.flags & FLAG_ARCH_SPECIFIC else "f" if self.flags & FLAG_FAMILY else ""
        prefix = "sm" if self.kind == "sass" else "compute"
        return f"{prefix}_{self.arch}{suffix}"


@dataclass(frozen=True, slots=True)
class FatbinCode:
    """What a fatbin section holds: SASS and PTX names (sorted) and how many entries of each; read with
    payloads, also the kernels per code name and the toolkits that built its cubins."""

    sass: list[str]
    ptx: list[str]
    counts: dict[str, int]
    entries: int
    kernels: dict[str, list[str]] | None = None  # code name -> sorted entry names; None: payloads not read
    toolkits: dict[str, int] = field(default_factory=dict)  # CUDA release -> cubins it built
    unreadable: int = 0  # entries whose payload could not be read (a zstd frame without a decoder, a malformed cubin)
    undecoded: int = 0  # of those, zstd frames without a decoder here

    @staticmethod
    def of(entries: Iterable[FatbinEntry], *, payloads: bool = False) -> FatbinCode:
        """Sum up entries; ``payloads``: they were read with their payloads (kernels, toolkits)."""
        entries = list(entries)
        c = Counter(e.name for e in entries)
        sass = sort_codes([n for n in c if n.startswith("sm_")])
        ptx = sort_codes([n for n in c if n.startswith("compute_")])
        kernels: dict[str, list[str]] | None = None
        if payloads:
            by: dict[str, set[str]] = {}
            for e in entries:
                by.setdefault(e.name, set()).update(e.kernels or ())  # an unreadable entry adds none: counted below
            kernels = {k: sorted(v) for k, v in sorted(by.items())}
        toolkits = Counter(e.toolkit for e in entries if e.toolkit)
        unreadable = sum(1 for e in entries if e.kernels is None) if kernels is not None else 0
        return FatbinCode(sass, ptx, dict(sorted(c.items())), sum(c.values()), kernels,
                          dict(sorted(toolkits.items())), unreadable, sum(1 for e in entries if e.undecoded))


# ------------------------------------------------------------------------------------------------
# Payloads: decompression, cubin symbol tables and notes, PTX entries
# ------------------------------------------------------------------------------------------------


def _lz4_length(src: bytes | memoryview, i: int, length: int) -> tuple[int, int]:
    """An LZ4 length whose nibble is 15, with the bytes that extend it from ``i`` (each 255 but the last) added, and
    the offset past them (IndexError past the end)."""
    while True:
        b = src[i]
        i += 1
        length += b
        if b != 255:
            return length, i


def lz4_block(src: bytes | memoryview, size: int, name: str = "<lz4>") -> bytes:
    """Decode one raw LZ4 block (no frame) that inflates to ``size`` bytes."""
    dst = bytearray()
    i, n = 0, len(src)
    try:
        while i < n:
            token = src[i]
            i += 1
            lit = token >> 4
            if lit == 15:
                lit, i = _lz4_length(src, i, lit)
            if lit:
                dst += src[i:i + lit]
                i += lit
            if i >= n:
                break
            off = src[i] | (src[i + 1] << 8)
            i += 2
            ml = token & 15
            if ml == 15:
                ml, i = _lz4_length(src, i, ml)
            ml += 4
            start = len(dst) - off
            if off == 0 or start < 0:
                raise FatbinError(f"{name}: LZ4 match offset {off} points before the start")
            if off >= ml:
                dst += dst[start:start + ml]
            else:
                dst += (dst[start:] * (ml // off + 1))[:ml]
            if len(dst) > size:
                break
    except IndexError:
        raise FatbinError(f"{name}: LZ4 block ends inside a sequence") from None
    if len(dst) != size:
        raise FatbinError(f"{name}: LZ4 block inflates to {len(dst)} bytes, its header says {size}")
    return bytes(dst)


def _zstd(src: bytes, size: int) -> bytes | None:
    """A zstd frame decoded by whatever decoder this Python has; None when it has none."""
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # lazy: Python 3.14's zstd, else zstandard

        out: bytes = zstd.decompress(src)
        return out
    except ImportError:
        pass
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]  # lazy: optional zstandard
    except ImportError:
        return None
    res: bytes = zstandard.ZstdDecompressor().decompress(src, max_output_size=size)
    return res


_RELEASE = re.compile(rb"release (\d+)\.(\d+)")
_PTX_ENTRY = re.compile(rb"^[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*\.entry[ \t]+([^\s(]+)", re.M)


@dataclass(frozen=True, slots=True)
class Cubin:
    """The facts of one cubin (an ELF for one ``sm_XY``) that glmcompat reads."""

    kernels: tuple[str, ...]
    toolkit: str | None  # "12.4"


def read_cubin(data: bytes, name: str = "<cubin>") -> Cubin:
    """The entry functions and the building toolkit of a cubin (ELF64, little-endian)."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise FatbinError(f"{name}: not a 64-bit little-endian ELF cubin")
    abi = data[8]
    e_version, = struct.unpack_from("<I", data, 20)
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, _shstrndx = struct.unpack_from("<HHH", data, 58)
    if shentsize < 64 or shoff + shnum * shentsize > len(data):
        raise FatbinError(f"{name}: section headers ({shnum} at {shoff}) run past the cubin ({len(data)} bytes)")
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

    def body(i: int) -> bytes:
        _n, typ, _f, _a, off, size, *_ = secs[i]
        if typ == 8:  # NOBITS
            return b""
        if off + size > len(data):
            raise FatbinError(f"{name}: section {i} ({size} bytes at {off}) runs past the cubin")
        return data[off:off + size]

    kernels: set[str] = set()
    toolkit: str | None = f"{e_version // 10}.{e_version % 10}" if abi < 8 and e_version >= 10 else None
    for i, (_name, typ, _flags, _addr, _off, _size, link, _info, _align, entsize) in enumerate(secs):
        if typ == 2:  # SYMTAB
            if not 0 <= link < shnum:
                raise FatbinError(f"{name}: .symtab links section {link} of {shnum}")
            tab, strtab = body(i), body(link)
            for off in range(0, len(tab) - 23, entsize or 24):
                st_name, st_info, st_other = struct.unpack_from("<IBB", tab, off)
                if st_info & 0xF == 2 and st_other & STO_CUDA_ENTRY:  # FUNC, CUDA entry
                    end = strtab.find(b"\0", st_name)
                    kernels.add(strtab[st_name:end if end >= 0 else len(strtab)].decode("utf-8", "replace"))
        elif typ == 7 and toolkit is None:  # NOTE: .note.nv.tkinfo names the release
            m = _RELEASE.search(body(i))
            if m:
                toolkit = f"{int(m.group(1))}.{int(m.group(2))}"
    return Cubin(tuple(sorted(kernels)), toolkit)


def ptx_entries(text: bytes) -> tuple[str, ...]:
    """The ``.entry`` names of a PTX module, sorted."""
    return tuple(sorted({m.group(1).decode("utf-8", "replace") for m in _PTX_ENTRY.finditer(text)}))


def read_payload(kind: int, flags: int, header: bytes, payload: bytes, name: str = "<fatbin>"
                 ) -> tuple[tuple[str, ...] | None, str | None]:
    """(kernels, toolkit) of one entry's payload; kernels None when a zstd frame has no decoder here."""
    data: bytes | None = payload
    if flags & (FLAG_LZ4 | FLAG_ZSTD):
        csize = struct.unpack_from("<I", header, 16)[0]
        usize = struct.unpack_from("<Q", header, 56)[0]
        if csize > len(payload) or usize > MAX_PAYLOAD:
            raise FatbinError(f"{name}: compressed entry of {csize} bytes inflating to {usize} does not fit its "
                              f"payload of {len(payload)} bytes")
        if flags & FLAG_LZ4:
            data = lz4_block(payload[:csize], usize, name)
        else:
            data = _zstd(bytes(payload[:csize]), usize)
    if data is None:
        return None, None
    if kind == KIND_ELF:
        c = read_cubin(data, name)
        return c.kernels, c.toolkit
    return ptx_entries(data), None


Walker = Generator[tuple[int, int], bytes, None]


def max_entries(present: int) -> int:
    """The most entries a fatbin read from ``present`` bytes (what the file or the wheel actually holds for it, not
    what a header claims) may have: each real entry carries a payload of kilobytes, so a section that claims more
    is a bomb of empty headers (deflated, a billion of them fit in a few MB)."""
    return ENTRY_FLOOR + present // BYTES_PER_ENTRY


def _walk(size: int, out: list[FatbinEntry], name: str, payloads: bool = False, limit: int | None = None) -> Walker:
    """Walk a section of ``size`` bytes; yields (offset, length) requests at increasing offsets (with
    ``payloads``, each entry's payload too). More than ``limit`` entries is a FatbinError."""
    limit = max_entries(size) if limit is None else limit
    pos = 0
    while pos + 16 <= size:
        hdr = yield (pos, 16)
        magic, _version, hsize, fsize = struct.unpack_from("<IHHQ", hdr)
        if magic == 0 and hdr[:8] == bytes(8):  # alignment padding between containers (aarch64 links pad to 8)
            pos += 16 if hdr == bytes(16) else 8
            continue
        if magic != MAGIC:
            if pos % 8:
                pos += 8 - pos % 8
                continue
            raise FatbinError(f"{name}: bad fatbin magic {magic:#010x} at offset {pos}")
        if hsize < 16 or pos + hsize + fsize > size:
            raise FatbinError(f"{name}: fatbin container at {pos} ({hsize}+{fsize} bytes) runs past the section "
                              f"({size} bytes)")
        e = pos + hsize
        end = e + fsize
        while e + ENTRY_HEADER_MIN <= end:
            eh = yield (e, ENTRY_HEADER_MIN)
            kind, _, ehsize, esize = struct.unpack_from("<HHIQ", eh)
            if kind == 0 and ehsize == 0:  # trailing padding inside the container
                break
            if ehsize < ENTRY_HEADER_MIN or e + ehsize + esize > end:
                raise FatbinError(f"{name}: fatbin entry at {e} ({ehsize}+{esize} bytes) runs past its container "
                                  f"(ends at {end})")
            arch = struct.unpack_from("<I", eh, 28)[0]
            flags = struct.unpack_from("<Q", eh, 40)[0]
            if kind in (KIND_PTX, KIND_ELF):
                if not 10 <= arch <= 999:
                    raise FatbinError(f"{name}: fatbin entry at {e} has an implausible arch {arch}")
                kernels: tuple[str, ...] | None = None
                toolkit: str | None = None
                undecoded = False
                if payloads and 0 < esize <= MAX_PAYLOAD_READ:
                    body = yield (e + ehsize, esize)
                    try:
                        kernels, toolkit = read_payload(kind, flags, eh, body, f"{name}: entry at {e}")
                        undecoded = kernels is None
                    except FatbinError:
                        pass  # a payload this reader cannot parse: its kernels stay unknown (counted as unreadable)
                if len(out) >= limit:
                    raise FatbinError(f"{name}: more than {limit} fatbin entries, the cap for the bytes present ("
                                      f"{ENTRY_FLOOR} and one per {BYTES_PER_ENTRY} bytes the file or wheel holds for "
                                      "it): headers without payloads, not a real fatbin")
                out.append(FatbinEntry("ptx" if kind == KIND_PTX else "sass", arch, flags, e, esize, kernels,
                                       toolkit, undecoded))
            e += ehsize + esize
        pos = end


def parse_fatbin(data: bytes | memoryview, name: str = "<fatbin>", *, payloads: bool = False) -> list[FatbinEntry]:
    """All entries of a fatbin section held in memory (with ``payloads``: their kernels and toolkits)."""
    out: list[FatbinEntry] = []
    w = _walk(len(data), out, name, payloads)
    try:
        off, n = next(w)
        while True:
            off, n = w.send(bytes(data[off:off + n]))
    except StopIteration:
        pass
    return out


class FatbinStream:
    """Feed a fatbin section in order, chunk by chunk; keeps only headers and, with ``payloads``, the
    facts of each payload (one payload in memory at a time)."""

    def __init__(self, size: int, name: str = "<fatbin>", *, payloads: bool = False, present: int | None = None) -> None:
        """``present``: the bytes the section's entries actually come from (a wheel member's compressed size), which
        bounds how many entries it may hold (:func:`max_entries`; default: ``size``)."""
        self.size = size
        self.name = name
        self.entries: list[FatbinEntry] = []
        self._w = _walk(size, self.entries, name, payloads, max_entries(size if present is None else min(size, present)))
        self._pos = 0  # offset of the next byte fed
        self._buf = bytearray()
        self._req: tuple[int, int] | None
        try:
            self._req = next(self._w)
        except StopIteration:
            self._req = None

    def feed(self, chunk: bytes) -> None:
        start = self._pos
        end = start + len(chunk)
        self._pos = end
        while self._req is not None:
            off, n = self._req
            want_from = off + len(self._buf)
            if want_from >= end:
                return
            if want_from < start:  # pragma: no cover - the walker only moves forward
                raise FatbinError(f"{self.name}: fatbin stream went backwards")
            self._buf += chunk[want_from - start:min(len(chunk), off + n - start)]
            if len(self._buf) < n:
                return
            data = bytes(self._buf)
            self._buf = bytearray()
            try:
                self._req = self._w.send(data)
            except StopIteration:
                self._req = None

    def finish(self) -> list[FatbinEntry]:
        if self._req is not None:
            raise FatbinError(f"{self.name}: fatbin section ends early (at {self._pos} of {self.size} bytes)")
        return self.entries


def gpu_code_of_section(data: bytes | memoryview, name: str = "<fatbin>", *, payloads: bool = False) -> FatbinCode:
    return FatbinCode.of(parse_fatbin(data, name, payloads=payloads), payloads=payloads)


def gpu_code_of_elf_detail(path_or_bytes: str | os.PathLike[str] | bytes, *, payloads: bool = False) -> FatbinCode:
    """The GPU code of a local ELF file's ``.nv_fatbin`` section (empty when it has none); with
    ``payloads``, also its kernels per code name and the toolkits of its cubins."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        info = parse_elf(BytesView(data, "<bytes>"), "<bytes>", dynamic="skip")
        sec = info.section(".nv_fatbin")
        if sec is None or sec.type == 8:
            return FatbinCode([], [], {}, 0)
        return gpu_code_of_section(memoryview(data)[sec.offset:sec.offset + sec.size], "<bytes>: .nv_fatbin",
                                   payloads=payloads)
    path = Path(path_or_bytes)

    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise ElfError(f"{path}: not an ELF file (empty)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                info = parse_elf(BytesView(mm, str(path)), str(path), dynamic="skip")
                sec = info.section(".nv_fatbin")
                if sec is None or sec.type == 8:
                    return FatbinCode([], [], {}, 0)
                view = memoryview(mm)[sec.offset:sec.offset + sec.size]
                try:
                    return gpu_code_of_section(view, f"{path}: .nv_fatbin", payloads=payloads)
                finally:
                    view.release()
    except FileNotFoundError:
        raise ElfError(f"{path}: no such file") from None


def gpu_code_of_elf(path_or_bytes: str | os.PathLike[str] | bytes) -> tuple[list[str], list[str]]:
    """(sorted SASS names like ``sm_90a``, sorted PTX names like ``compute_90``) of a local .so."""
    code = gpu_code_of_elf_detail(path_or_bytes)
    return code.sass, code.ptx
