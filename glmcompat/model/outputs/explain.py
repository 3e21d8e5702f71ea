"""``glmcompat explain --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from glmcompat.model.findings import CHECK_RULES
from glmcompat.model.outputs.base import (
    NULL_EMPTY,
    OMIT_EMPTY,
    JsonRecord,
    NonEmpty,
    Schema,
    key,
)

OrNull = Annotated[str, Schema(type=["string", "null"])]  # "" in the domain, null in the document
CauseId = Annotated[str, Schema(type=["string", "null"], enum=[*CHECK_RULES, None])]  # a check rule's id, or null


@dataclass(frozen=True)
class SignatureHit(JsonRecord):
    """One known failure signature found in the log: where first, how often, what it means and one remedy."""

    # The domain's record and the document's at once (glmcompat.model.signatures.Hit is this class). ``package`` and
    # ``version`` are "" where the log names none (null in the document); ``cause`` and ``remedy`` start as the signature
    # row's and are rebuilt from what the log shows by glmcompat.decide.diagnose.diagnose.
    id: NonEmpty
    cause: NonEmpty
    remedy: NonEmpty
    text: str = field(metadata=key("match"))
    """the matched text of the first match"""
    line: Annotated[int, Schema(minimum=1)] = 0
    """the 1-based line of the first match"""
    count: Annotated[int, Schema(minimum=1)] = 1
    groups: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    package: OrNull = field(default="", metadata=NULL_EMPTY)
    """the package the log blames (from its library path, module, operator namespace or traceback); null when it
    names none"""
    version: OrNull = field(default="", metadata=NULL_EMPTY)
    """that package's version where the log prints it"""
    rule: CauseId = field(default="", metadata=NULL_EMPTY)
    """the cause's id: the check rule that reports the same break (glmcompat.model.causes.CAUSE_OF), so a log's
    diagnosis and a lock's verdict compare; null where the check has no counterpart"""
    also: Mapping[str, tuple[str, ...]] = field(default_factory=dict, metadata=OMIT_EMPTY)
    """for a group the signature reads from every match, not the first alone (the loader prints a line per missing
    symbol version: glmcompat.model.signatures.COLLECTED_GROUPS), the values later matches name that ``groups`` does
    not, in the log's order; absent where none adds one"""
    family: OrNull = field(default="", metadata=NULL_EMPTY)
    """the more general cause this one is always a case of (its signature row's ``family``: no-kernel-image for
    torch-arch-unsupported), a signature id; null where it declares none"""


@dataclass(frozen=True)
class OtherCauseHit(JsonRecord):
    """A cause outside packaging and compatibility that the log shows (the compiler killed for memory, a misspelled
    LD_LIBRARY_PATH, an index pip ignored: glmcompat/matrix/data/other-causes.toml): explain names no signature for the
    failure it explains, and says what the log shows and the usual remedy."""

    id: NonEmpty
    shows: NonEmpty
    """what the log shows, in the words of the row that read it, filled with what the line names"""
    remedy: NonEmpty
    text: str = field(metadata=key("match"))
    """the matched text of the first line that shows it"""
    line: Annotated[int, Schema(minimum=1)] = 0
    """the 1-based line of that match"""
    source: str = ""


@dataclass(frozen=True, kw_only=True)
class ExplainOutput(JsonRecord):
    """Known failure signatures found in a server log, each with its cause and remedy."""

    version: Literal[1] = 1
    log: NonEmpty
    found: bool
    signatures: tuple[SignatureHit, ...]
    others: tuple[OtherCauseHit, ...] = field(default=(), metadata=OMIT_EMPTY)
    """the causes outside packaging and compatibility the log shows, each with the usual remedy (no signature is
    named for what they explain); absent where the log shows none"""


__all__ = ["ExplainOutput", "OtherCauseHit", "SignatureHit"]
