"""Record the METADATA of the releases `glmcompat pip install`'s offline tests install (run by hand; needs the
package index, read from pip's and uv's configuration).

The tests serve these from a local index (tests/localindex.py) as metadata-only wheels: each carries its
release's real ``Name``, ``Version``, ``Requires-Python`` and ``Requires-Dist``, so the real uv and the real pip
resolve exactly as they would against the index, only without the payload. The releases are every package the
real uv resolves for each scenario below on Linux x86_64 (CPython 3.11), pinned by its ``uv pip compile``; the
description and the project URLs are left out (no host names are committed).

    python scripts/record_pip_guard_fixtures.py [tests/fixtures/pipguard/metadata.json]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from email.parser import HeaderParser
from pathlib import Path

# The GLM-5 incident's environment (torch 2.9.1 beside sgl-kernel 0.3.21, which declares no Requires-Dist),
# the torch the unpinned `uv pip install torchvision` moved it to, numpy (a package outside the core), and a
# kernel built against another torch (sglang-kernel 0.4.2: torch 2.11.0; its wheel declares no Requires-Dist either).
SCENARIOS = (
    ["torch==2.9.1", "torchvision==0.24.1", "sgl-kernel==0.3.21", "numpy"],
    ["torch==2.10.0", "torchvision==0.25.0"],
    ["torch==2.11.0", "torchvision==0.26.0", "sglang-kernel==0.4.2"],
)
EXCLUDE_NEWER = "2026-11-29T00:00:00Z"
KEEP = ("Metadata-Version", "Name", "Version", "Requires-Python", "Requires-Dist", "Provides-Extra")


def _compile(reqs: list[str]) -> list[tuple[str, str]]:
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "requirements.in"
        src.write_text("\n".join(reqs) + "\n")
        out = subprocess.run([uv, "pip", "compile", "-q", "--no-header", "--no-annotate", "--python-version", "3.11",
                              "--python-platform", "x86_64-manylinux_2_28", "--exclude-newer", EXCLUDE_NEWER, str(src)],
                             check=True, capture_output=True, text=True, env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    pins = []
    for line in out.stdout.splitlines():
        name, sep, version = line.strip().partition("==")
        if sep:
            pins.append((name, version))
    return pins


def _headers(text: str) -> str:
    msg = HeaderParser().parsestr(text)
    lines = [f"{k}: {v}" for k in KEEP for v in (msg.get_all(k) or [])]
    return "\n".join(lines) + "\n"


def record(out: Path) -> None:
    from glmcompat.edges.index import IndexClient

    pins = sorted({p for reqs in SCENARIOS for p in _compile(reqs)})
    data: dict[str, str] = {}
    with IndexClient() as index:
        for name, version in pins:
            wheel = index.find_wheel(name, version, python="cp311", platform="manylinux_x86_64")
            data[f"{name}=={version}"] = _headers(index.wheel_metadata(wheel))
            print(f"{name}=={version}: {wheel.filename}", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"#": "real METADATA headers (no description, no URLs) recorded by "
                               "scripts/record_pip_guard_fixtures.py", "metadata": data}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    record(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/pipguard/metadata.json"))
