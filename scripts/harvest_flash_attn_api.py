"""Harvest what flash-attn's ``flash_attn`` package and its ``flash_attn.flash_attn_interface`` module define at each
release tag (flash-attn 1.x: ``flash_attn_unpadded_func`` and the other unpadded functions, nothing in ``__init__``;
flash-attn 2.0 on: ``flash_attn_func``, ``flash_attn_varlen_func``, ...), for ``[[export]]`` rows of
``glmcompat/matrix/data/flash-attn-api.toml`` (issue 38: ``cannot import name 'flash_attn_varlen_func' from
'flash_attn'``, or a NameError for it where the code guarded the import, under flash-attn 1.x is flash-attn too old).

flash-attn publishes only a source distribution on the package index (its wheels are on its GitHub releases), so the
source is read at each release tag of the repository: ``git show <tag>:flash_attn/__init__.py`` in a clone of
Dao-AILab/flash-attention (the search tool's ``fetch github:Dao-AILab/flash-attention`` gives one). Run:
``python scripts/harvest_flash_attn_api.py <git dir> > glmcompat/matrix/data/flash-attn-api.toml``.

A name is in a module where the module's file binds it at module level (scripts/harvest_torch_api.py's ``bound``: def,
class, assignment, import, not inside a function or class) or lists it in ``__all__``; only public names (no leading
underscore) of the attention API (:data:`PUBLIC`) of the tags v1.0.0 on that are final releases (no beta, no fa4 tags) are read.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from functools import partial
from pathlib import Path

from packaging.version import InvalidVersion, Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harvest_exports import export_rows, since_until  # noqa: E402  (a sibling script: the one writer of [[export]] rows and the since/until walk)
from harvest_torch_api import bound  # noqa: E402  (a sibling script)

OLDEST = "1.0.0"
# the attention API (functions and autograd classes), not the helpers and imports a module also binds (rearrange, the
# compiled flash_attn_cuda / flash_attn_gpu module's alias)
PUBLIC = re.compile(r"flash_attn_(?!cuda$|gpu$)\w+|FlashAttn\w+")
MODULES = {"flash_attn": "flash_attn/__init__.py", "flash_attn.flash_attn_interface": "flash_attn/flash_attn_interface.py"}


def tags(git: str) -> list[tuple[str, Version]]:
    out = []
    for t in subprocess.run(["git", "--git-dir", git, "tag"], capture_output=True, text=True, check=True).stdout.split():
        try:
            pv = Version(t.removeprefix("v"))
        except InvalidVersion:
            continue
        if t.startswith("v") and not pv.is_prerelease and not pv.is_devrelease and pv >= Version(OLDEST):
            out.append((t, pv))
    return sorted(out, key=lambda x: x[1])


def names_at(git: str, tag: str, path: str) -> set[str]:
    r = subprocess.run(["git", "--git-dir", git, "show", f"{tag}:{path}"], capture_output=True, check=False)
    if r.returncode != 0:
        return set()
    return {n for n in bound(r.stdout) if not n.startswith("_")}


def _source(path: str, got: list[tuple[str, Version]], since: str, until: str | None) -> str:
    src = (f"Dao-AILab/flash-attention {path} at every final release tag from {got[0][0]} to {got[-1][0]} (read by "
           f"scripts/harvest_flash_attn_api.py): first at v{since}")
    if since == str(got[0][1]):
        src += " (the oldest tag read: there or earlier)"
    return src + (f", absent from v{until} on" if until else "")


def main(argv: list[str]) -> int:
    git = argv[1]
    got = tags(git)
    print("# What flash-attn's flash_attn package and flash_attn.flash_attn_interface module define at each release tag")
    print("# (since, and until where a release dropped it), read from the Dao-AILab/flash-attention source at its tags by")
    print("# scripts/harvest_flash_attn_api.py. explain reads it to tell flash-attn too old for code that uses flash-attn 2's")
    print("# functions (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    print()
    for module, path in MODULES.items():
        first, gone = since_until([(str(pv), names_at(git, tag, path)) for tag, pv in got])
        groups: dict[tuple[str, str | None], list[str]] = defaultdict(list)
        for n, since in first.items():
            if PUBLIC.fullmatch(n):
                groups[(since, gone.get(n))].append(n)
        rows = export_rows("flash-attn", module, groups, partial(_source, path, got))
        if rows:
            print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
