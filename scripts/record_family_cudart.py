"""Record the CUDA runtime each torchvision / torchaudio release's index wheel links (DT_NEEDED libcudart.so.N of
its shared objects), for the `cudart` maps of the [[family]] rows in glmcompat/matrix/data/torch.toml.

    python scripts/record_family_cudart.py [torchvision|torchaudio ...]

Reads only the ELF tables at the start of each module (range requests; the index URL comes from the installer's
configuration at run time). Prints one TOML inline table per package: release -> runtime major (0: no module
links libcudart, a build whose CUDA code, if any, comes through torch)."""

from __future__ import annotations

import re
import sys

from glmcompat.edges.cache import Cache
from glmcompat.edges.index import IndexClient
from glmcompat.matrix.load import load_facts
from glmcompat.ops.wheelprobe import _ext_summary, _find, _Stats


def cudart(index: IndexClient, cache: Cache, name: str, version: str) -> tuple[int, str]:
    f = _find(index, cache, name, version, "cp311", "manylinux_x86_64")
    summary = _ext_summary(index, cache, f, _Stats())
    majors = {int(m.group(1)) for mod in summary.modules.values() for lib in mod.needed
              if (m := re.fullmatch(r"libcudart\.so\.(\d+)", lib))}
    if len(majors) > 1:
        raise SystemExit(f"{f.filename}: modules link several CUDA runtimes {sorted(majors)}")
    return (majors.pop() if majors else 0), f.filename


def main(argv: list[str]) -> None:
    facts = load_facts()
    cache = Cache()
    index = IndexClient(None, cache=cache)
    for name in argv or ["torchvision", "torchaudio"]:
        releases = sorted({v for f in facts.rows("family") if f.package == name for v in f.pairs},
                          key=lambda v: tuple(int(x) for x in v.split(".")))
        got = {}
        for v in releases:
            major, wheel = cudart(index, cache, name, v)
            got[v] = major
            print(f"# {wheel}: libcudart.so.{major}" if major else f"# {wheel}: no libcudart", file=sys.stderr)
        print(f"{name}: cudart = {{ " + ", ".join(f'"{v}" = {m}' for v, m in got.items()) + " }")


if __name__ == "__main__":
    main(sys.argv[1:])
