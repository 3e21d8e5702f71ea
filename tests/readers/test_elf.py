"""ELF reader on real objects built by gcc in the test (exports and imports we control)."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from glmcompat.readers.elf import ElfError, cuda_majors, demangle, read_elf, top_namespace, torch_shaped

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

PROVIDER = r"""
namespace c10 { struct MessageLogger { MessageLogger(const char*, int, int); };
                MessageLogger::MessageLogger(const char*, int, int) {} }
extern "C" int prov_global(void) { return 1; }
extern "C" __attribute__((weak)) int prov_weak(void) { return 2; }
extern "C" __attribute__((visibility("hidden"))) int prov_hidden(void) { return 3; }
extern "C" __attribute__((visibility("protected"))) int prov_protected(void) { return 4; }
static int prov_local(void) { return 5; }
extern "C" int use_local(void) { return prov_local(); }
"""

USER = r"""
namespace c10 { struct MessageLogger { MessageLogger(const char*, int, int); }; }
extern "C" int prov_global(void);
extern "C" __attribute__((weak)) void maybe_there(void);
extern "C" int user_entry(void) {
  c10::MessageLogger m("x", 1, 2);
  if (maybe_there) maybe_there();
  return prov_global();
}
"""


def _build(tmp: Path, name: str, src: str, *extra: str) -> Path:
    c = tmp / f"{name}.cpp"
    c.write_text(src)
    out = tmp / f"lib{name}.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-O1", "-o", str(out), str(c), f"-Wl,-soname,lib{name}.so",
                    *extra], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("elf")
    prov = _build(tmp, "prov", PROVIDER)
    user = _build(tmp, "user", USER, f"-L{tmp}", "-lprov")
    return {"prov": prov, "user": user}


def test_provider_exports(libs: dict[str, Path]) -> None:
    info = read_elf(libs["prov"])
    assert {"prov_global", "prov_weak", "prov_protected", "use_local", "_ZN3c1013MessageLoggerC1EPKcii"} <= info.defined
    assert "prov_hidden" not in info.defined
    assert "prov_local" not in info.defined
    assert info.soname == "libprov.so"


def test_user_imports(libs: dict[str, Path]) -> None:
    info = read_elf(libs["user"])
    assert "libprov.so" in info.needed
    assert {"prov_global", "_ZN3c1013MessageLoggerC1EPKcii"} <= info.undefined
    assert "maybe_there" not in info.undefined  # WEAK undefined never fails a load
    assert "maybe_there" in info.weak_undefined
    assert "user_entry" in info.defined


def test_bytes_and_path_agree(libs: dict[str, Path]) -> None:
    a = read_elf(libs["user"])
    b = read_elf(libs["user"].read_bytes())
    assert (a.needed, a.defined, a.undefined) == (b.needed, b.defined, b.undefined)


def test_agrees_with_pyelftools(libs: dict[str, Path]) -> None:
    elftools = pytest.importorskip("elftools.elf.elffile")
    for path in libs.values():
        with open(path, "rb") as f:
            ef = elftools.ELFFile(f)
            dynsym = ef.get_section_by_name(".dynsym")
            defined, undefined = set(), set()
            for s in dynsym.iter_symbols():
                bind, vis = s["st_info"]["bind"], s["st_other"]["visibility"]
                if not s.name:
                    continue
                if s["st_shndx"] == "SHN_UNDEF":
                    if bind == "STB_GLOBAL":
                        undefined.add(s.name)
                elif bind in ("STB_GLOBAL", "STB_WEAK", "STB_GNU_UNIQUE") and vis in ("STV_DEFAULT", "STV_PROTECTED"):
                    defined.add(s.name)
            needed = [t.needed for t in ef.get_section_by_name(".dynamic").iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        info = read_elf(path)
        assert info.defined == defined
        assert info.undefined == undefined
        assert info.needed == needed


def _move_dynstr_to_end(data: bytes) -> bytes:
    """Rewrite an ELF the way patchelf leaves torch's libs: .dynstr copied after the section headers."""
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynsym = next(i for i, s in enumerate(secs) if s[1] == 11)
    dynstr_i = secs[dynsym][6]
    s = secs[dynstr_i]
    blob = data[s[4]:s[4] + s[5]]
    out = bytearray(data) + bytes(-len(data) % 16)
    new_off = len(out)
    out += blob
    rec = list(s)
    rec[4] = new_off
    struct.pack_into("<IIQQQQIIQQ", out, shoff + dynstr_i * shentsize, *rec)
    # scribble over the old copy so a reader that ignores the section header cannot pass
    out[s[4]:s[4] + s[5]] = b"\xee" * s[5]
    return bytes(out)


def test_dynstr_after_section_headers(libs: dict[str, Path]) -> None:
    data = libs["user"].read_bytes()
    moved = _move_dynstr_to_end(data)
    a, b = read_elf(data), read_elf(moved)
    assert (a.needed, a.defined, a.undefined) == (b.needed, b.defined, b.undefined)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: b"nope" + d[4:], "not an ELF file"),
        (lambda d: d[:40], "not an ELF file"),
        (lambda d: d[:-200], "past the end"),
        (lambda d: d[:40] + struct.pack("<Q", len(d) + 10) + d[48:], "past the end"),
        (lambda d: d[:58] + struct.pack("<H", 7) + d[60:], "section header size"),
    ],
    ids=["bad-magic", "truncated-header", "truncated-body", "shoff-past-end", "bad-shentsize"],
)
def test_malformed(libs: dict[str, Path], mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ElfError, match=message) as e:
        read_elf(mutate(libs["user"].read_bytes()), name="bad.so")
    assert "bad.so" in str(e.value)
    assert "\n" not in str(e.value)


def test_overlapping_sections(libs: dict[str, Path]) -> None:
    data = bytearray(libs["user"].read_bytes())
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 58)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynsym = next(i for i, s in enumerate(secs) if s[1] == 11)
    dynstr_i = secs[dynsym][6]
    rec = list(secs[dynstr_i])
    rec[4] = secs[dynsym][4] + 8  # .dynstr now starts inside .dynsym
    struct.pack_into("<IIQQQQIIQQ", data, shoff + dynstr_i * shentsize, *rec)
    with pytest.raises(ElfError, match="overlap"):
        read_elf(bytes(data), name="overlap.so")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ElfError, match="no such file"):
        read_elf(tmp_path / "nope.so")


@pytest.mark.parametrize(
    ("mangled", "ns"),
    [
        ("_ZN3c1013MessageLoggerC1EPKcii", "c10"),
        ("_ZNK2at10TensorBase4sizeEl", "at"),
        ("_ZTVN5torch8autograd4NodeE", "torch"),
        ("_ZN5torch8autograd13_wrap_outputsERKSt6vectorIN2at6TensorESaIS3_EE", "torch"),
        ("_ZNSt6vectorIiSaIiEED1Ev", "std"),
        ("_ZdlPv", None),
        ("memcpy", None),
    ],
)
def test_top_namespace(mangled: str, ns: str | None) -> None:
    assert top_namespace(mangled) == ns
    assert torch_shaped(mangled) == (ns in ("c10", "at", "torch"))


def test_cuda_majors() -> None:
    assert cuda_majors(["libcudart.so.12", "libc.so.6", "libcudart.so.13"]) == [12, 13]
    assert cuda_majors(["libcudart.e8e8b82a.so.12"]) == [12]
    assert cuda_majors(["libcublas.so.12"]) == []


def test_demangle() -> None:
    out = demangle(["_ZN3c1013MessageLoggerC1EPKcii", "plain"])
    assert out["plain"] == "plain"
    if out["_ZN3c1013MessageLoggerC1EPKcii"] != "_ZN3c1013MessageLoggerC1EPKcii":
        assert out["_ZN3c1013MessageLoggerC1EPKcii"] == "c10::MessageLogger::MessageLogger(char const*, int, int)"
