"""Record each tracked torch release's own exact pins (its METADATA Requires-Dist on triton, nvidia-*, cuda-*) as
[[release]] rows of glmcompat/matrix/data/torch-releases.toml, for the torch-pins rule (glmcompat/decide/rules/torchpins.py).

    python scripts/record_torch_pins.py > glmcompat/matrix/data/torch-releases.toml

For each release the matrix tracks (its default-wheel [[torch]] rows), reads the METADATA of the wheel a CPython 3.11
Linux x86_64 installer picks from the index (PEP 658 ``.metadata`` or a range read: the index URL comes from the
installer's configuration at run time) and keeps the exact (``==``) pins whose marker holds on Linux x86_64 with
CPython 3.11 and no extra. Nothing is written by hand: re-running the script rewrites the file."""

from __future__ import annotations

import sys

from packaging.requirements import Requirement
from packaging.version import Version

from glmcompat.edges.index import IndexClient, iter_requires_dist
from glmcompat.matrix.load import load_facts

_ENV = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "python_version": "3.11",
        "python_full_version": "3.11.9", "implementation_name": "cpython", "platform_python_implementation": "CPython",
        "os_name": "posix", "extra": ""}
_COUPLED = ("triton", "nvidia-", "cuda-", "pytorch-triton")


def pins(metadata: str) -> tuple[list[str], list[str]]:
    """(the exact coupled pins as ``name==version``, the Requires-Dist texts they come from)."""
    out, raw = [], []
    for text in iter_requires_dist(metadata):
        req = Requirement(text)
        if not req.name.lower().startswith(_COUPLED):
            continue
        if req.marker is not None and not req.marker.evaluate(_ENV):
            continue
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != "==" or "*" in specs[0].version:
            continue
        out.append(f"{req.name.lower()}=={specs[0].version}")
        raw.append(f"`{text.split(';')[0].strip()}`")
    return out, raw


def main() -> None:
    facts = load_facts()
    releases = sorted({v for t in facts.rows("torch") if t.variant is None for v in t.versions}, key=Version)
    index = IndexClient(None)
    print("# torch releases: the exact pins of each default Linux x86_64 wheel's METADATA (Requires-Dist) on the packages\n"
          "# built with it (triton, the nvidia-* CUDA libraries), read from the index by scripts/record_torch_pins.py\n"
          "# (the wheel a CPython 3.11 Linux x86_64 installer picks; markers evaluated for that machine, no extra).\n"
          "# A set that installs another version of one of these beside that torch departs from what torch was built\n"
          "# and tested with: glmcompat/decide/rules/torchpins.py. Releases without such pins are left out.\nschema = 1")
    for ver in releases:
        f = index.find_wheel("torch", ver, python="cp311", platform="manylinux_x86_64")
        got, raw = pins(index.wheel_metadata(f))
        if not got:
            print(f"torch {ver}: no exact coupled pins", file=sys.stderr)
            continue
        reqs = ", ".join(f'"{p}"' for p in got)
        print(f'\n[[release]]\npackage = "torch"\nversion = "{ver}"\nrequires = [{reqs}]\nevidence = "metadata"\n'
              f'source = "{f.filename} METADATA Requires-Dist: {"; ".join(raw)}"')
        print(f"torch {ver}: {len(got)} pins", file=sys.stderr)


if __name__ == "__main__":
    main()
