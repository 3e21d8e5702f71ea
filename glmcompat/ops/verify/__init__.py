"""``glmcompat verify``: prove inside the serving environment that the installed stack loads and runs.

:func:`verify` starts every probe group in its own process (:mod:`.gpuchecks`), judges the results
against the matrix and the device (:mod:`.core`, :mod:`.assemble`) and returns a versioned report (the document of
:class:`glmcompat.model.outputs.verify.VerifyOutput`, as ``--json`` prints it). This package's ``__init__`` stays
import-free: every probe process imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.ops.verify.plan import Options


def verify(options: Options | None = None) -> dict[str, Any]:
    """Run all probes; return the report as ``verify --json`` prints it (``{"version": 1, "ok": ..., "device": ...,
    "probes": [...], ...}``: :class:`glmcompat.model.outputs.verify.VerifyOutput`'s document)."""
    from glmcompat.ops.verify.core import run  # lazy: gpuchecks imports this package in the serving container
    from glmcompat.ops.verify.plan import Options  # lazy: gpuchecks imports this package in the serving container

    return run(options or Options()).to_json()
