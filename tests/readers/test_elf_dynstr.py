"""An ELF read within a byte budget (a huge library of a wheel: issue 36): its sections named by type and its
DT_NEEDED read from .dynstr agree with what .dynamic names, on libraries gcc builds here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from glmcompat.readers.elf import BytesView, needed_from_dynstr, parse_elf, read_elf

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the libraries")


class Budgeted(BytesView):
    """A whole file whose reader may not afford the parts it can do without (a remote member past its budget)."""

    def affordable(self, ranges: list[tuple[int, int]]) -> bool:
        return False


def _gcc(tmp: Path, name: str, src: str, *extra: str) -> Path:
    c = tmp / f"{name}.c"
    c.write_text(src)
    out = tmp / name
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(c), *extra], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("dynstr")
    _gcc(tmp, "libdep.so.3", "int dep(void) { return 3; }\n", "-Wl,-soname,libdep.so.3")
    (tmp / "libdep.so").symlink_to("libdep.so.3")
    return _gcc(tmp, "libuser.so.1", "#include <math.h>\nint dep(void);\ndouble use(double x) { return sqrt(x) + dep(); }\n",
                "-Wl,-soname,libuser.so.1", f"-L{tmp}", "-ldep", "-lm", "-Wl,--no-as-needed", "-Wl,-rpath,$ORIGIN")


def test_needed_from_dynstr_is_what_dynamic_names(built: Path) -> None:
    data = built.read_bytes()
    whole = read_elf(built)
    assert "libdep.so.3" in whole.needed and whole.soname == "libuser.so.1"
    part = parse_elf(Budgeted(data, built.name), f"w.whl: pkg/{built.name}")
    assert not part.names_read and not part.needed_exact and whole.names_read and whole.needed_exact
    assert part.needed == whole.needed  # the soname and the RUNPATH ($ORIGIN) are not taken for libraries
    assert (part.undefined, part.defined) == (whole.undefined, whole.defined)
    assert {s.name for s in part.sections} >= {".dynsym", ".dynstr", ".dynamic"}
    assert part.section(".text") is None  # unnamed: a reader that needs names asks for them (names=True)
    named = parse_elf(Budgeted(data, built.name), built.name, names=True)
    assert named.names_read and named.section(".text") is not None


def test_a_name_patchelf_replaced_is_not_linked() -> None:
    # auditwheel (patchelf) adds the new name and leaves the old one in the table, named by nothing
    table = b"\x00libgfortran.so.5\x00libm.so.6\x00libgfortran-8f1e9814.so.5.0.0\x00libown.so\x00$ORIGIN/../x.libs\x00"
    assert needed_from_dynstr(table, b"", 64, "<", "libown.so") == ["libm.so.6", "libgfortran-8f1e9814.so.5.0.0"]
    # a library whose own name was replaced: the old one (its former DT_SONAME) is not linked either
    table = b"\x00libquadmath.so.0\x00libc.so.6\x00"
    assert needed_from_dynstr(table, b"", 64, "<", "libquadmath-96973f99.so.0.0.0") == ["libc.so.6"]
