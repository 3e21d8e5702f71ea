"""What every record of a ``--json`` document is made of: :class:`JsonRecord`, :class:`Schema`, the field metadata
(:data:`OMIT_EMPTY`, :data:`OMIT_NONE`, :func:`key`) and the field types several documents share.

A command builds its record and prints :meth:`JsonRecord.to_json` (``json.dumps(..., indent=2, sort_keys=True)``);
the shipped JSON Schemas in ``glmcompat/cli/schemas/`` are generated from these classes by
:mod:`glmcompat.cli.schemagen` (``python -m glmcompat.cli.schemagen``): a field's type is its schema, the
docstring under a field is its ``description``, and :class:`Schema` adds the keywords a type cannot say
(``minLength``, ``pattern``, ``enum``, ...). Plain frozen dataclasses: building and printing a record imports
nothing beyond the standard library (pydantic reads them only to write the schemas).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Annotated, Any, ClassVar


class Schema:
    """JSON Schema keywords a field adds to what its type says (``Annotated[str, Schema(minLength=1)]``); read
    through pydantic's ``__get_pydantic_json_schema__`` hook when the schemas are generated, inert otherwise."""

    __slots__ = ("keywords",)

    def __init__(self, **keywords: Any) -> None:
        self.keywords = keywords

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        s = handler(core_schema)
        s.update(self.keywords)
        return s


OMIT_EMPTY: Mapping[str, Any] = {"omit": "empty"}  # field metadata: left out of the document when empty or None
OMIT_NONE: Mapping[str, Any] = {"omit": "none"}  # field metadata: left out of the document when None (never null)
NULL_EMPTY: Mapping[str, Any] = {"omit": "null"}  # field metadata: an empty string prints as null (a str field, "" unknown)


def key(name: str) -> Mapping[str, Any]:
    """Field metadata: the document's key for a field whose name is a Python keyword (``with_`` -> ``with``)."""
    return {"key": name}


class JsonRecord:
    """A versioned JSON document or a part of one: a frozen dataclass whose fields are the document's keys."""

    # how pydantic reads the classes for the schemas: each field's docstring is its description, and a field with
    # a default is required all the same (every document carries every key but those marked OMIT_EMPTY or OMIT_NONE)
    __pydantic_config__: ClassVar[dict[str, Any]] = {"use_attribute_docstrings": True,
                                                     "json_schema_serialization_defaults_required": True}

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data: nested records as objects, tuples as lists."""
        doc: dict[str, Any] = _plain(self)
        return doc


_SCALARS = (str, int, float, bool, type(None))
_PLANS: dict[type[Any], tuple[tuple[str, str, str | None], ...]] = {}


def _plan(cls: type[Any]) -> tuple[tuple[str, str, str | None], ...]:
    """(field, key, omit) of each field of the record ``cls``, read once."""
    if cls not in _PLANS:
        _PLANS[cls] = tuple((f.name, f.metadata.get("key", f.name), f.metadata.get("omit")) for f in fields(cls))
    return _PLANS[cls]


def _plain(v: Any) -> Any:
    """``v`` as JSON data: a record as an object of its fields (under their keys, those marked left out when empty
    or None), tuples and lists as lists, mappings as objects."""
    if isinstance(v, _SCALARS):
        return v
    if isinstance(v, JsonRecord):
        doc = {}
        for name, k, omit in _plan(type(v)):
            x = getattr(v, name)
            if omit == "null":
                doc[k] = x or None
                continue
            if omit is not None and (x is None or (omit == "empty" and not x and isinstance(x, str | tuple | list | Mapping))):
                continue
            doc[k] = _plain(x)
        return doc
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    return v


# ------------------------------------------------------------------------------------------------
# Shared types
# ------------------------------------------------------------------------------------------------

Platform = Annotated[str, Schema(enum=["x86_64", "aarch64"])]
NonEmpty = Annotated[str, Schema(minLength=1)]
Count = Annotated[int, Schema(minimum=0)]
Pins = Mapping[str, NonEmpty]


__all__ = ["NULL_EMPTY", "OMIT_EMPTY", "OMIT_NONE", "Count", "JsonRecord", "NonEmpty", "Pins", "Platform", "Schema", "key"]
