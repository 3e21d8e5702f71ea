"""A pure-Python reader of CUDA fatbins (the ``.nv_fatbin`` section of a shared object).

A fatbin section is a run of containers; each container holds entries, each either SASS (a cubin
for one ``sm_XY``, kind 2) or PTX (``compute_XY``, kind 1). Layout (little-endian):

* container header, 16 bytes: magic ``0xBA55ED50`` (u32), version (u16), header size (u16),
  size of the entries that follow (u64);
* entry header, at least 64 bytes: kind (u16, +0), header size (u32, +4), payload size (u64, +8),
  ..., arch (u32, +28: 90 for sm_90), flags (u64, +40). Flag ``0x100000`` marks arch-specific
  code (``sm_90a``), ``0x200000`` family code (``sm_100f``). The next entry starts after the
  header and the payload.

Only headers are read; payloads are skipped, so a section of hundreds of MB can be streamed with
bounded memory (:class:`FatbinStream`). Counts per name match ``cuobjdump --list-elf/--list-ptx``
(which prints ``sm_100f`` as ``sm_100``).
"""

from __future__ import annotations

import os
import struct
from collections import Counter
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path

from glmcompat.model.errors import InputError
from glmcompat.model.gpu import sort_codes

MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_ELF = 2
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY = 0x200000
ENTRY_HEADER_MIN = 64


class FatbinError(InputError):
    """A fatbin that is not well formed."""


@dataclass(frozen=True, slots=True)
class FatbinEntry:
    kind: str  # "sass" or "ptx"
    arch: int
    flags: int
    offset: int  # of the entry header, inside the section
    size: int  # payload bytes

    @property
    def name(self) -> str:
        suffix = "a" if self.flags & FLAG_ARCH_SPECIFIC else "f" if self.flags & FLAG_FAMILY else ""
        prefix = "sm" if self.kind == "sass" else "compute"
        return f"{prefix}_{self.arch}{suffix}"


@dataclass(frozen=True, slots=True)
class FatbinCode:
    """What a fatbin section holds: SASS and PTX names (sorted) and how many entries of each."""

    sass: list[str]
    ptx: list[str]
    counts: dict[str, int]
    entries: int

    @staticmethod
    def of(entries: Iterable[FatbinEntry]) -> FatbinCode:
        c = Counter(e.name for e in entries)
        sass = sort_codes([n for n in c if n.startswith("sm_")])
        ptx = sort_codes([n for n in c if n.startswith("compute_")])
        return FatbinCode(sass, ptx, dict(sorted(c.items())), sum(c.values()))


Walker = Generator[tuple[int, int], bytes, None]


def _walk(size: int, out: list[FatbinEntry], name: str) -> Walker:
    """Walk a section of ``size`` bytes; yields (offset, length) requests at increasing offsets."""
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
                out.append(FatbinEntry("ptx" if kind == KIND_PTX else "sass", arch, flags, e, esize))
            e += ehsize + esize
        pos = end


def parse_fatbin(data: bytes | memoryview, name: str = "<fatbin>") -> list[FatbinEntry]:
    """All entries of a fatbin section held in memory."""
    out: list[FatbinEntry] = []
    w = _walk(len(data), out, name)
    try:
        off, n = next(w)
        while True:
            off, n = w.send(bytes(data[off:off + n]))
    except StopIteration:
        pass
    return out


class FatbinStream:
    """Feed a fatbin section in order, chunk by chunk; keeps only headers (bounded memory)."""

    def __init__(self, size: int, name: str = "<fatbin>") -> None:
        self.size = size
        self.name = name
        self.entries: list[FatbinEntry] = []
        self._w = _walk(size, self.entries, name)
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
            self._buf.clear()
            try:
                self._req = self._w.send(data)
            except StopIteration:
                self._req = None

    def finish(self) -> list[FatbinEntry]:
        if self._req is not None:
            raise FatbinError(f"{self.name}: fatbin section ends early (at {self._pos} of {self.size} bytes)")
        return self.entries


def gpu_code_of_section(data: bytes | memoryview, name: str = "<fatbin>") -> FatbinCode:
    return FatbinCode.of(parse_fatbin(data, name))


def gpu_code_of_elf_detail(path_or_bytes: str | os.PathLike[str] | bytes) -> FatbinCode:
    """The GPU code of a local ELF file's ``.nv_fatbin`` section (empty when it has none)."""
    import mmap

    from glmcompat.readers.elf import BytesView, parse_elf

    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        info = parse_elf(BytesView(data, "<bytes>"), "<bytes>", dynamic="skip")
        sec = info.section(".nv_fatbin")
        if sec is None or sec.type == 8:
            return FatbinCode([], [], {}, 0)
        return gpu_code_of_section(memoryview(data)[sec.offset:sec.offset + sec.size], "<bytes>: .nv_fatbin")
    path = Path(path_or_bytes)
    from glmcompat.readers.elf import ElfError

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
                    return gpu_code_of_section(view, f"{path}: .nv_fatbin")
                finally:
                    view.release()
    except FileNotFoundError:
        raise ElfError(f"{path}: no such file") from None


def gpu_code_of_elf(path_or_bytes: str | os.PathLike[str] | bytes) -> tuple[list[str], list[str]]:
    """(sorted SASS names like ``sm_90a``, sorted PTX names like ``compute_90``) of a local .so."""
    code = gpu_code_of_elf_detail(path_or_bytes)
    return code.sass, code.ptx
