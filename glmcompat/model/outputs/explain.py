"""``glmcompat explain --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal, Protocol

from glmcompat.model.outputs.base import (
    JsonRecord,
    NonEmpty,
    Schema,
)


class HitParts(Protocol):
    """What a hit's record reads of it (glmcompat.model.signatures.Hit, which prints through the record)."""

    @property
    def id(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def groups(self) -> Mapping[str, str]: ...
    @property
    def cause(self) -> str: ...
    @property
    def remedy(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def package(self) -> str: ...
    @property
    def version(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class SignatureHitDoc(JsonRecord):
    """One known failure signature found in the log."""

    id: NonEmpty
    line: Annotated[int, Schema(minimum=1)]
    """the 1-based line of the first match"""
    count: Annotated[int, Schema(minimum=1)]
    match: str
    """the matched text of the first match"""
    groups: Mapping[str, str | None]
    cause: NonEmpty
    remedy: NonEmpty
    source: str
    package: str | None
    """the package the log blames (from its library path, module, operator namespace or traceback); null when it
    names none"""
    version: str | None
    """that package's version where the log prints it"""

    @classmethod
    def of(cls, h: HitParts) -> SignatureHitDoc:
        return cls(id=h.id, line=h.line, count=h.count, match=h.text, groups=dict(h.groups), cause=h.cause,
                   remedy=h.remedy, source=h.source, package=h.package or None, version=h.version or None)


@dataclass(frozen=True, kw_only=True)
class ExplainOutput(JsonRecord):
    """Known failure signatures found in a server log, each with its cause and remedy."""

    version: Literal[1] = 1
    log: NonEmpty
    found: bool
    signatures: tuple[SignatureHitDoc, ...]


__all__ = ["ExplainOutput", "HitParts", "SignatureHitDoc"]
