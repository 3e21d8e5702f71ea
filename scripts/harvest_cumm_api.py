"""Harvest what the modules of cumm that spconv imports from (``cumm.conv.main``, ``cumm.conv.bases``,
``cumm.gemm.main``, ...) define at each release, for ``[[export]]`` rows of ``glmcompat/matrix/data/cumm-api.toml``
(issue 38: ``ImportError: cannot import name 'ConvFwdAndBwdInput' from 'cumm.conv.main'`` raised in spconv's own frame
is cumm too old for that spconv where the name is newer than the cumm installed, and cumm too new where a release
removed it: the direction is read from the wheels, never guessed).

spconv 2.x (spconv, spconv-cuXXX) requires cumm of its own CUDA flavour (cumm, cumm-cuXXX: one source, the same pure
Python modules, built per CUDA); the CPU package ``cumm``'s wheels are read, since every release of the flavours has one.
Needs the index (read at run time, as pip would: ``glmcompat.edges.index.default_index_url``); each wheel is read with
HTTP range requests (its central directory and the few ``.py`` members of :data:`MODULES`), never downloaded whole.
Run: ``python scripts/harvest_cumm_api.py > glmcompat/matrix/data/cumm-api.toml``.

A name is in a module where the module's file binds it at module level (scripts/harvest_torch_api.py's ``bound``: def,
class, assignment, import; not inside a function or class) or lists it in ``__all__``; only public names (no leading
underscore) are kept. A name of the oldest release read has ``since`` = that release (there or earlier).
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from glmcompat.edges.index import IndexClient
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip, WheelError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harvest_exports import (  # noqa: E402  (a sibling script: the one writer of [[export]] rows and the release walk)
    export_rows, first_wheel, grouped, read_releases, releases, since_until, wheel_source)
from harvest_torch_api import bound, module_file  # noqa: E402  (a sibling script)

PACKAGE = "cumm"
OLDEST = "0.1.0"
# the pure-Python modules of cumm that spconv 2.x imports names from (traveller59/spconv spconv/core.py,
# spconv/algo.py, spconv/pytorch/*.py, spconv/csrc/**.py: `from cumm.conv.main import ...`, `from cumm.gemm.main import
# ...`, `from cumm.conv.bases import ...`, `from cumm.common import ...`, `from cumm.constants import ...`)
MODULES = ("cumm.conv.main", "cumm.conv.bases", "cumm.conv.params", "cumm.gemm.main", "cumm.gemm.algospec.core",
           "cumm.common", "cumm.constants")


def read(ic: IndexClient, version: str) -> tuple[str, str, dict[str, set[str] | None]] | None:
    """A release's wheel file name and, per module, the public names it binds (a module the wheel lacks: None); None
    for a release with no Linux x86_64 wheel (cumm 0.1.0 .. 0.1.x shipped a source distribution only: not read)."""
    wheel = first_wheel(ic, PACKAGE, version, ("cp310", "cp39", "cp38", "cp311", "cp37", "cp36"))
    if wheel is None:
        return None
    z = RemoteZip(HttpRangeReader(ic.client, wheel.url, name=wheel.filename, size=wheel.size))
    members = {m.name for m in z.members}
    have: dict[str, set[str] | None] = {}
    for module in MODULES:
        path = module_file(module, members)
        if path is None:
            have[module] = None
            continue
        try:
            have[module] = {n for n in bound(z.read(path)) if not n.startswith("_")}
        except (SyntaxError, WheelError):
            have[module] = None
    return version, wheel.filename, have


def harvest(ic: IndexClient) -> list[str]:
    got = read_releases(lambda v: read(ic, v), releases(ic, PACKAGE, OLDEST))
    lines: list[str] = []
    for module in MODULES:
        told = [(version, have[module]) for version, _, have in got if have[module] is not None]
        if not told:
            continue
        first, gone = since_until([(version, names_had) for version, names_had in told if names_had is not None])
        lines += export_rows(PACKAGE, module, grouped(first, gone),
                             partial(wheel_source, f"{module.replace('.', '/')}.py", "harvest_cumm_api.py", PACKAGE, got))
    return lines


def main() -> int:
    print("# What the modules of cumm that spconv imports from define at each release (since, and until where a release")
    print("# dropped it), from the real cumm wheels' .py files, harvested by scripts/harvest_cumm_api.py (its docstring")
    print("# says how each release is read). explain reads it to tell cumm too old (or too new) for the spconv whose own")
    print("# frame fails on the name (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    print()
    with IndexClient() as ic:
        print("\n".join(harvest(ic)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
