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
