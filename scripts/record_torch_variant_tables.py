"""Record what each tracked torch release's own source states about its CUDA-variant builds, for the variant rows
of glmcompat/matrix/data/torch.toml and tests/decide/test_rules.py.

    python scripts/record_torch_variant_tables.py > tests/fixtures/torch/variant_tables.json

For each release the matrix tracks, reads two files of its cp311 manylinux x86_64 wheel from the index by range
requests (the index URL comes from the installer's configuration at run time): ``torch/version.py`` (the tag's
commit, ``git_version``, and the wheel's own ``+cuXYZ``) and ``torch/cuda/__init__.py`` at that commit, whose
tables name the CUDA versions the release builds: ``CUDA_ARCHES_SUPPORTED`` (2.8 .. 2.10: min/max arch per CUDA
version) and ``PYTORCH_RELEASES_CODE_CC`` (2.11 on: each CUDA version's TORCH_CUDA_ARCH_LIST; from 2.13 per host
arch). The tables are Python literals, read with ``ast.literal_eval``; nothing is executed."""

from __future__ import annotations

import ast
import json
import re
import sys
from typing import Any

from glmcompat.edges.index import IndexClient
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.matrix.load import load_facts
from glmcompat.readers.wheelzip import RemoteZip


def _literal(text: str, name: str) -> Any:
    """The dict literal assigned to ``name`` (``NAME = {...}`` or ``NAME: type = {...}``), or None."""
    m = re.search(rf"^\s*{name}\s*(?::[^=\n]+)?=\s*{{", text, re.M)
    if m is None:
        return None
    start = m.end() - 1
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return _plain(ast.literal_eval(text[start:i + 1]))
    raise SystemExit(f"{name}: unterminated literal")


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (set, frozenset)):
        return sorted(v)
    return v


def main() -> None:
    facts = load_facts()
    releases = sorted({v for t in facts.rows("torch") if t.variant is None for v in t.versions},
                      key=lambda v: tuple(int(x) for x in v.split(".")))
    index = IndexClient(None)
    project = index.project("torch")
    out: dict[str, Any] = {}
    for ver in releases:
        f = next(f for f in project.files_for(ver) if "-cp311-cp311-manylinux" in f.filename and f.filename.endswith("x86_64.whl"))
        zf = RemoteZip(HttpRangeReader(index.client, f.url, name=f.filename, size=f.size))
        version_py = zf.read("torch/version.py").decode()
        init = zf.read("torch/cuda/__init__.py").decode()
        git = re.search(r"^git_version\s*=\s*'([0-9a-f]{40})'", version_py, re.M)
        label = re.search(r"^__version__\s*=\s*'[^'+]*\+([^']+)'", version_py, re.M)
        out[ver] = {"wheel": f.filename, "git_version": git.group(1) if git else None,
                    "label": label.group(1) if label else None,
                    "CUDA_ARCHES_SUPPORTED": _literal(init, "CUDA_ARCHES_SUPPORTED"),
                    "PYTORCH_RELEASES_CODE_CC": _literal(init, "PYTORCH_RELEASES_CODE_CC")}
        print(ver, out[ver]["git_version"], file=sys.stderr)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
