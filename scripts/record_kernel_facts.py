"""Record the GPU-code facts the offline kernel tests need (run by hand; needs the package index).

It reads the real wheels the way ``glmcompat arch`` does (HTTP range requests) and writes two JSON files
under ``tests/data/fatbin/``:

* ``toolkits.json``: for every release of every ``[[kernel]]`` row that records a ``cuda`` (on the row's
  own platform), the CUDA release that built the first cubin of each main module (``probe_toolkit``: the
  stream stops there, a few MB per wheel), with the wheel's file name;
* ``arch-<pkg>-<version>.json``: for the wheels in ``FULL``, every module's GPU code as ``glmcompat arch``
  caches it (SASS/PTX names and counts, the toolkits of all cubins, the kernels grouped by the code they
  carry, entries not readable).

No index host is written. Each file records the bytes fetched and the seconds taken.

    python scripts/record_kernel_facts.py [--only-full] [--only-toolkits]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "fatbin"
FULL = ("vllm==0.9.1",)
PYTHON = "cp311"


def record_toolkits(out: Path) -> None:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.matrix.load import load_facts
    from glmcompat.ops.wheelprobe import probe_toolkit

    facts = load_facts()
    doc: dict[str, Any] = {"releases": {}, "bytes_fetched": 0, "seconds": 0.0}
    t0 = time.perf_counter()
    cache = Cache()
    with IndexClient(cache=cache) as ic:
        for row in facts.all_rows("kernel"):  # every platform's rows
            if row.cuda is None or row.variant:
                continue
            for v in row.versions:
                key = f"{row.package}=={v} {row.platform}"
                if key in doc["releases"]:
                    continue
                try:
                    r = probe_toolkit(row.package, v, index=ic, cache=cache, python=PYTHON,
                                      platform=f"manylinux_{row.platform}")
                except Exception as e:  # noqa: BLE001 - a release without a wheel for this Python: recorded as such
                    doc["releases"][key] = {"error": str(e).splitlines()[0][:200]}
                    print(key, "error", e, file=sys.stderr)
                    continue
                doc["releases"][key] = {"wheel": r.wheel, "modules": r.modules, "toolkits": r.toolkits}
                doc["bytes_fetched"] += r.bytes_fetched
                print(key, r.toolkits, r.bytes_fetched, r.seconds, file=sys.stderr)
    doc["seconds"] = round(time.perf_counter() - t0, 1)
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def record_full(pin: str, out: Path) -> None:
    from glmcompat.edges.index import IndexClient
    from glmcompat.ops.wheelprobe import parse_pin, probe_arch

    pkg, ver = parse_pin(pin)
    with IndexClient(cache=None) as ic:
        r = probe_arch(pkg, ver, index=ic, cache=None, python=PYTHON)
    mods = [m.cached_json() for m in r.modules]
    doc = {"package": pkg, "version": ver, "wheel": r.wheel, "platform": r.platform, "primary": r.primary,
           "bytes_fetched": r.bytes_fetched, "bytes_total": r.bytes_total, "seconds": r.seconds, "modules": mods}
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(pin, r.bytes_fetched, r.seconds, file=sys.stderr)


def main(argv: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    if "--only-full" not in argv:
        record_toolkits(OUT / "toolkits.json")
    if "--only-toolkits" not in argv:
        for pin in FULL:
            record_full(pin, OUT / f"arch-{pin.replace('==', '-')}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
