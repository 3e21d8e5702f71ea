"""gcc for the verify tests' fixtures, run once for each distinct build in a test process.

The fixtures build the same libraries again and again (the fake torch's libc10.so in nearly every test, the same
extension module for several tests' sites). gcc's output depends only on what it is given: the source, the names
of the source and output files, the flags, and the contents of the libraries it links; never on the folder it
runs in (the ELF names the source by its base name, the run paths are ``$ORIGIN``-relative, the build id is a hash
of the contents). A build whose inputs, so identified, were built before is that earlier output, copied; any other
is built by gcc.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

# (source, source file name, output file name, the arguments as identified by identify) -> (the output, its mode)
_BUILT: dict[tuple[object, ...], tuple[bytes, int]] = {}


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def identify(arg: str) -> object:
    """An argument as what it gives gcc: a flag as written, a file it reads by its name and contents, a folder of
    libraries (``-L DIR``) by the names and contents of its files."""
    p = Path(arg)
    if arg.startswith("-") or not p.is_absolute():
        return arg
    if p.is_dir():
        return ("dir", tuple(sorted((f.name, _digest(f)) for f in p.iterdir() if f.is_file())))
    if p.is_file():
        return ("file", p.name, _digest(p))
    return arg


def gcc(src: str, out: Path, source_name: str, *args: str) -> None:
    """``gcc -shared -fPIC -o OUT SOURCE ARGS``, with ``src`` written to ``source_name`` beside ``out`` (and removed)."""
    key = (src, source_name, out.name, tuple(identify(a) for a in args))
    if key in _BUILT:
        data, mode = _BUILT[key]
        out.write_bytes(data)
        out.chmod(mode)
        return
    c = out.parent / source_name
    c.write_text(src)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(c), *args], check=True, capture_output=True)
    c.unlink()
    _BUILT[key] = (out.read_bytes(), out.stat().st_mode & 0o7777)
