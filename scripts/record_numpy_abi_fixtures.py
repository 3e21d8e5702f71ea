"""Record what real wheels' extensions name of NumPy's C API, for tests/ops/test_artifacts.py.

    python scripts/record_numpy_abi_fixtures.py > tests/fixtures/numpyabi/numexpr.json

Reads the cp311 manylinux x86_64 wheels of numexpr 2.8.8 (built against NumPy 1.x: on numpy 2 its import fails with
"numpy.core.multiarray failed to import") and 2.10.2 (built against NumPy 2) from the index by range requests (the
index URL comes from the installer's configuration at run time) and keeps, per shared object, its NUL-terminated
strings that name a ``numpy`` module, with the wheel's file name and sha256."""

from __future__ import annotations

import json
import re

from glmcompat.edges.index import IndexClient
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip

WHEELS = (("numexpr", "2.8.8"), ("numexpr", "2.10.2"))


def main() -> None:
    index = IndexClient(None)
    out = {}
    for name, ver in WHEELS:
        f = index.find_wheel(name, ver, python="cp311", platform="manylinux_x86_64")
        zf = RemoteZip(HttpRangeReader(index.client, f.url, name=f.filename, size=f.size))
        mods = {}
        for m in zf.members:
            if re.search(r"\.so(\.\d+)*$", m.name):
                data = zf.read(m)
                mods[m.name] = sorted({s.decode() for s in re.findall(rb"[\x20-\x7e]*numpy[\x20-\x7e]*(?=\x00)", data)})
        out[f"{name}=={ver}"] = {"wheel": f.filename, "sha256": f.sha256, "modules": mods}
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
