"""The shipped JSON Schemas of the ``--json`` outputs (``glmcompat/cli/schemas/*.schema.json``), generated from the
typed records of :mod:`glmcompat.model.outputs` (and ``matrix show``'s from the matrix's own models)::

    python -m glmcompat.cli.schemagen           # write every generated schema
    python -m glmcompat.cli.schemagen --check   # exit 1 naming each shipped file that differs from what it writes

pydantic reads each record (``TypeAdapter(...).json_schema(mode="serialization")``: a field's type, its docstring
as the description, the keywords of :class:`glmcompat.model.outputs.base.Schema`); the result is post-processed to the
strictness every shipped schema has: draft 2020-12 ``$schema``, an ``$id``, no ``title``/``default`` noise, every
object with named fields closed (``additionalProperties: false``), every field required but those a document leaves
out when empty, the ``version`` const, and the error form (:func:`with_error_form`) every command may print instead.

Only the tests and a developer run this module (it imports pydantic); the commands never do.
"""

from __future__ import annotations

import json
import sys
import typing
from collections.abc import Iterator, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from glmcompat.cli.jsonerrors import JSON_OUTPUTS
from glmcompat.matrix.schema import SCHEMA_VERSION, TABLES, matrix_json_schema
from glmcompat.model.outputs import DOCUMENTS, record
from glmcompat.model.outputs.base import JsonRecord
from glmcompat.model.outputs.common import ErrorInfo

SCHEMAS = Path(__file__).resolve().parent / "schemas"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

# schema name -> the command line it documents: the command of glmcompat.cli.jsonerrors.JSON_OUTPUTS that prints it
COMMANDS: dict[str, str] = {name: f"glmcompat {' '.join(words)} --json" for words, name in JSON_OUTPUTS.items()}
COMMANDS["lock"] += " (project, requirements and stack modes)"
# schema name -> (record, the command line it documents)
GENERATED: dict[str, tuple[type[JsonRecord], str]] = {name: (record(name), COMMANDS[name]) for name in DOCUMENTS}

ERROR_NOTE = 'On failure, {"version", "error"} alone: the exit code, the message, and the file and line at fault.'


def _records(cls: type[Any]) -> Iterator[type[Any]]:
    """``cls`` and every record class its fields name (through tuples, mappings, unions, Annotated)."""
    seen: set[type[Any]] = set()
    todo: list[Any] = [cls]
    while todo:
        t = todo.pop()
        if isinstance(t, type) and is_dataclass(t):
            if t in seen:
                continue
            seen.add(t)
            yield t
            todo.extend(typing.get_type_hints(t, include_extras=True).values())
        else:
            todo.extend(typing.get_args(t))


def _nullable(d: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, {"type": "null"}]}`` as X with ``"null"`` among its types, where X is one plain type."""
    any_of = d.get("anyOf")
    if not (isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of):
        return d
    other = next(x for x in any_of if x != {"type": "null"})
    if not isinstance(other.get("type"), str) or "const" in other:
        return d
    merged = {**{k: v for k, v in d.items() if k != "anyOf"}, **other, "type": [other["type"], "null"]}
    if "enum" in merged:
        merged["enum"] = [*merged["enum"], None]
    return merged


def _tidy(node: Any) -> Any:
    """Without pydantic's ``title`` and ``default``; a nullable plain type as a list of types; every object with
    named fields closed."""
    if isinstance(node, dict):
        d = _nullable({k: _tidy(v) for k, v in node.items() if k not in ("title", "default")})
        if isinstance(d.get("description"), str):  # a docstring's lines as one line
            d["description"] = " ".join(d["description"].split())
        if "properties" in d and d.get("type") == "object":
            d.setdefault("additionalProperties", False)
        # the properties themselves are names, not keywords: tidy their values only
        if "properties" in node:
            d["properties"] = {k: _tidy(v) for k, v in node["properties"].items()}
        return d
    if isinstance(node, list):
        return [_tidy(v) for v in node]
    return node


def _not_null(prop: dict[str, Any]) -> dict[str, Any]:
    """The schema ``prop`` of an ``X | None`` field without its null: the field is left out instead."""
    branches = [x for x in prop.get("anyOf", ()) if x != {"type": "null"}]
    if len(branches) == 1:
        return {**{k: v for k, v in prop.items() if k != "anyOf"}, **branches[0]}
    return prop


def _keys(schema: dict[str, Any], cls: type[Any]) -> None:
    """The document's own keys: a field named otherwise (``key``) under its key; one a document leaves out when empty
    (``OMIT_EMPTY``) not required."""
    for rec in _records(cls):
        node = schema if rec is cls else schema["$defs"][rec.__name__]
        for f in fields(rec):
            if f.metadata.get("omit") in ("empty", "none"):
                node["required"] = [r for r in node["required"] if r != f.name]
            if f.metadata.get("omit") == "none":  # absent, never null
                node["properties"][f.name] = _not_null(node["properties"][f.name])
            if "key" in f.metadata:
                k = f.metadata["key"]
                node["properties"] = {k if n == f.name else n: v for n, v in node["properties"].items()}
                node["required"] = [k if r == f.name else r for r in node["required"]]


def record_schema(cls: type[Any]) -> dict[str, Any]:
    """The tidied serialisation schema of the record ``cls`` (its $defs included)."""
    s: dict[str, Any] = TypeAdapter(cls).json_schema(mode="serialization")
    _keys(s, cls)
    tidy: dict[str, Any] = _tidy(s)
    return tidy


def error_def() -> dict[str, Any]:
    s = record_schema(ErrorInfo)
    s.pop("$defs", None)
    return s


def with_error_form(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a command's success form) accepting the error document too: one of the success form (its required
    fields, and no ``error`` object) or ``{"version", "error"}`` alone. A success form that has an ``error`` field
    of its own (``lock``'s: why no safe lock exists, or null) keeps it."""
    s = dict(schema)
    if "oneOf" in s:
        return s  # already has it
    props = dict(s["properties"])
    required = list(s["required"])
    ref = {"$ref": "#/$defs/error"}
    if "error" in props:
        own = props["error"]
        props["error"] = {"anyOf": [own, ref]}
        success: dict[str, Any] = {"required": required, "properties": {"error": own}}
    else:
        props["error"] = ref
        success = {"required": required, "not": {"required": ["error"]}}
    s["properties"] = props
    s["required"] = ["version"]
    s["oneOf"] = [success, {"required": ["version", "error"], "maxProperties": 2, "properties": {"error": ref}}]
    s["$defs"] = {**s.get("$defs", {}), "error": error_def()}
    s["description"] = (s.get("description", "") + " " + ERROR_NOTE).strip()
    return s


def command_schema(name: str) -> dict[str, Any]:
    """The shipped schema ``name`` as generated now."""
    if name == "matrix-show":
        return matrix_show_schema()
    cls, title = GENERATED[name]
    body = record_schema(cls)
    version = body["properties"]["version"]["const"]
    doc = " ".join((cls.__doc__ or "").split())
    head: dict[str, Any] = {"$schema": DRAFT, "$id": f"urn:glmcompat:cli:{name}", "title": title,
                            "description": f"{doc.removesuffix('.')} (version {version})."}
    body.pop("description", None)
    return with_error_form({**head, **body})


def matrix_show_schema() -> dict[str, Any]:
    """The schema of ``matrix show --json`` from the matrix file's own (pydantic) schema: every table present,
    ``version`` where a file has ``schema``."""
    base = matrix_json_schema()
    props: dict[str, Any] = {"version": {"const": SCHEMA_VERSION, "type": "integer"}}
    for t in TABLES:
        p = dict(base["properties"][t])
        p.pop("default", None)
        props[t] = p
    return with_error_form({
        "$schema": DRAFT,
        "$id": "urn:glmcompat:cli:matrix-show",
        "title": COMMANDS["matrix-show"],
        "description": f"The whole matrix, every table's rows as their models dump them (version {SCHEMA_VERSION}).",
        "type": "object",
        "properties": props,
        "required": ["version", *TABLES],
        "additionalProperties": False,
        "$defs": base["$defs"],
    })


def names() -> list[str]:
    """The schemas this module writes."""
    return sorted([*GENERATED, "matrix-show"])


def text(name: str) -> str:
    return json.dumps(command_schema(name), indent=2) + "\n"


def stale() -> list[str]:
    """The generated schemas whose shipped file differs from what this module writes now."""
    return [n for n in names() if not (SCHEMAS / f"{n}.schema.json").is_file()
            or (SCHEMAS / f"{n}.schema.json").read_text(encoding="utf-8") != text(n)]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--check"]:
        bad = stale()
        for n in bad:
            print(f"glmcompat/cli/schemas/{n}.schema.json is stale: run `python -m glmcompat.cli.schemagen`",
                  file=sys.stderr)
        return 1 if bad else 0
    if args:
        print("usage: python -m glmcompat.cli.schemagen [--check]", file=sys.stderr)
        return 2
    for n in names():
        path = SCHEMAS / f"{n}.schema.json"
        new = text(n)
        if not path.is_file() or path.read_text(encoding="utf-8") != new:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
