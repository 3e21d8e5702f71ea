"""Record the byte ranges glmcompat reads of two real wheels too big to read whole, for tests/ops/test_bigwheels.py
(needs the index; run: ``python scripts/record_big_wheel_ranges.py``).

* jaxlib 0.7.1 (cp311, x86_64): its ``jaxlib/libjax_common.so`` (336 MB inflated, 80 MB deflated; lld put the
  section-name table and ``.dynamic`` behind a 105 MB ``.strtab``). Read within the byte budget: its symbol tables, its
  section headers, its DT_NEEDED from ``.dynstr``. The truth it is checked against is read here from the whole member
  (downloaded once, then dropped): its DT_NEEDED from ``.dynamic``, its undefined symbols.
* tensorflow 2.19.0 (cp311, x86_64): its ``tensorflow/libtensorflow_cc.so.2`` (1.2 GB inflated), whose symbol tables
  alone lie beyond the budget: the ranges that decide so.

Each fixture keeps the wheel's name, size and sha256 (from the index), the spans read (offset, bytes) and what the
reader made of them, gzipped: some hundred KB, never the wheel."""

from __future__ import annotations

import base64
import gzip
import json
import sys
from pathlib import Path

from glmcompat.edges.index import IndexClient
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.ops.wheelprobe import summarise_ext
from glmcompat.readers.elf import BytesView, parse_elf
from glmcompat.readers.wheelzip import RemoteZip

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "bigwheels"
WHEELS = [("jaxlib", "0.7.1", "jaxlib/libjax_common.so", True),
          ("tensorflow", "2.19.0", "tensorflow/libtensorflow_cc.so.2", False)]


class Recording(HttpRangeReader):
    """A range reader that keeps every span it fetched."""

    spans: list[tuple[int, bytes]]

    def _get(self, offset: int | None, length: int) -> bytes:
        data = super()._get(offset, length)
        start = offset if offset is not None else self.size - len(data)
        self.spans.append((start, data))
        return data


def record(ic: IndexClient, name: str, version: str, member: str, truth: bool) -> dict[str, object]:
    f = ic.find_wheel(name, version, python="cp311", platform="manylinux_x86_64")
    r = Recording(ic.client, f.url, name=f.filename, size=f.size)
    r.spans = []
    zf = RemoteZip(r)
    skipped: dict[str, str] = {}
    ext = summarise_ext(zf, lambda n: n == member, skipped)
    doc: dict[str, object] = {
        "filename": f.filename, "size": f.size, "sha256": f.sha256, "member": member,
        "bytes_fetched": r.bytes_fetched, "skipped": skipped,
        "read": {k: {"needed": list(v.needed), "undefined": len(v.undefined)} for k, v in ext.modules.items()},
        "spans": [[off, base64.b64encode(data).decode()] for off, data in sorted(r.spans)]}
    if truth:  # the whole member, once: what .dynamic names, what .dynsym leaves undefined
        whole = HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size)
        data = RemoteZip(whole).read(member, limit=1 << 30)
        info = parse_elf(BytesView(data, member), member)
        doc["truth"] = {"needed": list(info.needed), "soname": info.soname, "undefined": len(info.undefined),
                        "source": f"DT_NEEDED of the whole {member} ({len(data)} bytes) of {f.filename}"}
    return doc


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with IndexClient(None) as ic:
        for name, version, member, truth in WHEELS:
            doc = record(ic, name, version, member, truth)
            path = OUT / f"{name}-{version}.ranges.json.gz"
            path.write_bytes(gzip.compress(json.dumps(doc, indent=0).encode(), mtime=0))
            print(f"{path.name}: {doc['bytes_fetched']} of {doc['size']} bytes read "
                  f"({100 * int(str(doc['bytes_fetched'])) / int(str(doc['size'])):.2f}%), {path.stat().st_size} bytes kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
