"""The package's public face, declared once: its version and where each public name lives.

A leaf (no imports): the package root names these lazily (:func:`glmcompat.__getattr__`), :mod:`glmcompat.api`
re-exports the same names, and glmcompat's own modules read the version here -- none of them imports the package
root, so no module reaches itself through the root's lazy exports.
"""

__version__ = "0.1.0"

# public name -> the module (relative to the package) that defines it
PUBLIC: dict[str, str] = {
    **dict.fromkeys(("CheckResult", "CoreResult", "Verdict", "check", "check_environment", "check_versions",
                     "load_matrix", "lock", "resolve_core"), "api"),
    "Matrix": "matrix.schema",
    **dict.fromkeys(("EnvironmentFailure", "GlmcompatError", "InputError", "InternalError", "LockFormatError",
                     "MatrixError", "UnsafeError"), "model.errors"),
    "Finding": "model.findings",
    **dict.fromkeys(("Machine", "Provenance"), "model.machine"),
    "SEVERITIES": "model.findings",
    "ProjectLockResult": "ops.projectlock",
    "__version__": "model.public",
}
