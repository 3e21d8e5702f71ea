"""Record the part of sglang's engine.py that asserts its floors into tests/fixtures/floors/ (needs the index).

For each release below it reads ``sglang/srt/entrypoints/engine.py`` out of the published wheel by range requests
(as ``matrix refresh`` does) and keeps the lines from the version-check guard to the end of the last
``assert_pkg_version(...)`` call, so the offline tests run :func:`glmcompat.ops.refresh.floors.engine_floors` on real text:
``python scripts/record_floor_fixtures.py``.
"""

from __future__ import annotations

import json
import os
import sys

RELEASES = ("0.5.9", "0.5.23")
MEMBER = "sglang/srt/entrypoints/engine.py"


def main() -> int:
    from glmcompat.edges.index import IndexClient
    from scripts._recording import read_member, wheel

    out = []
    with IndexClient() as ic:
        for version in RELEASES:
            f = wheel(ic, "sglang", version)
            text, fetched = read_member(ic, f, MEMBER)
            lines = text.splitlines()
            first = next(i for i, ln in enumerate(lines) if "SKIP_SGL_KERNEL_VERSION_CHECK" in ln)
            last = max(i for i, ln in enumerate(lines) if "assert_pkg_version(" in ln)
            end = next(i for i in range(last, len(lines)) if lines[i].strip() == ")")
            out.append({"package": "sglang", "version": version, "wheel": f.filename, "sha256": f.sha256,
                        "member": MEMBER, "lines": [first + 1, end + 1], "bytes_fetched": fetched,
                        "text": "\n".join(lines[first:end + 1]) + "\n"})
            print(f"{f.filename} {MEMBER}: lines {first + 1}-{end + 1}, {fetched} bytes read", file=sys.stderr)
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "floors", "engine.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
