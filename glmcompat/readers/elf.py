"""A small ELF reader: DT_NEEDED, SONAME, defined and undefined dynamic symbols, section table.

Written for partial files: the parser asks a *view* for byte ranges and the view either answers or
raises :class:`glmcompat.readers.wheelzip.NeedBytes`; a driver fetches what is missing and parses again.
Phases ask for everything they need at once (header; section headers; section names; the symbol,
string and dynamic tables), so a remote member costs a handful of round trips.

It reads what the dynamic loader reads, through the section headers, so it also works on libraries
rewritten by patchelf, where ``.dynstr`` and ``.gnu.hash`` moved to a segment appended after the
section headers (torch's ``torch/lib/*.so``).

Rules (what the loader does):

* defined = GLOBAL, WEAK or GNU_UNIQUE symbols with a section index, default or protected visibility;
* undefined = GLOBAL symbols without a section (WEAK undefined symbols never fail a load: kept apart).

Which undefined names an extension needs from torch is decided in one place, :func:`needs_from_torch`
(and :func:`check_torch_needs` for a whole module), used by ``abi``, ``matrix probe`` and ``verify``.
"""

from __future__ import annotations

import mmap
import os
import re
import shutil
import struct
import subprocess
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, Protocol

from glmcompat.model.errors import InputError
from glmcompat.readers.wheelzip import NeedBytes

SHT_NOBITS = 8
SHT_DYNSYM = 11
SHT_DYNAMIC = 6
DT_NEEDED = 1
DT_SONAME = 14
MAX_SYMBOLS = 2_000_000  # dynamic symbols of one object (torch exports ~115k over all its libraries)
MAX_STRTAB = 256 << 20  # bytes of one .dynstr
_TICK = 1 << 16  # symbols between two deadline checks


class ElfError(InputError):
    """A file that is not a well-formed ELF object (names the file and, for wheels, the member)."""


class View(Protocol):
    size: int

    def get(self, offset: int, length: int) -> bytes: ...

    def require(self, ranges: list[tuple[int, int]]) -> None: ...


def _affordable(view: View, ranges: list[tuple[int, int]]) -> bool:
    """Whether a view reads ``ranges`` within its byte budget (a partial view of a remote member: its
    ``affordable``); a view that has no budget (bytes in memory, a local file) reads anything."""
    f = getattr(view, "affordable", None)
    return True if f is None else bool(f(ranges))


# Names of sections found by their type where the section-name table is not read (a huge linked library places it
# after its static symbol table, hundreds of MiB from anything else read): what the readers look up by name.
_TYPE_NAMES = {SHT_DYNSYM: ".dynsym", SHT_DYNAMIC: ".dynamic", 2: ".symtab", 0x6FFFFFFE: ".gnu.version_r",
               0x6FFFFFFD: ".gnu.version_d", 0x6FFFFFFF: ".gnu.version", 0x6FFFFFF6: ".gnu.hash"}
# A shared-library file name as DT_NEEDED or DT_SONAME write it: no path, no RUNPATH token (``$ORIGIN``, ``:``).
_LIBNAME = re.compile(rb"(?<=\x00)[^\x00/\s$:=]+\.so(?:\.[^\x00/\s$:=]*)?(?=\x00)")
# the hash auditwheel adds to a library's name (``libgfortran-040039e1.so.5.0.0``, ``libcudart.e8e8b82a.so.12``)
_HASH_AFTER = re.compile(r"[-.][0-9a-f]{8}(?:$|-)")


def needed_from_dynstr(strtab: bytes, symtab: bytes, bits: int, e: str, own: str) -> list[str]:
    """The libraries an object links, read from its ``.dynstr`` where ``.dynamic`` is beyond the byte budget: the
    dynamic string table holds the symbol names, the version names and files, and the strings of DT_NEEDED, DT_SONAME
    and DT_RUNPATH; of these, the shared-library file names no symbol is named by are what DT_NEEDED and DT_SONAME
    name (a linker writes no other). ``own``: the object's file name, which is its DT_SONAME and is left out. In the
    order the table holds them (the linker's)."""
    fmt = e + ("IBBHQQ" if bits == 64 else "IIIBBH")
    named = {row[0] for row in struct.iter_unpack(fmt, symtab)}
    out: list[str] = []
    for m in _LIBNAME.finditer(strtab):
        lib = m.group().decode("utf-8", "replace")
        if m.start() not in named and lib != own and lib not in out:
            out.append(lib)
    # patchelf (auditwheel) renames a DT_NEEDED or DT_SONAME by adding the new string (the old name with a hash:
    # ``libgfortran.so.5`` -> ``libgfortran-8f1e9814.so.5.0.0``); the old one stays in the table, named by nothing
    bases = [lib.split(".so", 1)[0] for lib in [*out, own]]

    def renamed(lib: str) -> bool:
        b = lib.split(".so", 1)[0]
        return any(len(o) > len(b) + 8 and o.startswith(b) and _HASH_AFTER.match(o, len(b)) for o in bases)

    return [lib for lib in out if not renamed(lib)]


class BytesView:
    """A complete file in memory (or mmapped)."""

    def __init__(self, data: bytes | mmap.mmap | memoryview, name: str) -> None:
        self.data = data
        self.size = len(data)
        self.name = name

    def get(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ElfError(f"{self.name}: reference past the end of the file ({offset}+{length} > {self.size})")
        return bytes(self.data[offset:offset + length])

    def require(self, ranges: list[tuple[int, int]]) -> None:
        for off, n in ranges:
            if off < 0 or n < 0 or off + n > self.size:
                raise ElfError(f"{self.name}: reference past the end of the file ({off}+{n} > {self.size})")


@dataclass(frozen=True, slots=True)
class Section:
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


@dataclass(frozen=True, slots=True)
class ElfInfo:
    """What a shared object needs and provides, as the dynamic loader sees it."""

    needed: list[str]
    soname: str | None
    defined: frozenset[str]
    undefined: frozenset[str]
    weak_undefined: frozenset[str]
    sections: tuple[Section, ...]
    machine: int
    bits: int
    names_read: bool = True  # False: the section-name table was beyond the reader's byte budget (names by type only)
    needed_exact: bool = True  # False: ``needed`` was read from .dynstr, .dynamic being beyond the byte budget


    def section(self, name: str) -> Section | None:
        for s in self.sections:
            if s.name == name:
                return s
        return None

    @property
    def cuda_majors(self) -> list[int]:
        """CUDA runtime majors from DT_NEEDED (``libcudart.so.12`` -> 12)."""
        return cuda_majors(self.needed)


# The CUDA runtime as a DT_NEEDED name: ``libcudart.so``, ``libcudart.so.12``, ``libcudart.so.12.8``, or a
# copy a wheel bundles under a hashed name (auditwheel's ``libcudart-d0da41ae.so.12``, ``libcudart.e8e8b82a.so.12``).
_CUDART = re.compile(r"^libcudart(?:[.-][0-9a-f]{8})?\.so(?:\.(\d+)(?:\.\d+)*)?$")


def cuda_runtime_sonames(needed: Iterable[str]) -> list[str]:
    """The CUDA runtime libraries among DT_NEEDED names (hashed bundled copies included), sorted, once each."""
    return sorted({n for n in needed if _CUDART.match(n)})


def cuda_majors(needed: Iterable[str]) -> list[int]:
    """The CUDA runtime majors the DT_NEEDED names link (``libcudart-d0da41ae.so.12`` -> 12; an unversioned
    ``libcudart.so`` names none)."""
    out = set()
    for n in needed:
        m = _CUDART.match(n)
        if m and m.group(1):
            out.add(int(m.group(1)))
    return sorted(out)


def foreign_cuda_runtimes(needed: Iterable[str], torch_needed: Iterable[str]) -> list[str]:
    """The CUDA runtimes among ``needed`` that the loader must find outside the wheel and that torch (whose
    DT_NEEDED names are ``torch_needed``) does not provide: a ``libcudart.so.N`` whose major N torch does not
    link. A copy bundled under a hashed name ships inside the wheel, and an unversioned ``libcudart.so``
    names no major: neither is foreign."""
    have = set(cuda_majors(torch_needed))
    out = set()
    for n in needed:
        m = _CUDART.match(n)
        if m and m.group(1) and not _BUNDLED.match(n) and int(m.group(1)) not in have:
            out.add(n)
    return sorted(out)


_BUNDLED = re.compile(r"^libcudart[.-][0-9a-f]{8}\.so")


DynamicMode = Literal["require", "if-available", "skip"]


def _strings(table: bytes, offsets: Iterable[int], what: str, name: str,
             check: Callable[[], None] | None = None) -> dict[int, str]:
    """The NUL-terminated string at each offset of ``table``, in time linear in the table: one sweep over the
    distinct offsets in order, each NUL found once (a string that is the tail of another ends at the same NUL), so
    millions of entries naming one long string cost one scan of it, not millions. The bytes decoded are bounded
    too: overlapping names beyond what a linker's tail merging writes are refused."""
    limit = len(table)
    names: dict[int, str] = {}
    find = table.find
    end = -1  # the NUL that ends the string at the last offset looked up
    budget = 4 * limit + (16 << 20)
    for j, n in enumerate(sorted(set(offsets))):
        if check is not None and not j % _TICK:
            check()
        if n >= limit:
            raise ElfError(f"{name}: {what} name offset {n} is past the string table ({limit} bytes)")
        if n > end:
            end = find(b"\x00", n)
            if end < 0:
                raise ElfError(f"{name}: {what} name at {n} is not NUL-terminated")
        budget -= end - n
        if budget < 0:
            raise ElfError(f"{name}: its {what} names overlap far beyond what a linker writes (more than "
                           f"{4 * limit + (16 << 20)} bytes of names in a {limit}-byte string table)")
        names[n] = table[n:end].decode("utf-8", "replace")
    return names


def parse_elf(view: View, name: str = "<elf>", *, dynamic: DynamicMode = "require",
              check: Callable[[], None] | None = None, names: bool = False) -> ElfInfo:
    """Parse ``view``; raises :class:`NeedBytes` for missing ranges and :class:`ElfError` when malformed. Linear in
    the size of its tables; ``check`` (a deadline) is called as the symbols are read. A view with a byte budget
    (``affordable``) reads the section names, and ``.dynamic`` in ``require`` mode, only within it (``names``: the
    names always): else the sections are named by type and DT_NEEDED is read from ``.dynstr``
    (:func:`needed_from_dynstr`), and :class:`ElfInfo` says so."""
    size = view.size
    if size < 52:
        raise ElfError(f"{name}: not an ELF file ({size} bytes)")
    view.require([(0, min(64, size))])
    hdr = view.get(0, min(64, size))
    if hdr[:4] != b"\x7fELF":
        raise ElfError(f"{name}: not an ELF file (bad magic {hdr[:4]!r})")
    cls, data = hdr[4], hdr[5]
    if cls not in (1, 2) or data not in (1, 2):
        raise ElfError(f"{name}: unsupported ELF class {cls} / data encoding {data}")
    e = "<" if data == 1 else ">"
    bits = 64 if cls == 2 else 32
    if bits == 64:
        if size < 64:
            raise ElfError(f"{name}: truncated ELF header")
        (_, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx) = struct.unpack_from(
            e + "HHIQQQIHHHHHH", hdr, 16)
        sh_fmt, sh_size_expect = e + "IIQQQQIIQQ", 64
    else:
        (_, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx) = struct.unpack_from(
            e + "HHIIIIIHHHHHH", hdr, 16)
        sh_fmt, sh_size_expect = e + "IIIIIIIIII", 40
    if shoff == 0:
        raise ElfError(f"{name}: no section headers (stripped of sections; cannot read its symbols)")
    if shentsize != sh_size_expect:
        raise ElfError(f"{name}: section header size {shentsize} (expected {sh_size_expect})")
    if shnum == 0:  # extended numbering: the count is in section 0's sh_size
        if shoff + shentsize > size:
            raise ElfError(f"{name}: section headers at {shoff} are past the end of the file ({size} bytes)")
        view.require([(shoff, shentsize)])
        shnum = struct.unpack_from(sh_fmt, view.get(shoff, shentsize))[5]
    if shnum > 65535 * 16 or shoff + shnum * shentsize > size:
        raise ElfError(f"{name}: {shnum} section headers at {shoff} run past the end of the file ({size} bytes)")
    view.require([(shoff, shnum * shentsize)])
    table = view.get(shoff, shnum * shentsize)
    raw = [struct.unpack_from(sh_fmt, table, i * shentsize) for i in range(shnum)]
    for i, r in enumerate(raw):
        stype, off, sz = r[1], r[4], r[5]
        if stype != SHT_NOBITS and stype != 0 and off + sz > size:
            raise ElfError(f"{name}: section {i} (offset {off}, {sz} bytes) runs past the end of the file ({size} bytes)")
    if shstrndx == 0xFFFF:
        shstrndx = raw[0][6]
    if not 0 < shstrndx < shnum:
        raise ElfError(f"{name}: section-name table index {shstrndx} out of range")
    sr = raw[shstrndx]
    names_read = names or _affordable(view, [(sr[4], sr[5])])
    if names_read:
        view.require([(sr[4], sr[5])])
        snames = _strings(view.get(sr[4], sr[5]), [r[0] for r in raw], "section", name)
        labels = [snames[r[0]] for r in raw]
    else:  # by type: what the dynamic tables are; the rest unnamed (ElfInfo.names_read says so)
        links = {r[6] for r in raw if r[1] in (SHT_DYNSYM, SHT_DYNAMIC)}
        labels = [_TYPE_NAMES.get(r[1], ".dynstr" if i in links and r[1] == 3 else "") for i, r in enumerate(raw)]
    sections = tuple(Section(n, r[1], r[2], r[3], r[4], r[5], r[6], r[9]) for n, r in zip(labels, raw, strict=True))

    dynsym_i = next((i for i, s in enumerate(sections) if s.type == SHT_DYNSYM), None)
    dyn_i = next((i for i, s in enumerate(sections) if s.type == SHT_DYNAMIC), None)
    if dynsym_i is None:
        return ElfInfo([], None, frozenset(), frozenset(), frozenset(), sections, machine, bits, names_read)
    dynsym = sections[dynsym_i]
    if not 0 < dynsym.link < shnum:
        raise ElfError(f"{name}: .dynsym links to section {dynsym.link}, out of range")
    dynstr = sections[dynsym.link]
    sym_size = 24 if bits == 64 else 16
    if dynsym.size % sym_size or dynsym.size // sym_size > MAX_SYMBOLS:
        raise ElfError(f"{name}: .dynsym size {dynsym.size} is not a sane symbol table (at most {MAX_SYMBOLS} "
                       "symbols are read)")
    if dynstr.size > MAX_STRTAB:
        raise ElfError(f"{name}: .dynstr size {dynstr.size} is not a sane string table (at most {MAX_STRTAB >> 20} "
                       "MiB is read)")
    wanted = [dynsym, dynstr]
    dyn = sections[dyn_i] if dyn_i is not None and dynamic != "skip" else None
    if dyn is not None:
        wanted.append(dyn)
    _check_overlap(wanted, name)
    base = [(dynsym.offset, dynsym.size), (dynstr.offset, dynstr.size)]
    dyn_bytes: bytes | None = None
    dyn_str: bytes | None = None
    from_dynstr = False
    if dyn is not None:
        if not 0 < dyn.link < shnum:
            raise ElfError(f"{name}: .dynamic links to section {dyn.link}, out of range")
        dstr = sections[dyn.link]
        ranges = [(dyn.offset, dyn.size), (dstr.offset, dstr.size)]
        from_dynstr = dynamic == "require" and dstr.offset == dynstr.offset and not _affordable(view, ranges)
        view.require(base + ranges if dynamic == "require" and not from_dynstr else base)
        try:
            view.require(ranges)
            dyn_bytes = view.get(dyn.offset, dyn.size)
            dyn_str = view.get(dstr.offset, dstr.size)
        except NeedBytes:
            dyn_bytes = None
    else:
        view.require(base)
    strtab = view.get(dynstr.offset, dynstr.size)
    symtab = view.get(dynsym.offset, dynsym.size)
    defined, undefined, weak_undef = _symbols(symtab, strtab, bits, e, name, check)
    needed: list[str] = []
    soname: str | None = None
    if dyn_bytes is not None and dyn_str is not None:
        needed, soname = _dynamic(dyn_bytes, dyn_str, bits, e, name)
    elif from_dynstr:
        needed = needed_from_dynstr(strtab, symtab, bits, e, name.rsplit("/", 1)[-1].rsplit(": ", 1)[-1])
    return ElfInfo(needed, soname, defined, undefined, weak_undef, sections, machine, bits, names_read,
                   not from_dynstr)


def _check_overlap(secs: list[Section], name: str) -> None:
    spans = sorted((s.offset, s.offset + s.size, s.name) for s in secs if s.size and s.type != SHT_NOBITS)
    for (a0, a1, an), (b0, b1, bn) in zip(spans, spans[1:], strict=False):
        if b0 < a1 and (a0, a1) != (b0, b1):
            raise ElfError(f"{name}: sections {an} and {bn} overlap ({a0}-{a1} and {b0}-{b1})")


def _symbols(symtab: bytes, strtab: bytes, bits: int, e: str, name: str, check: Callable[[], None] | None = None
             ) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The defined, undefined and weak undefined names of a symbol table, in time linear in the two tables: each
    name is found once per distinct offset, by one sweep over the offsets in order (a name that is the tail of
    another ends at the same NUL), so ten million symbols naming one long string cost one scan of it, not ten
    million."""
    if bits == 64:
        it = ((n, info, other, shndx) for n, info, other, shndx, _, _ in struct.iter_unpack(e + "IBBHQQ", symtab))
    else:
        it = ((n, info, other, shndx) for n, _, _, info, other, shndx in struct.iter_unpack(e + "IIIBBH", symtab))
    limit = len(strtab)
    kept: list[tuple[int, int]] = []  # (name offset, 0 undefined / 1 weak undefined / 2 defined)
    for i, (n, info, other, shndx) in enumerate(it):
        if check is not None and not i % _TICK:
            check()
        if n == 0:
            continue
        bind = info >> 4
        if bind == 0:
            continue
        if n >= limit:
            raise ElfError(f"{name}: symbol name offset {n} is past .dynstr ({limit} bytes)")
        if shndx == 0:
            if bind == 1:
                kept.append((n, 0))
            elif bind == 2:
                kept.append((n, 1))
        elif bind in (1, 2, 10) and (other & 3) in (0, 3) and (info & 0xF) not in (3, 4):
            kept.append((n, 2))
    names = _strings(strtab, [n for n, _ in kept], "symbol", name, check)
    out: tuple[set[str], set[str], set[str]] = (set(), set(), set())
    for n, kind in kept:
        out[kind].add(names[n])
    undefined, weak_undef, defined = out
    return frozenset(defined), frozenset(undefined), frozenset(weak_undef)


def _dynamic(dyn: bytes, dstr: bytes, bits: int, e: str, name: str) -> tuple[list[str], str | None]:
    fmt = e + ("qQ" if bits == 64 else "iI")
    ent = struct.calcsize(fmt)
    wanted: list[tuple[int, int]] = []
    for tag, val in struct.iter_unpack(fmt, dyn[: len(dyn) - len(dyn) % ent]):
        if tag == 0:
            break
        if tag in (DT_NEEDED, DT_SONAME):
            wanted.append((tag, val))
    strings = _strings(dstr, [v for _, v in wanted], "DT_NEEDED", name)
    needed = [strings[v] for t, v in wanted if t == DT_NEEDED]
    soname = next((strings[v] for t, v in reversed(wanted) if t == DT_SONAME), None)
    return needed, soname


def read_elf(path_or_bytes: str | os.PathLike[str] | bytes | bytearray | memoryview, *,
             name: str | None = None) -> ElfInfo:
    """Read a local ELF file (path) or ELF bytes. Raises :class:`ElfError` when malformed."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return parse_elf(BytesView(bytes(path_or_bytes), name or "<bytes>"), name or "<bytes>")
    path = Path(path_or_bytes)
    label = name or str(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise ElfError(f"{label}: not an ELF file (empty)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return parse_elf(BytesView(mm, label), label)
    except FileNotFoundError:
        raise ElfError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise ElfError(f"{label}: is a directory") from None
    except PermissionError:
        raise ElfError(f"{label}: permission denied") from None


# ------------------------------------------------------------------------------------------------
# Names
# ------------------------------------------------------------------------------------------------

# torch's own C++ namespaces, and two bundled libraries whose names torch's libraries export (fmt, pybind11).
TORCH_NAMESPACES = frozenset({"c10", "at", "torch", "caffe2", "c10d", "aoti", "at_cuda_detail", "fmt", "pybind11"})
# torch's C-named entry points: its stable C ABI (``aoti_torch_*``, ``torch_*``: torchaudio 2.11.1 needs
# ``torch_new_stable_ivalue``, which torch 2.13.0 exports and 2.11.0 does not), AOTInductor's other C
# functions (``aoti_record_function_start``) and the Python bindings (``THPDtypeType``; also C++
# functions at global scope such as ``THPVariable_Wrap(at::TensorBase)``).
TORCH_C_PREFIXES = ("aoti_", "torch_", "THP")


def top_namespace(mangled: str) -> str | None:
    """The outermost namespace (or class) of an Itanium-mangled name, e.g. ``c10`` for ``_ZN3c10...``."""
    s = mangled
    if not s.startswith("_Z"):
        return None
    i = 2
    if s.startswith(("TV", "TI", "TS", "TT", "GV", "GR", "TW", "TH"), i):
        i += 2
    elif s.startswith(("Th", "Tv"), i):  # thunks: skip the offset, ending in '_'
        j = s.find("_", i + 2)
        if j < 0:
            return None
        i = j + 1
    if s.startswith("N", i):
        i += 1
        while i < len(s) and s[i] in "rVKRO":
            i += 1
    elif s.startswith("L", i):
        i += 1
    if s.startswith("St", i) or s.startswith("Sa", i) or s.startswith("Ss", i):
        return "std"
    j = i
    while j < len(s) and s[j].isdigit():
        j += 1
    if j == i:
        return None
    n = int(s[i:j])
    return s[j:j + n]


def torch_shaped(symbol: str) -> bool:
    """Whether a name has torch's shape: C++ in one of its namespaces (``_ZN3c10...``, ``_ZN2at...``,
    ``_ZN5torch...``, vtables and thunks too), or a C name -- or a C++ function at global scope -- with
    one of its prefixes (``aoti_*``, ``torch_*``, ``THP*``)."""
    if symbol.startswith("_Z"):
        ns = top_namespace(symbol)
        return ns is not None and (ns in TORCH_NAMESPACES or ns.startswith(TORCH_C_PREFIXES))
    return symbol.startswith(TORCH_C_PREFIXES)


# :func:`torch_shaped`, answered once a process for each name: a serving lock's judge compares 35,000 undefined names
# of its extensions, 3,900 of them distinct (every module of a wheel binds the same CPython and libc names)
_shaped = lru_cache(maxsize=1 << 16)(torch_shaped)


# Names torch exports that other libraries provide as well (libstdc++'s: torch 2.10.0 exports ~7,600
# ``std::`` names, and only 2.13.0 of 2.9.1-2.14.1 exports ``std::string::replace(...)``, which
# sgl-kernel 0.3.21 binds in libstdc++): exported by *another* torch release, they prove nothing.
SYSTEM_NAMESPACES = frozenset({"std", "__gnu_cxx", "__cxxabiv1"})


def needs_from_torch(symbol: str, known: Container[str] = frozenset()) -> bool:
    """THE torch-symbol predicate, shared by ``abi``, ``matrix probe`` and ``verify``.

    ``symbol`` is a *strong* (GLOBAL) undefined name of an extension (WEAK undefined names never fail a
    load: pass :attr:`ElfInfo.undefined`, never ``weak_undefined``). It is needed from torch when it has
    torch's shape (:func:`torch_shaped`), or when it is a C++ name outside the C++ runtime's namespaces
    that ``known`` holds: names the caller has read from some torch release's ``torch/lib/*.so``.
    (C names torch exports without its prefixes come from libraries it bundles, ``mkl_*``, ``GOMP_*``,
    ``Sleef_*``, which a module may bind elsewhere; the release being compared counts them through
    :func:`check_torch_needs`'s ``torch_exports``.)
    """
    if torch_shaped(symbol):
        return True
    if symbol not in known:
        return False
    ns = top_namespace(symbol)
    return ns is not None and ns not in SYSTEM_NAMESPACES


@dataclass(frozen=True, slots=True)
class TorchNeeds:
    """One module's verdict: what it needs from torch and which of those nothing provides."""

    needs: frozenset[str]
    missing: frozenset[str]


def check_torch_needs(undefined: Iterable[str], torch_exports: Container[str], *,
                      siblings: Container[str] = frozenset(), known: Container[str] = frozenset()) -> TorchNeeds:
    """Apply :func:`needs_from_torch` to a module's strong undefined names.

    ``torch_exports``: what the torch release being compared exports; ``siblings``: what the libraries
    the module links from its own wheel (DT_NEEDED) define; ``known``: names other torch releases
    export. A needed name that neither torch nor a sibling defines is missing: loading the module fails
    with 'undefined symbol'.
    """
    shaped = _shaped
    needs = frozenset(s for s in undefined
                      if s in torch_exports or shaped(s) or s in known and needs_from_torch(s, known))
    return TorchNeeds(needs, frozenset(s for s in needs if s not in torch_exports and s not in siblings))


def demangle(names: Iterable[str]) -> dict[str, str]:
    """Demangled display names (``cxxfilt`` if installed, else ``c++filt``, else unchanged)."""
    items = sorted(set(names))
    try:
        import cxxfilt  # lazy: optional cxxfilt

        out = {}
        for n in items:
            try:
                out[n] = cxxfilt.demangle(n)
            except Exception:  # noqa: BLE001 - invalid names stay mangled
                out[n] = n
        return out
    except ImportError:
        pass
    exe = shutil.which("c++filt")
    if exe and items:
        try:
            r = subprocess.run([exe], input="\n".join(items) + "\n", capture_output=True, text=True, timeout=30,
                               check=True)
            lines = r.stdout.splitlines()
            if len(lines) == len(items):
                return dict(zip(items, lines, strict=True))
        except (OSError, subprocess.SubprocessError):
            pass
    return {n: n for n in items}
