"""Harvest what liger-kernel's ``liger_kernel.transformers`` package and its ``liger_kernel.transformers.monkey_patch``
module define at each release tag (the ``apply_liger_kernel_to_<model>`` patch functions, added one model at a time:
``apply_liger_kernel_to_qwen2_5_vl`` first at v0.5.5, ...; the ``Liger*`` modules), for ``[[export]]`` rows of
``glmcompat/matrix/data/liger-kernel-api.toml`` (issue 38: ``cannot import name 'apply_liger_kernel_to_qwen2_5_vl' from
'liger_kernel.transformers'`` is liger-kernel too old where no release read removed the name, and a removal only where
one did).

The source is read at each release tag of the repository: ``git show <tag>:src/liger_kernel/transformers/__init__.py``
in a clone of linkedin/Liger-Kernel (the search tool's ``fetch github:linkedin/Liger-Kernel`` gives one). Run:
``python scripts/harvest_liger_kernel_api.py <git dir> > glmcompat/matrix/data/liger-kernel-api.toml``.

A name is in a module where the module's file binds it at module level (scripts/harvest_torch_api.py's ``bound``: def,
class, assignment, import, also inside ``if TYPE_CHECKING:``) or names it as a string of its lazy table: from v0.5.7 on
``__init__.py`` imports the transformers-dependent names only for type checkers and serves them from a module
``__getattr__`` (the set ``monkey_patch_symbols`` and ``__all__.extend([...])``), so those strings are names it has too.
Only public names (no leading underscore) of the tags v0.0.1 on that are final releases are read.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from harvest_tag_api import print_tag_rows, source_at, tags  # noqa: E402  (a sibling script: the tag walk)
from harvest_torch_api import bound  # noqa: E402  (a sibling script)

OLDEST = "0.0.1"
# the patch functions and the modules/losses liger-kernel exports, not the helpers a module also binds (importlib,
# TYPE_CHECKING, the transformers modules monkey_patch imports)
PUBLIC = re.compile(r"apply_liger_kernel_to_\w+|Liger\w+|AutoLigerKernel\w+|liger_\w+|is_transformers_available")
MODULES = {"liger_kernel.transformers": "src/liger_kernel/transformers/__init__.py",
           "liger_kernel.transformers.monkey_patch": "src/liger_kernel/transformers/monkey_patch.py"}


def lazy(source: bytes) -> set[str]:
    """The strings of the lazy table: each set or list literal inside a module-level ``def __getattr__`` and each
    ``__all__.extend([...])`` list."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        lists: list[ast.AST] = []
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            lists = [n for n in ast.walk(node) if isinstance(n, (ast.Set, ast.List, ast.Tuple))]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "extend" and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "__all__":
            lists = [a for a in node.args if isinstance(a, (ast.List, ast.Tuple))]
        for lit in lists:
            out.update(e.value for e in lit.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return out


def names_at(git: str, tag: str, path: str) -> set[str]:
    source = source_at(git, tag, path)
    return set() if source is None else {n for n in bound(source) | lazy(source) if not n.startswith("_")}


def main(argv: list[str]) -> int:
    git = argv[1]
    got = tags(git, OLDEST, prereleases=False, postreleases=True)
    print("# What liger-kernel's liger_kernel.transformers package and its monkey_patch module define at each release tag")
    print("# (since, and until where a release dropped it), read from the linkedin/Liger-Kernel source at its tags by")
    print("# scripts/harvest_liger_kernel_api.py. explain reads it to tell liger-kernel too old for code that imports a")
    print("# model's patch function a later release added (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    print()
    print_tag_rows(git, got, "liger-kernel", "linkedin/Liger-Kernel", list(MODULES.items()), names=names_at, keep=lambda n: bool(PUBLIC.fullmatch(n)),
                   script="harvest_liger_kernel_api.py", tags_read="final release tag")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
