"""Record the symbol tables the offline ABI tests need (run by hand; needs the package index).

It reads the real wheels the way ``glmcompat abi`` does (HTTP range requests, the same summaries) and
writes one compact gzipped JSON file:

* ``extensions``: for each extension release, its wheel (file name, sha256) and per shared object its
  DT_NEEDED, strong and weak undefined dynamic symbols, and the defined names some module of the wheel
  needs (what a sibling library provides to another);
* ``torch``: for each torch release, its wheel, the number of names its ``torch/lib/*.so`` export, and
  those exports restricted to the union of every recorded extension's undefined names (nothing else
  can change a verdict);
* ``verdicts``: what ``glmcompat abi EXT==V --torch T`` said for each pair when recorded.

No index host is written: wheels are named by file name and sha256 only.

    python scripts/record_symbols.py [tests/data/abi/symbols.json.gz]
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path
from typing import Any

# extension pin -> the torch releases it is judged against
PAIRS: dict[str, tuple[str, ...]] = {
    "torchaudio==2.11.1": ("2.11.0", "2.13.0", "2.14.1"),
    "torchvision==0.29.2": ("2.11.0", "2.13.0", "2.14.1"),
    "vllm==0.33.0": ("2.10.0", "2.14.0"),
    "sgl-kernel==0.3.21": ("2.9.1", "2.10.0"),
    "torchvision==0.24.1": ("2.9.1", "2.10.0"),
}
PYTHON = "cp311"
PLATFORM = "manylinux_x86_64"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "abi" / "symbols.json.gz"


def verdict_json(r: Any) -> dict[str, Any]:
    """The parts of an AbiResult the tests compare (per module: needs count and missing names)."""
    return {"ok": r.ok, "wheel": r.wheel, "torch_wheel": r.torch_wheel, "torch_exports": r.torch_exports,
            "missing": [s.symbol for s in r.missing],
            "modules": {m.member: {"needs_from_torch": m.needs_from_torch, "missing": [s.symbol for s in m.missing]}
                        for m in r.modules}}


def record(out: Path) -> None:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.ops.wheelprobe import _ext_summary, _find, _Stats, _torch_summary, parse_pin, probe_abi

    cache = Cache()
    exts: dict[str, Any] = {}
    torches: dict[str, Any] = {}
    exports: dict[str, set[str]] = {}
    verdicts: dict[str, Any] = {}
    with IndexClient(cache=cache) as ic:
        for pin, torch_versions in PAIRS.items():
            pkg, ver = parse_pin(pin)
            f = _find(ic, cache, pkg, ver, PYTHON, PLATFORM)
            t0 = time.perf_counter()
            summary = _ext_summary(ic, cache, f, _Stats())
            exts[pin] = {"wheel": f.filename, "sha256": f.sha256, "modules": summary.to_json()}
            print(f"{pin}: {f.filename}, {len(summary.modules)} module(s), {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            for tv in torch_versions:
                if tv not in torches:
                    tf = _find(ic, cache, "torch", tv, PYTHON, PLATFORM)
                    t0 = time.perf_counter()
                    ts = _torch_summary(ic, cache, tf, _Stats())
                    exports[tv] = set(ts.exports)
                    torches[tv] = {"wheel": tf.filename, "sha256": tf.sha256, "exports_total": len(exports[tv]),
                                   "needed": [n for n in ts.needed if n.startswith("libcudart")]}
                    print(f"torch {tv}: {tf.filename}, {len(exports[tv])} exports, "
                          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
                r = probe_abi(pkg, ver, tv, index=ic, cache=cache, python=PYTHON, platform=PLATFORM)
                verdicts[f"{pin} --torch {tv}"] = verdict_json(r)
                print(f"  vs torch {tv}: {len(r.missing)} missing", file=sys.stderr)
    wanted: set[str] = set()
    for e in exts.values():
        for m in e["modules"].values():
            wanted |= set(m["undefined"]) | set(m.get("weak_undefined", []))
    for tv, t in torches.items():
        t["exports"] = sorted(exports[tv] & wanted)
    doc = {"version": 1, "recorded": time.strftime("%Y-%m-%d"), "python": PYTHON, "platform": PLATFORM,
           "command": "python scripts/record_symbols.py", "extensions": exts, "torch": torches,
           "verdicts": verdicts}
    raw = json.dumps(doc, indent=0, sort_keys=True).encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(raw, 9, mtime=0))
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(raw)} uncompressed)", file=sys.stderr)


if __name__ == "__main__":
    record(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT)
