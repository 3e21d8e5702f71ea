"""Hostile wheels for the deadline tests: built in memory, served from 127.0.0.1."""
import io
import struct
import zipfile

def elf_with_symbols(n: int, name_len: int = 1, gap: int = 0, distinct: bool = False) -> bytes:
    """A minimal ELF64 shared object whose .dynsym holds n GLOBAL undefined symbols, all named by offset 1 of a
    .dynstr that is one long name (a NUL only at its end); ``gap`` zero bytes before the section headers."""
    dynstr = b"\0" + b"A" * name_len + b"\0"
    shstr = b"\0.dynsym\0.dynstr\0.shstrtab\0"
    if distinct:  # symbol i named by offset 1 + i % name_len: every suffix of the long name
        dynsym = b"\0" * 24 + b"".join(struct.pack("<IBBHQQ", 1 + i % name_len, 0x10, 0, 0, 0, 0) for i in range(n))
    else:  # all GLOBAL NOTYPE UND, named by offset 1
        dynsym = b"\0" * 24 + struct.pack("<IBBHQQ", 1, 0x10, 0, 0, 0, 0) * n
    off_dynsym = 64
    off_dynstr = off_dynsym + len(dynsym)
    off_shstr = off_dynstr + len(dynstr)
    shoff = (off_shstr + len(shstr) + gap + 7) & ~7
    pad = b"\0" * (shoff - off_shstr - len(shstr))
    hdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8 + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 4, 3)
    def sh(name, typ, off, size, link=0, entsize=0):
        return struct.pack("<IIQQQQIIQQ", name, typ, 0, 0, off, size, link, 0, 8, entsize)
    shdrs = sh(0, 0, 0, 0) + sh(1, 11, off_dynsym, len(dynsym), 2, 24) + sh(9, 3, off_dynstr, len(dynstr)) + sh(17, 3, off_shstr, len(shstr))
    return hdr + dynsym + dynstr + shstr + pad + shdrs

def wheel(member: bytes, name="x/_C.so", level=9) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        z.writestr("x/__init__.py", b"")
        z.writestr(name, member)
        z.writestr("x-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: x\nVersion: 1.0\n")
        z.writestr("x-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_x86_64\n")
        z.writestr("x-1.0.dist-info/RECORD", b"")
    return buf.getvalue()


def elf_with_fatbin(entries: int) -> bytes:
    """A minimal ELF64 whose ``.nv_fatbin`` section is one container of ``entries`` empty sm_90 cubin entries (64-byte
    headers, no payload): a billion of them deflate to a few MB."""
    import struct as st
    ent = st.pack("<HHIQ", 2, 0, 64, 0) + bytes(12) + st.pack("<I", 90) + bytes(8) + st.pack("<Q", 0) + bytes(16)
    fat = st.pack("<IHHQ", 0xBA55ED50, 1, 16, 64 * entries) + ent * entries
    shstr = b"\0.nv_fatbin\0.shstrtab\0"
    off_fat, off_str = 64, 64 + len(fat)
    shoff = (off_str + len(shstr) + 7) & ~7
    hdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8 + st.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 3, 2)
    def sh(name, typ, off, size):
        return st.pack("<IIQQQQIIQQ", name, typ, 0, 0, off, size, 0, 0, 8, 0)
    shdrs = sh(0, 0, 0, 0) + sh(1, 1, off_fat, len(fat)) + sh(12, 3, off_str, len(shstr))
    return hdr + fat + shstr + b"\0" * (shoff - off_str - len(shstr)) + shdrs


def sparse_wheel(path, gap: int, level: int = 9) -> None:
    """Write to ``path`` a wheel whose extension is an ELF with ``gap`` zero bytes before its section headers (a
    sparse file: gigabytes that deflate to a few MB), streamed, never held whole."""
    import struct as st
    full = elf_with_symbols(10, 8)
    shoff = st.unpack_from("<Q", full, 40)[0]
    gap = (gap + 7) & ~7
    head = full[:40] + st.pack("<Q", shoff + gap) + full[48:shoff]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        z.writestr("x/__init__.py", b"")
        with z.open("x/_C.so", "w", force_zip64=True) as f:
            f.write(head)
            zeros = bytes(64 << 20)
            left = gap
            while left:
                n = min(left, len(zeros))
                f.write(zeros[:n])
                left -= n
            f.write(full[shoff:])
        z.writestr("x-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: x\nVersion: 1.0\n")
        z.writestr("x-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_x86_64\n")
        z.writestr("x-1.0.dist-info/RECORD", b"")
