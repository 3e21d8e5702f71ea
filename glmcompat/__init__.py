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

__version__ = "0.1.0"


if TYPE_CHECKING:  # pragma: no cover (the names' types are in __init__.pyi, for type checkers)
    from typing import Any

_LAZY = {  # public name -> the module (relative to the package) that defines it
    **dict.fromkeys(("CheckResult", "CoreResult", "Verdict", "check", "check_environment", "check_versions",
                     "load_matrix", "lock", "resolve_core"), "api"),
    "Matrix": "matrix.schema",
    **dict.fromkeys(("EnvironmentFailure", "GlmcompatError", "InputError", "InternalError", "LockFormatError",
                     "MatrixError", "UnsafeError"), "model.errors"),
    "Finding": "model.findings",
    **dict.fromkeys(("Machine", "Provenance"), "model.machine"),
    "SEVERITIES": "model.findings",
    "ProjectLockResult": "ops.projectlock",
}

# The public names, declared once: each name above, where it lives (glmcompat.api's ``__all__`` is this list without
# ``__version__``; it imports it from here, so the package root stays free of imports on the start-up path).
__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'glmcompat' has no attribute {name!r}")
    import importlib  # lazy: start-up path (the package root imports nothing)

    return getattr(importlib.import_module(f".{mod}", __name__), name)


def __dir__() -> list[str]:
    return sorted(__all__)
