"""``glmcompat matrix refresh`` and ``glmcompat matrix audit``: keep the matrix current from the index.

refresh (:func:`refresh`, :mod:`.run`)
    Lists every release of every tracked package on the index (PEP 691 JSON, PEP 700 upload times; :mod:`.discover`)
    and, for each release the matrix lacks, records what it can prove from the published wheel (:mod:`.probes`):

    * its METADATA (:mod:`.metadata`): the torch requirement (a ``[[family]]`` pair, or the ``torch`` of a
      ``[[kernel]]`` row when it is an exact pin), the CUDA runtime a torch release pins, an engine release's pins
      (sglang, and vLLM besides its ``[[kernel]]`` row; sglang up to 0.4.x under its ``srt`` extra), and the floors
      an engine asserts at start-up (:mod:`.floors`);
    * the CUDA runtime of a kernel (its METADATA pin, else the libcudart major its modules link with the
      minor of the torch it pins) and of a family release (``cudart``): a kernel row without it is not written;
    * ``[[abi_probe]]`` rows against the torch releases in its window (the torch its METADATA pins
      exactly, else the torch releases uploaded within :data:`WINDOW_DAYS` days before it that its
      requirement admits, and for a range the oldest release it admits and the newest of each admitted
      series: a probe that contradicts a permissive range is what the range hides);
    * ``[[arch_probe]]`` rows (the GPU code of its main modules), copied into the kernel / torch row.

    Each platform is its own listing: a release is lacking on aarch64 when it has an aarch64 wheel and the
    matrix no aarch64 row of it (for torch and the kernels the matrix holds aarch64 rows of); its rows are
    read from the aarch64 wheels, carry ``platform = "aarch64"`` and go to the file of the aarch64 rows.

    Rows are complete or absent: a row is written only when every field it needs is proven, each row
    is validated by the matrix schema, the whole new matrix is loaded before any file is replaced,
    and files are replaced atomically (:mod:`.apply`, :mod:`glmcompat.matrix.curate`). What could not be proven is
    said, per release. Rows go after the last row of their table (the diff shows only added lines). The
    ``[[model]]`` rows are updated in place from the newest transformers, sglang and vLLM releases (:mod:`.models`).

    Each release's outcome is journaled in glmcompat's cache directory, keyed by the index, the
    release's files (name, sha256, yanked) and :data:`REFRESH_VERSION`, so an interrupted run
    continues where it stopped; probes are cached by the wheels' sha256. A second run finds nothing
    new to write. Downloads share one HTTP connection pool of ``jobs`` connections (default 4).

audit (:func:`audit`, :mod:`.auditor`)
    Re-derives every machine-checkable row from the wheels of its own platform and reports drift.

The command line (``glmcompat/cli/commands/matrix.py``) parses the options and calls :func:`make_index`,
:func:`refresh` / :func:`audit` and :func:`render_refresh` / :func:`render_audit`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glmcompat.ops.refresh.apply import target_file, with_package_keys
    from glmcompat.ops.refresh.auditor import CUBIN_CUDA, Auditor, AuditReport, Check, audit, audit_checks, render_audit
    from glmcompat.ops.refresh.common import (
        bounded_client,
        group_files,
        make_index,
        matrix_files,
        pick_wheel,
    )
    from glmcompat.ops.refresh.discover import Candidate, Coverage, Listing, list_lacking, tracked_packages
    from glmcompat.ops.refresh.floors import ENGINE_FLOORS, engine_floors, floor_note
    from glmcompat.ops.refresh.metadata import (
        cuda_of,
        exact_pin,
        extra_closure,
        release_pins,
        release_requires,
        requirements,
        torch_requirement,
    )
    from glmcompat.ops.refresh.models import MODEL_PACKAGES, ModelUpdate, refresh_models
    from glmcompat.ops.refresh.options import DEFAULT_JOBS
    from glmcompat.ops.refresh.probes import REFRESH_VERSION, WINDOW_DAYS, Refresher, ReleaseOutcome
    from glmcompat.ops.refresh.run import RefreshReport, refresh, render_refresh

# the module of this package that declares each name. They are loaded on first use (PEP 562): the command line's
# parser needs only DEFAULT_JOBS (:mod:`.options`), and importing the probes would import the matrix schema and pydantic.
_MODULES: dict[str, tuple[str, ...]] = {
    "apply": ("target_file", "with_package_keys",),
    "auditor": ("CUBIN_CUDA", "AuditReport", "Auditor", "Check", "audit", "audit_checks", "render_audit",),
    "common": ("bounded_client", "group_files", "make_index", "matrix_files", "pick_wheel",),
    "discover": ("Candidate", "Coverage", "Listing", "list_lacking", "tracked_packages",),
    "floors": ("ENGINE_FLOORS", "engine_floors", "floor_note",),
    "metadata": ("cuda_of", "exact_pin", "extra_closure", "release_pins", "release_requires", "requirements", "torch_requirement",),
    "options": ("DEFAULT_JOBS",),
    "models": ("MODEL_PACKAGES", "ModelUpdate", "refresh_models",),
    "probes": ("REFRESH_VERSION", "WINDOW_DAYS", "ReleaseOutcome", "Refresher",),
    "run": ("RefreshReport", "refresh", "render_refresh",),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}
__all__ = [
    "AuditReport", "Auditor", "CUBIN_CUDA", "Candidate", "Check", "Coverage", "DEFAULT_JOBS", "ENGINE_FLOORS",
    "Listing", "MODEL_PACKAGES", "ModelUpdate", "REFRESH_VERSION", "RefreshReport", "Refresher", "ReleaseOutcome",
    "WINDOW_DAYS", "audit", "audit_checks", "bounded_client", "cuda_of", "engine_floors",
    "exact_pin", "extra_closure", "floor_note", "group_files", "list_lacking", "make_index", "matrix_files",
    "pick_wheel", "refresh", "refresh_models", "release_pins", "release_requires", "render_audit", "render_refresh",
    "requirements", "target_file", "torch_requirement", "tracked_packages", "with_package_keys",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
