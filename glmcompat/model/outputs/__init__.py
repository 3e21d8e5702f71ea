"""The typed records of every versioned ``--json`` document: what each command prints, declared once, one module
per document so that a command loads only its own records.

:mod:`.base` holds the machinery (:class:`~.base.JsonRecord`, :class:`~.base.Schema`, the field metadata) and the
shared field types; :mod:`.common` the parts several documents share (the error document, evidence, findings,
causes); then one module per command: :mod:`.check`, :mod:`.targets`, :mod:`.explain`, :mod:`.upgrade`, :mod:`.pip`,
:mod:`.lock`, :mod:`.verify` (with :mod:`.probe`, the record of one probe), :mod:`.refresh` (``matrix refresh`` and
``matrix audit``) and :mod:`.wheels` (``abi`` and ``arch``). This package itself imports only :mod:`importlib`: import the module of the document you build
(:func:`record` finds it by the document's name).
"""

from __future__ import annotations

import importlib
from typing import Any

# The versioned documents: schema name (glmcompat/cli/schemas/NAME.schema.json) -> its record, as MODULE.RECORD (the
# module in this package). ``matrix show --json`` prints the matrix's own models (glmcompat.matrix.schema) and is not here.
DOCUMENTS: dict[str, str] = {
    "check": "check.CheckOutput",
    "targets": "targets.TargetsOutput",
    "explain": "explain.ExplainOutput",
    "upgrade": "upgrade.UpgradeOutput",
    "pip-install": "pip.PipInstallOutput",
    "lock": "lock.LockOutput",
    "verify": "verify.VerifyOutput",
    "matrix-refresh": "refresh.RefreshOutput",
    "matrix-audit": "refresh.AuditOutput",
    "abi": "wheels.AbiOutput",
    "arch": "wheels.ArchOutput",
}


def record(name: str) -> type[Any]:
    """The record of the document ``name`` (a key of :data:`DOCUMENTS`), its module imported now."""
    module, _, cls = DOCUMENTS[name].rpartition(".")
    found: type[Any] = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
    return found


def version(name: str) -> int:
    """The JSON version of the document ``name``: its record's ``version`` (the default every record carries)."""
    return int(record(name).version)


__all__ = ["DOCUMENTS", "record", "version"]
