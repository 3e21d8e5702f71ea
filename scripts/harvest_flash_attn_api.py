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
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from harvest_tag_api import print_tag_rows, tags  # noqa: E402  (a sibling script: the tag walk)

OLDEST = "1.0.0"
# the attention API (functions and autograd classes), not the helpers and imports a module also binds (rearrange, the
# compiled flash_attn_cuda / flash_attn_gpu module's alias)
PUBLIC = re.compile(r"flash_attn_(?!cuda$|gpu$)\w+|FlashAttn\w+")
MODULES = {"flash_attn": "flash_attn/__init__.py", "flash_attn.flash_attn_interface": "flash_attn/flash_attn_interface.py"}


def main(argv: list[str]) -> int:
    git = argv[1]
    got = tags(git, OLDEST, prereleases=False, postreleases=True)
    print("# What flash-attn's flash_attn package and flash_attn.flash_attn_interface module define at each release tag")
    print("# (since, and until where a release dropped it), read from the Dao-AILab/flash-attention source at its tags by")
    print("# scripts/harvest_flash_attn_api.py. explain reads it to tell flash-attn too old for code that uses flash-attn 2's")
    print("# functions (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    print()
    print_tag_rows(git, got, "flash-attn", "Dao-AILab/flash-attention", list(MODULES.items()), keep=lambda n: bool(PUBLIC.fullmatch(n)),
                   script="harvest_flash_attn_api.py", tags_read="final release tag")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
