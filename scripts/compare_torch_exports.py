"""Compare the names two torch releases' ``torch/lib/*.so`` export: what an ``[[abi_equal]]`` row claims.

    python scripts/compare_torch_exports.py 2.14.0 2.14.1 [--python 3.11] [--platform x86_64]

Reads both wheels from the package index as ``glmcompat abi`` does (range requests; the exports are cached by
the wheels' sha256) and prints how many names each exports and every name one exports and the other does
not, demangled. Exit 0 when the only differences are nvcc's per-build names (``__cudaRegisterLinkedBinary_*``,
``__fatbinwrap_*``) or names that mention them, which no other object can reference; else exit 1.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PER_BUILD = re.compile(r"__cudaRegisterLinkedBinary_|__fatbinwrap_|_GLOBAL__N_")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--python", default="3.11")
    ap.add_argument("--platform", default="x86_64")
    args = ap.parse_args(argv)
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.ops.wheelprobe import torch_exports
    from glmcompat.readers.elf import demangle

    py = "cp" + args.python.replace(".", "").removeprefix("cp")
    plat = "manylinux_" + args.platform if not args.platform.startswith("manylinux") else args.platform
    with IndexClient(None, cache=Cache()) as index:
        a = torch_exports(args.a, index=index, cache=index.cache, python=py, platform=plat)
        b = torch_exports(args.b, index=index, cache=index.cache, python=py, platform=plat)
    only = sorted(a ^ b)
    names = demangle(only)
    print(f"torch {args.a}: {len(a)} exported names; torch {args.b}: {len(b)}; {len(only)} differ")
    real = []
    for n in only:
        side = args.a if n in a else args.b
        shown = names.get(n, n)
        per_build = bool(PER_BUILD.search(n) or PER_BUILD.search(shown))
        print(f"  only {side}: {shown}{'  (per-build name)' if per_build else ''}")
        if not per_build:
            real.append(n)
    print("equal for extensions" if not real else f"{len(real)} name(s) an extension could need differ")
    return 0 if not real else 1


if __name__ == "__main__":
    raise SystemExit(main())
