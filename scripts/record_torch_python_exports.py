"""Record the names every torch release's Python binding library exports (run by hand; needs the package index).

Reads ``torch/lib/libtorch_python.so`` (torch 1.x before it existed: ``torch/_C*.so``) of each release's wheel the
way ``glmcompat abi`` does (HTTP range requests, only the dynamic symbol tables) and prints the names EVERY release
read defines, restricted to the binding library's own C-level names (``THP*``; C++ names change their mangled
parameters across releases, the C names do not). An extension missing one of them at load time was loaded without
that library in its scope (before ``import torch``), since no torch release lacks it: no other torch would have it.

    python scripts/record_torch_python_exports.py [VERSION ...]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# the binding library's own names: C (THPVariableClass) and C++ functions at global scope (_Z16THPVariable_WrapN2at10TensorBaseE)
THP = re.compile(r"(?:_Z\d{1,3})?THP")

# (torch release, CPython tag of a wheel it has on the index)
RELEASES = (("1.4.0", "cp38"), ("1.8.1", "cp38"), ("1.13.1", "cp310"), ("2.0.1", "cp311"), ("2.4.1", "cp311"),
            ("2.9.1", "cp311"), ("2.15.0", "cp312"))


def main(argv: list[str] | None = None) -> int:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.ops.wheelprobe import _find, _Wheel, elf_members, read_elf_member

    args = argv if argv is not None else sys.argv[1:]
    releases = [r for r in RELEASES if not args or r[0] in args]
    every: set[str] | None = None
    cache = Cache()
    with IndexClient(None, cache=cache) as ic:
        for version, py in releases:
            f = _find(ic, cache, "torch", version, py, "manylinux_x86_64")
            w = _Wheel(ic, f)
            members = [m for m in elf_members(w.zip, "torch/") if m.name.rsplit("/", 1)[-1].startswith(
                ("libtorch_python.so", "_C."))]
            names: set[str] = set()
            for m in members:
                names |= read_elf_member(w.zip, m, dynamic="if-available").defined
            thp = {n for n in names if THP.match(n)}
            print(f"torch {version}: {f.filename} sha256={f.sha256} {[m.name for m in members]}: {len(names)} "
                  f"defined, {len(thp)} THP*", file=sys.stderr)
            every = thp if every is None else every & thp
    for n in sorted(every or ()):
        print(n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
