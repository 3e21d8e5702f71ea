"""Errors under ``--json``: every outcome of a command that has ``--json``, errors included, is one versioned document
on stdout, with the same exit codes as without it::

    {"version": 1, "error": {"code": 2, "message": "unknown target 'sm999' ...", "file": null, "line": null}}

``version`` is the command's own JSON version (its record's ``version``, the ``const`` of its shipped schema), so a reader checks one field
before anything else; ``code`` is the exit code; ``file`` and ``line`` name the input at fault where one is. The
one-line error still goes to stderr too, for the person at the terminal. The document is the record
:class:`glmcompat.model.outputs.common.ErrorDocument`; every shipped schema accepts it
(:func:`glmcompat.cli.schemagen.with_error_form`).

Loaded only when a command fails (``glmcompat.cli`` imports it lazily).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from glmcompat.cli.streams import stdout_for
from glmcompat.model.errors import GlmcompatError, _flat
from glmcompat.model.outputs import version as record_version

# The commands (as ``glmcompat COMMAND [ACTION]`` names them) that print JSON, and their schema's name.
JSON_OUTPUTS: dict[tuple[str, ...], str] = {
    ("check",): "check", ("upgrade",): "upgrade", ("abi",): "abi", ("arch",): "arch", ("verify",): "verify",
    ("explain",): "explain", ("targets",): "targets", ("matrix", "show"): "matrix-show",
    ("matrix", "refresh"): "matrix-refresh", ("matrix", "audit"): "matrix-audit", ("lock",): "lock",
    ("pip", "install"): "pip-install",
}

def schema_name(words: Sequence[str]) -> str | None:
    """The schema of the command ``words`` (``["matrix", "show", ...]``: its command and action), or None when it
    prints no JSON."""
    if not words:
        return None
    return JSON_OUTPUTS.get(tuple(words[:2])) or JSON_OUTPUTS.get((words[0],))


def wants_json(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (a command's arguments) asks for ``--json`` (before a ``--``)."""
    for a in argv:
        if a == "--":
            return False
        if a == "--json":
            return True
    return False


def json_version(name: str) -> int:
    """The JSON version of the document ``name``: its record's ``version`` (:mod:`glmcompat.model.outputs`); for
    ``matrix show``, the matrix file's schema version."""
    if name == "matrix-show":
        from glmcompat.matrix.schema import SCHEMA_VERSION  # lazy: pydantic models, a failed `matrix show --json` only

        return SCHEMA_VERSION
    return record_version(name)


def document(name: str, code: int, message: str, file: str | None = None, line: int | None = None) -> dict[str, Any]:
    """The error document of the command whose schema is ``name``."""
    from glmcompat.model.outputs.common import ErrorDocument, ErrorInfo  # lazy: only a --json failure needs them

    info = ErrorInfo(code=int(code), message=message, file=file, line=line if line and line > 0 else None)
    return ErrorDocument(version=json_version(name), error=info).to_json()


def emit(words: Sequence[str], code: int, message: str, file: str | None = None, line: int | None = None, *,
         quiet: int = 0) -> bool:
    """Print the error document of the command ``words`` on stdout (nowhere with ``quiet`` 2, ``-qq``) when it asks
    for ``--json`` and has a schema; whether it did (never fails: a document that cannot be written leaves the
    stderr line alone)."""
    name = schema_name(words)
    if name is None or not wants_json(words[1:]):
        return False
    try:
        out = stdout_for(quiet)
        out.write(json.dumps(document(name, code, message, file, line), indent=2, sort_keys=True) + "\n")
        out.flush()
    except (OSError, ValueError, KeyError):
        return False
    return True


def parts(exc: BaseException, line: str) -> tuple[str, str | None, int | None]:
    """(message, file, line) of an exception for the document: a GlmcompatError's own message and place; an OSError's
    file; anything else the classified line."""
    if isinstance(exc, GlmcompatError):
        return _flat(exc.message, 4000), exc.path, exc.line
    if isinstance(exc, OSError) and isinstance(exc.filename, str):
        return line, exc.filename, None
    return line, None, None


__all__ = ["JSON_OUTPUTS", "document", "emit", "json_version", "parts", "schema_name", "wants_json"]
