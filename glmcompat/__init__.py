"""glmcompat: dependency-compatibility resolver and lockfile generator for GPU LLM-serving stacks.

Library API (imports are lazy so that the CLI's fast paths stay fast)::

    import glmcompat
    m = glmcompat.load_matrix()
    m.built_for("sgl-kernel", "0.3.21")      # '2.9.1'
    m.get_target("sm120").smem_per_block_optin
    result = glmcompat.lock("path/to/project", ["sm120"])   # ProjectLockResult: the core, files written, verdicts
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the warm check path ~15 ms

__version__ = "0.1.0"

__all__ = [
    "GlmcompatError",
    "InputError",
    "Matrix",
    "MatrixError",
    "ProjectLockResult",
    "UnsafeError",
    "__version__",
    "lock",
    "load_matrix",
]

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from glmcompat.matrix.schema import Matrix, load_matrix
    from glmcompat.model.errors import GlmcompatError, InputError, MatrixError, UnsafeError

_LAZY = {
    "load_matrix": "matrix.schema",
    "Matrix": "matrix.schema",
    "GlmcompatError": "model.errors",
    "InputError": "model.errors",
    "MatrixError": "model.errors",
    "UnsafeError": "model.errors",
    "lock": "ops.projectlock",
    "ProjectLockResult": "ops.projectlock",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'glmcompat' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{mod}", __name__), name)
