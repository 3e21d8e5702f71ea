"""Each member of a wheel is inflated once (issue 39): the extension tables and the NumPy import of a gcc-built module
are read in one pass (glmcompat.ops.artifacts.ext_and_numpy) with the same answers as the two passes it replaced
(summarise_ext, then numpy_summary), and a deflate tail that is no stream is inflated with one window, not two
(glmcompat.readers.wheelzip._decode_both)."""

from __future__ import annotations

import random
import zlib

import pytest

from glmcompat.ops.artifacts import Opened, numpy_summary, own_code, summaries
from glmcompat.ops.wheelprobe import WHOLE_MEMBER, elf_members, summarise_ext
from glmcompat.readers.wheelzip import BytesSource, RemoteZip, _decode_both
from tests.abifakes import HAVE_GXX, gxx, wheel

needs_gxx = pytest.mark.skipif(not HAVE_GXX, reason="g++ builds the modules")


def _module(tmp, name: str, numpy: str, blob: int = 0) -> bytes:
    """A Python-extension-shaped module: it calls PyCapsule_GetPointer (as NumPy's import_array does) and names
    ``numpy``'s C-API module; ``blob``: that many random bytes of read-only data (a member too big to read whole)."""
    data = ""
    if blob:  # `extern const unsigned char big[] = {...}` of those numbers, its bytes placed by the assembler (.incbin):
        # g++ parses no 3 MB initializer (about 9 s of CPU); the module is byte for byte the one the initializer gave
        rnd = random.Random(blob)
        raw = tmp / f"{name}.rodata"
        raw.write_bytes(bytes(rnd.randrange(256) for _ in range(blob)))
        data = (f'asm(".section .rodata\\n.balign 32\\n.globl big\\n.type big, @object\\nbig:\\n.incbin \\"{raw}\\"\\n'
                '.size big, .-big\\n.previous");\n')
    src = ('extern "C" void* PyCapsule_GetPointer(void*, const char*);\n'
           f'extern "C" void* which(void* c) {{ return PyCapsule_GetPointer(c, "{numpy}"); }}\n{data}')
    # -fno-toplevel-reorder: the asm after the function's string literal, where g++ put the initialized array
    return gxx(tmp, name, src, f"{name}.so", *(["-fno-toplevel-reorder"] if blob else [])).read_bytes()


def _opened(members: dict[str, bytes]) -> tuple[Opened, bytes]:
    data = wheel({**members, "np/__init__.py": b""}, "np", "1.0")
    return Opened(lambda: BytesSource(data, "np-1.0-cp311-cp311-linux_x86_64.whl"), "np.whl", ""), data


def _two_passes(data: bytes) -> tuple[dict, dict, dict, int]:
    """What summarise_ext and then numpy_summary answer (the reading before issue 39), and what they inflated."""
    zf = RemoteZip(BytesSource(data, "np-1.0-cp311-cp311-linux_x86_64.whl"))
    left: dict[str, str] = {}
    ext = summarise_ext(zf, own_code, left)
    npleft: dict[str, str] = {}
    np = numpy_summary(zf, set(ext.modules), npleft)
    return ext.to_json(), np, left | npleft, zf.inflated


@needs_gxx
def test_small_members_are_inflated_once(tmp_path):
    op, data = _opened({"np/_a.so": _module(tmp_path, "_a", "numpy._core._multiarray_umath"),
                        "np/_b.so": _module(tmp_path, "_b", "numpy.core._multiarray_umath"),
                        "np/libhelper.so": _module(tmp_path, "libhelper", "nothing")})
    left: dict[str, str] = {}
    ext, np = summaries(op, None, True, left)
    assert np == {"np/_a.so": 2, "np/_b.so": 1}  # libhelper: a lib*.so is not scanned
    # each module whole, once: the NumPy scan reads the bytes its tables were read from
    assert op.zip.inflated == sum(m.size for m in elf_members(op.zip))
    old_ext, old_np, old_left, old_inflated = _two_passes(data)
    assert (ext.to_json(), np, left) == (old_ext, old_np, old_left)
    assert old_inflated > op.zip.inflated  # the two passes inflated the scanned modules twice


@needs_gxx
def test_a_big_member_is_read_on_from_its_tables(tmp_path, monkeypatch):
    # the judge reads members up to JUDGE_WHOLE_MEMBER whole; this one is read in parts as the probes read one
    monkeypatch.setattr("glmcompat.ops.artifacts.JUDGE_WHOLE_MEMBER", WHOLE_MEMBER)  # read at call time
    big = _module(tmp_path, "_big", "numpy._core._multiarray_umath", blob=3 << 20)
    op, data = _opened({"np/_big.so": big})
    (m,) = elf_members(op.zip)
    assert m.compressed_size > WHOLE_MEMBER  # read in parts (SparseMember), not whole
    left: dict[str, str] = {}
    ext, np = summaries(op, None, True, left)
    old_ext, old_np, old_left, old_inflated = _two_passes(data)
    assert (ext.to_json(), np, left) == (old_ext, old_np, old_left)
    assert np == {"np/_big.so": 2}
    # the tables' prefix and tail, then .rodata from that prefix: no byte of the member is inflated twice
    assert op.zip.inflated <= m.size < old_inflated
    assert m.name in op.zip.boundaries  # its tail was decoded from a block boundary: it was read in parts


def test_a_tail_that_is_no_stream_is_inflated_with_one_window():
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    text = b"".join(b"line %d of a text that compresses\n" % i for i in range(40_000))
    comp = raw.compress(text) + raw.flush()
    spent: list[int] = []
    assert _decode_both(comp[:-64], len(text), None, None, spent.append) is None  # it ends early: not a stream
    assert 0 < sum(spent) <= len(text)  # one decoding of it, not two
    spent.clear()
    a, b = _decode_both(comp, len(text), None, None, spent.append)  # a stream: both windows, until they agree
    assert a == b == text
    assert len(text) < sum(spent) < 2 * len(text)
