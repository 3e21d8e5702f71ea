"""glmcompat: dependency-compatibility resolver and lockfile generator for GPU LLM-serving stacks.

Library API (:mod:`glmcompat.api`, documented in docs/api.md; imports are lazy so that the CLI's fast paths stay
fast)::

    import glmcompat
    glmcompat.check("uv.lock", target="sm120").ok                               # False: see .findings
    glmcompat.check_versions({"torch": "2.10.0", "sgl-kernel": "0.3.21"}, "sm120").errors
    glmcompat.resolve_core(["sgl-kernel==0.3.21"], "sm120").pins                # {'torch': '2.9.1', ...}
    glmcompat.lock("path/to/project", "sm120", dry_run=True).diff
    glmcompat.load_matrix().built_for("sgl-kernel", "0.3.21")                   # '2.9.1'
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the warm check path ~15 ms

if TYPE_CHECKING:  # pragma: no cover (the names' types are in __init__.pyi, for type checkers)
    from typing import Any


def __getattr__(name: str) -> Any:
    """The public names (``__all__`` and ``__version__`` among them), each imported from its module when first asked
    for: the table is :data:`glmcompat.model.public.PUBLIC`, a leaf, so the package root imports nothing on the
    start-up path and no module of the package imports the root."""
    from glmcompat.model.public import PUBLIC  # lazy: start-up path (the package root imports nothing)

    if name == "__all__":
        return sorted(PUBLIC)
    mod = PUBLIC.get(name)
    if mod is None:
        raise AttributeError(f"module 'glmcompat' has no attribute {name!r}")
    import importlib  # lazy: start-up path (the package root imports nothing)

    return getattr(importlib.import_module(f".{mod}", __name__), name)


def __dir__() -> list[str]:
    from glmcompat.model.public import PUBLIC  # lazy: start-up path (the package root imports nothing)

    return sorted(PUBLIC)
