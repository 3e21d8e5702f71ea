"""Harvest the registration macros torch's C++ headers define at each release (``TORCH_LIBRARY``,
``TORCH_LIBRARY_FRAGMENT``, ``TORCH_LIBRARY_IMPL``, ``STABLE_TORCH_LIBRARY``, ...), for ``[[export]]`` rows of
``glmcompat/matrix/data/torch-macros.toml`` whose module is the header's path under torch/include (issue 38: a compiler's
"expected constructor, destructor, or type conversion before '(' token" at a line that opens with
``TORCH_LIBRARY_FRAGMENT(`` is a source written for a torch whose headers define the macro, built against one whose
headers do not: torch too old for the code being built, the release that added the macro read from the headers).

Needs the index (read at run time, as pip would: ``glmcompat.edges.index.default_index_url``); each wheel is read with
HTTP range requests (its central directory and the header members), never downloaded whole. Run:
``python scripts/harvest_torch_macros.py > glmcompat/matrix/data/torch-macros.toml``.

A macro is one a ``#define`` of the header names with TORCH_LIBRARY in it (and not a leading underscore: the headers'
helpers). The final releases from OLDEST on are read (one Linux x86_64 wheel of each); a header a release lacks defines
nothing there. A name of the oldest release read has ``since`` = that release (there or earlier).
"""

from __future__ import annotations

import re
import sys
from functools import partial
from pathlib import Path

from glmcompat.edges.index import IndexClient
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip, WheelError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harvest_exports import (  # noqa: E402  (a sibling script: the one writer of [[export]] rows and the release walk)
    export_rows, first_wheel, grouped, read_releases, releases, since_until, wheel_source)

OLDEST = "1.5.0"
# the headers an extension's registration code includes (torch/library.h; the stable ABI's torch/csrc/stable/library.h)
HEADERS = ("torch/library.h", "torch/csrc/stable/library.h")
_DEFINE = re.compile(rb"^\s*#\s*define\s+(?P<name>[A-Z][A-Z0-9_]{0,80})\b", re.M)


def read(ic: IndexClient, version: str) -> tuple[str, str, dict[str, set[str]]] | None:
    """A release's wheel file name and, per header, the TORCH_LIBRARY macros it defines; None for a release with no
    Linux x86_64 wheel of the Pythons tried."""
    wheel = first_wheel(ic, "torch", version, ("cp310", "cp38", "cp311", "cp39", "cp312", "cp37", "cp313"))
    if wheel is None:
        return None
    z = RemoteZip(HttpRangeReader(ic.client, wheel.url, name=wheel.filename, size=wheel.size))
    members = {m.name for m in z.members}
    have: dict[str, set[str]] = {}
    for header in HEADERS:
        path = f"torch/include/{header}"
        try:
            src = z.read(path) if path in members else b""
        except WheelError:
            src = b""
        have[header] = {m.group("name").decode() for m in _DEFINE.finditer(src) if b"TORCH_LIBRARY" in m.group("name")}
    return version, wheel.filename, have


def harvest(ic: IndexClient) -> list[str]:
    got = read_releases(lambda v: read(ic, v), releases(ic, "torch", OLDEST))
    lines: list[str] = []
    for header in HEADERS:
        first, gone = since_until([(version, have[header]) for version, _, have in got])
        lines += export_rows("torch", header, grouped(first, gone),
                             partial(wheel_source, f"torch/include/{header}", "harvest_torch_macros.py", "torch", got,
                                     how="its #define lines, "))
    return lines


def main() -> int:
    print("# The registration macros torch's C++ headers define at each release (since, and until where a release dropped")
    print("# one), as [[export]] rows whose module is the header's path under torch/include, from the real torch wheels,")
    print("# harvested by scripts/harvest_torch_macros.py (its docstring says how each release is read). explain reads it to")
    print("# tell torch too old for an extension source that registers its ops with a newer macro (issue 38). Generated:")
    print("# do not edit by hand.")
    print("schema = 1")
    print()
    with IndexClient() as ic:
        print("\n".join(harvest(ic)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
