"""The typed records of every versioned ``--json`` document: what each command prints, declared once.

A command builds its record and prints :meth:`JsonRecord.to_json` (``json.dumps(..., indent=2, sort_keys=True)``);
the shipped JSON Schemas in ``glmcompat/cli/schemas/`` are generated from these classes by
:mod:`glmcompat.cli.schemagen` (``python -m glmcompat.cli.schemagen``): a field's type is its schema, the
docstring under a field is its ``description``, and :class:`Schema` adds the keywords a type cannot say
(``minLength``, ``pattern``, ``enum``, ...). Plain frozen dataclasses: building and printing a record imports
nothing beyond the standard library (pydantic reads them only to write the schemas).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self

if TYPE_CHECKING:
    from glmcompat.model.findings import Cause, Finding
    from glmcompat.model.signatures import Hit


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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The record of ``data``, a document of this shape as :meth:`to_json` writes it (nested records, tuples and
        mappings built by the field types)."""
        hints = _hints(cls)
        known = {f.metadata.get("key", f.name): f.name for f in fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - set(known))
        if unknown:  # a key the record does not declare: the document and its record drifted apart
            raise TypeError(f"{cls.__name__}: no field for {', '.join(unknown)}")
        return cls(**{known[k]: _typed(hints[known[k]], v) for k, v in data.items()})


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    """The field types of the record ``cls`` (resolved once)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _typed(hint: Any, v: Any) -> Any:
    """``v`` (JSON data) as the field type ``hint`` holds it."""
    if v is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if isinstance(hint, type) and issubclass(hint, JsonRecord):
        return hint.from_json(v)
    if origin is tuple:
        return tuple(_typed(args[0], x) for x in v)
    if origin is Mapping or origin is dict:
        return {k: _typed(args[1], x) for k, x in v.items()}
    if origin is types.UnionType or origin is typing.Union:
        rest = [a for a in args if a is not type(None)]
        return _typed(rest[0], v) if len(rest) == 1 else v
    return v


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
# Shared parts
# ------------------------------------------------------------------------------------------------

Platform = Annotated[str, Schema(enum=["x86_64", "aarch64"])]
NonEmpty = Annotated[str, Schema(minLength=1)]
Count = Annotated[int, Schema(minimum=0)]
Pins = Mapping[str, NonEmpty]
# the rules of the check (glmcompat.decide.rules and check's own) and the evidence kinds of the matrix
RULES = ("abi", "family", "equal-version", "gpu-code", "cuda", "model", "target-fix", "requires", "unknown", "stack",
         "source-build", "untracked", "unpinned", "override", "output-set", "platform")
EVIDENCE_KINDS = ("metadata", "abi-probe", "arch-probe", "observed-run", "upstream-fix", "inferred", "documentation")


@dataclass(frozen=True, kw_only=True)
class ErrorInfo(JsonRecord):
    """Why the command failed: the exit code, the one-line message (as stderr shows it, without the file and line),
    and the input at fault where there is one."""

    code: Annotated[int, Schema(enum=[1, 2, 3, 4, 130])]
    """the exit code"""
    message: str
    file: str | None
    line: Annotated[int, Schema(minimum=1)] | None


@dataclass(frozen=True, kw_only=True)
class ErrorDocument(JsonRecord):
    """Any command's failure under ``--json``: its JSON version and the error alone."""

    version: int
    error: ErrorInfo


@dataclass(frozen=True, kw_only=True)
class EvidenceDoc(JsonRecord):
    """One piece of evidence: its kind and its source in full."""

    kind: NonEmpty
    source: str


@dataclass(frozen=True, kw_only=True)
class FindingDoc(JsonRecord):
    """One finding (glmcompat.model.findings.Finding)."""

    rule: NonEmpty
    severity: Literal["error", "warning"]
    packages: tuple[str, ...]
    """the packages it names, ``name==version`` (a bare name where there is no version)"""
    message: NonEmpty
    evidence: tuple[EvidenceDoc, ...]
    remedy: str
    environments: tuple[str, ...]
    """the environments where the finding holds ('extra sglang, Python 3.12, Linux x86_64'); empty: all of them"""
    probe: str
    """the glmcompat command that reproduces the finding (`glmcompat abi sgl-kernel==0.3.21 --torch 2.15.0`); empty
    when none does"""

    @classmethod
    def of(cls, f: Finding) -> FindingDoc:
        return cls(**_finding_fields(f, EvidenceDoc))



def _finding_fields(f: Finding, evidence: type[EvidenceDoc]) -> dict[str, Any]:
    return {"rule": f.rule, "severity": f.severity, "packages": f.pins, "message": f.message,
            "evidence": tuple(evidence(kind=k, source=s) for k, s in f.evidence), "remedy": f.remedy,
            "environments": f.environments, "probe": f.probe}


@dataclass(frozen=True, kw_only=True)
class CauseDoc(JsonRecord):
    """Why what was asked for cannot be made safe: uv-style clauses, the conclusion and one remedy."""

    kind: NonEmpty
    subject: str
    because: Annotated[tuple[NonEmpty, ...], Schema(minItems=1)]
    conclusion: NonEmpty
    reason: NonEmpty
    """the clauses and conclusion as one sentence ("Because ..., we can conclude that ...")"""
    remedy: NonEmpty
    evidence: tuple[EvidenceDoc, ...] = field(default=(), metadata=OMIT_EMPTY)
    """the evidence the clauses cite, in full (a clause names only the probe that reproduces it)"""

    @classmethod
    def of(cls, c: Cause, reason: str) -> Self:
        """The record of the cause ``c`` with its derivation ``reason`` in one sentence."""
        return cls(kind=c.kind, subject=c.subject, because=c.clauses, conclusion=c.conclusion, reason=reason,
                   remedy=c.remedy, evidence=tuple(EvidenceDoc(kind=k, source=s) for k, s in c.evidence))


# ------------------------------------------------------------------------------------------------
# check
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CheckEvidenceDoc(EvidenceDoc):
    """One piece of evidence of the matrix: its kind and its source in full."""

    kind: Annotated[str, Schema(enum=list(EVIDENCE_KINDS))]


@dataclass(frozen=True, kw_only=True)
class CheckedFindingDoc(FindingDoc):
    """A finding of one (lock, target) verdict."""

    rule: Annotated[str, Schema(enum=list(RULES))]
    evidence: tuple[CheckEvidenceDoc, ...]
    path: NonEmpty
    target: NonEmpty

    @classmethod
    def at(cls, f: Finding, path: str, target: str) -> CheckedFindingDoc:
        return cls(**_finding_fields(f, CheckEvidenceDoc), path=path, target=target)


@dataclass(frozen=True, kw_only=True)
class CheckedDoc(JsonRecord):
    """One (lock, target) verdict."""

    path: NonEmpty
    target: NonEmpty
    model: str | None
    ok: bool
    environments: Count
    """how many installable environments the file has (each judged on its own)"""
    notes: tuple[str, ...]
    """what was judged when not every combination was (e.g. too many extra combinations)"""
    platforms: Annotated[tuple[Platform, ...], Schema(minItems=1, uniqueItems=True)]
    """the machines whose environments were judged (--platform or [tool.glmcompat] platform, else every machine the
    target ships on)"""
    safe_set: Pins | None
    """for an unsafe entry: the core pins of one consistent safe set (from the matrix; null when none is found or the
    entry is safe); `glmcompat lock` writes them"""


@dataclass(frozen=True, kw_only=True)
class CheckOutput(JsonRecord):
    """The offline verdict on one or more locks for one or more GPU targets."""

    version: Literal[1] = 1
    ok: bool
    """false when any finding is an error"""
    target: str | None
    """the first target checked (null when nothing was checked)"""
    checked: tuple[CheckedDoc, ...]
    """one entry per (lock, target)"""
    findings: tuple[CheckedFindingDoc, ...]


# ------------------------------------------------------------------------------------------------
# targets
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RunsDoc(JsonRecord):
    """Which GPU code runs on the target."""

    sass: NonEmpty
    sass_arch_specific: NonEmpty
    sass_family: NonEmpty
    ptx: NonEmpty
    ptx_arch_specific: NonEmpty


@dataclass(frozen=True, kw_only=True)
class TargetDoc(JsonRecord):
    """One GPU target."""

    name: Annotated[str, Schema(pattern="^sm[0-9]+$")]
    compute_capability: Annotated[str, Schema(pattern="^[0-9]+\\.[0-9]+$")]
    products: Annotated[tuple[NonEmpty, ...], Schema(minItems=1)]
    platforms: Mapping[str, Annotated[tuple[Platform, ...], Schema(minItems=1)]]
    """product -> the machines it ships on"""
    ships_on: Annotated[tuple[Platform, ...], Schema(minItems=1)]
    smem_per_block_optin: Annotated[int, Schema(minimum=1)] | None
    min_cuda: NonEmpty
    runs: RunsDoc
    evidence: NonEmpty
    source: NonEmpty


@dataclass(frozen=True, kw_only=True)
class TargetsOutput(JsonRecord):
    """The GPU targets: capability, products and the machines each ships on, shared memory per block, and which GPU
    code runs there."""

    version: Literal[1] = 1
    targets: tuple[TargetDoc, ...]


# ------------------------------------------------------------------------------------------------
# explain
# ------------------------------------------------------------------------------------------------


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
    def of(cls, h: Hit) -> SignatureHitDoc:
        return cls(id=h.id, line=h.line, count=h.count, match=h.text, groups=dict(h.groups), cause=h.cause,
                   remedy=h.remedy, source=h.source, package=h.package or None, version=h.version or None)


@dataclass(frozen=True, kw_only=True)
class ExplainOutput(JsonRecord):
    """Known failure signatures found in a server log, each with its cause and remedy."""

    version: Literal[1] = 1
    log: NonEmpty
    found: bool
    signatures: tuple[SignatureHitDoc, ...]


# ------------------------------------------------------------------------------------------------
# upgrade
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SkipDoc(CauseDoc):
    """Why a newer release was skipped: uv-style clauses, the conclusion and one remedy."""

    subject: NonEmpty


@dataclass(frozen=True, kw_only=True)
class SkipNote(JsonRecord):
    """Why a newer release was skipped, where no derivation says it."""

    note: NonEmpty


@dataclass(frozen=True, kw_only=True)
class UpgradeOutput(JsonRecord):
    """The newest safe core set for a target and why each newer release was skipped."""

    version: Literal[2] = 2
    stack: NonEmpty
    engine: Annotated[str, Schema(enum=["sglang", "vllm"])]
    target: NonEmpty
    model: str | None
    platform: Platform
    exclude_newer: Annotated[str, Schema(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")] | None
    """the index as of this time (--exclude-newer); null: as it is now"""
    with_: tuple[str, ...] = field(metadata=key("with"))
    """the requirements added with --with"""
    pins: Pins
    """the chosen set: package -> version"""
    stack_pins: Pins
    """the stack's own pins"""
    not_required: Pins
    """the stack's packages the chosen set does without, and why"""
    overrides: Pins
    """package -> why an upstream pin on it was overridden"""
    skipped: Mapping[str, Mapping[str, SkipDoc | SkipNote]]
    """package -> newer version -> why it is not in the set"""


# ------------------------------------------------------------------------------------------------
# pip install
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ChangeDoc(JsonRecord):
    """One distribution a plan or an install changes."""

    name: NonEmpty
    old: str | None
    """the installed version (null: newly installed)"""
    new: str | None
    """the version after (null: removed)"""


@dataclass(frozen=True, kw_only=True)
class PipEnvironmentDoc(JsonRecord):
    """The live environment installed into."""

    python: NonEmpty
    prefix: NonEmpty
    python_version: Annotated[str, Schema(pattern="^[0-9]+\\.[0-9]+\\.[0-9]+$")]
    found_by: Annotated[str, Schema(enum=["--python", "VIRTUAL_ENV", ".venv"])]
    problems: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ChosenDoc(JsonRecord):
    """The plan chosen: the installer's own, or a re-plan that keeps the core safe."""

    how: NonEmpty
    requirements_added: tuple[str, ...]
    changes: tuple[ChangeDoc, ...]


@dataclass(frozen=True, kw_only=True)
class PipInstallOutput(JsonRecord):
    """The installer's plan for a live environment, judged with the check rules; the plan chosen (the installer's
    own, or a re-plan that keeps the core safe) and what the install changed, or why no safe plan exists. An
    installer that refuses the request prints its own error instead (exit 2 or 3, no JSON)."""

    version: Literal[1] = 1
    verdict: Annotated[str, Schema(enum=["installed", "would-install", "nothing-to-change", "no-safe-plan",
                                         "install-failed"])]
    """installed (exit 0); would-install (--dry-run, exit 0); nothing-to-change (exit 0); no-safe-plan (exit 1,
    nothing changed); install-failed (exit 3: the plan was safe, the installer failed; see changed)"""
    environment: PipEnvironmentDoc
    targets: tuple[Annotated[str, Schema(pattern="^sm[0-9]+$")], ...]
    """the targets judged; empty: none known (the rules that hold on every target were run)"""
    targets_from: NonEmpty
    model: str | None
    core: Mapping[str, str]
    """the installed coupled core: package -> version"""
    installer: Annotated[str, Schema(enum=["uv", "pip"])] | None = None
    installer_plan: tuple[ChangeDoc, ...] = ()
    """the installer's own plan (uv pip install --dry-run / pip install --dry-run --report)"""
    breaks: tuple[FindingDoc, ...] = ()
    """the errors the installer's own plan would add"""
    chosen: ChosenDoc | None = None
    warnings: tuple[FindingDoc, ...] = ()
    """warnings the chosen plan adds"""
    already: tuple[FindingDoc, ...] = ()
    """errors the environment had before any change"""
    changed: tuple[ChangeDoc, ...] | None = None
    """what the environment, read again, changed (null: nothing was installed)"""
    drift: tuple[ChangeDoc, ...] = ()
    """where the installed environment differs from the judged plan"""
    cause: CauseDoc | None = None
    """why no safe plan exists (null: one does)"""


# ------------------------------------------------------------------------------------------------
# lock (project and requirements modes)
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LockOutput(JsonRecord):
    """What a project or requirements lock did, or why it could not."""

    version: Literal[1] = 1
    mode: Annotated[str, Schema(enum=["project", "requirements"])]
    path: NonEmpty
    """the pyproject.toml locked, or the requirements output"""
    targets: Annotated[tuple[NonEmpty, ...], Schema(minItems=1)]
    platform: Platform
    core: Pins
    """the safe core set: package -> version"""
    overrides: Pins
    """package -> version written to override-dependencies (an engine's pin overridden)"""
    override_reasons: Pins
    """package -> why its upstream pin was overridden"""
    written: tuple[str, ...]
    """files changed on disk (none with --dry-run or --check, or when up to date)"""
    warnings: tuple[str, ...]
    verdicts: Mapping[str, Annotated[str, Schema(enum=["safe", "unsafe", "stale"])]]
    """target -> the check's verdict on the lock (empty with --dry-run)"""
    diff: str
    """unified diff of pyproject.toml (project mode)"""
    problems: tuple[str, ...]
    """--check: why the lock is not current or not safe (exit 1 when any)"""
    error: str | None
    """why no safe lock exists (exit 1; nothing was written), else null"""
    evidence: tuple[EvidenceDoc, ...]
    """the evidence the error's derivation cites, in full (the error names only the probe that reproduces it)"""


# ------------------------------------------------------------------------------------------------
# verify
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ExplainedDoc(JsonRecord):
    """A known failure signature in a probe's error text: what it means and one remedy."""

    id: NonEmpty
    cause: NonEmpty
    remedy: NonEmpty
    match: str
    """the matched text"""
    package: str | None
    """the package the text blames; null when it names none"""
    version: str | None
    """that package's version where the text shows it"""


@dataclass(frozen=True, kw_only=True)
class ProbeDoc(JsonRecord):
    """One probe's record: its verdict and what it found (the fields a probe did not report are absent)."""

    id: NonEmpty
    status: Annotated[str, Schema(enum=["passed", "warning", "failed", "skipped"])]
    seconds: float | None = field(default=None, metadata=OMIT_NONE)
    summary: str | None = field(default=None, metadata=OMIT_NONE)
    error: str | None = field(default=None, metadata=OMIT_NONE)
    """the exact error, with its chain (cause first), one exception per line"""
    data: Mapping[str, Any] | None = field(default=None, metadata=OMIT_NONE)
    """what the probe measured (free form, per probe)"""
    warnings: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)
    explained: tuple[ExplainedDoc, ...] | None = field(default=None, metadata=OMIT_NONE)
    """the known failure signatures its error text shows"""
    absent: NonEmpty | None = field(default=None, metadata=OMIT_NONE)
    """skipped because this module is not installed"""



@dataclass(frozen=True, kw_only=True)
class CountsDoc(JsonRecord):
    """How many probes ended in each status."""

    passed: Count
    warning: Count
    failed: Count
    skipped: Count


@dataclass(frozen=True, kw_only=True)
class AgreementDoc(JsonRecord):
    """The static verdict on one extension package against what its dynamic probes saw."""

    package: NonEmpty
    aspect: Annotated[str, Schema(enum=["load", "gpu-code"])]
    static: Annotated[str, Schema(enum=["compatible", "incompatible"])]
    dynamic: NonEmpty
    reasons: tuple[str, ...]
    probes: tuple[str, ...]
    agree: bool


@dataclass(frozen=True, kw_only=True)
class RankDoc(JsonRecord):
    """One rank's verdict under torchrun (--distributed), as rank 0 gathered it."""

    rank: Count
    ok: bool
    device: Mapping[str, Any] | None
    failed: tuple[str, ...]
    """the ids of its failed probes"""


@dataclass(frozen=True, kw_only=True)
class VerifyOutput(JsonRecord):
    """Whether the installed stack loads and runs its kernels on this GPU: one entry per probe."""

    version: Literal[1] = 1
    ok: bool
    target: str | None
    device: Mapping[str, Any] | None
    """the GPU probed (name, capability, driver, ...)"""
    counts: CountsDoc
    probes: tuple[ProbeDoc, ...]
    findings: tuple[FindingDoc, ...]
    agreement: tuple[AgreementDoc, ...]
    elapsed_s: Annotated[float, Schema(minimum=0)] | None = field(default=None, metadata=OMIT_NONE)
    rank: Count | None = field(default=None, metadata=OMIT_NONE)
    """under torchrun (--distributed): this process's rank"""
    ranks: tuple[RankDoc, ...] | None = field(default=None, metadata=OMIT_NONE)
    """on rank 0 under torchrun: every rank's verdict"""



# ------------------------------------------------------------------------------------------------
# matrix refresh and matrix audit
# ------------------------------------------------------------------------------------------------

Machine = Annotated[str, Schema(enum=["x86_64", "aarch64"], description=(
    "the machine whose wheels are read (a row without platform is about the x86_64 wheel)"))]


@dataclass(frozen=True, kw_only=True)
class CandidateDoc(JsonRecord):
    """A release on the index that the matrix lacks."""

    package: NonEmpty
    version: NonEmpty
    kind: NonEmpty
    table: NonEmpty
    uploaded: Annotated[str, Schema(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")] | None
    """when its first file was uploaded (null: the index does not say)"""
    probed: bool
    platform: Machine


@dataclass(frozen=True, kw_only=True)
class SkippedReleaseDoc(JsonRecord):
    """A release refresh leaves alone, and why."""

    version: NonEmpty
    reason: NonEmpty


@dataclass(frozen=True, kw_only=True)
class ListingDoc(JsonRecord):
    """One package's releases on the index against the matrix."""

    package: NonEmpty
    kind: NonEmpty
    table: NonEmpty
    on_index: Count
    lacking: tuple[CandidateDoc, ...]
    skipped: tuple[SkippedReleaseDoc, ...]
    platform: Machine


@dataclass(frozen=True, kw_only=True)
class TableRowDoc(JsonRecord):
    """A row for a matrix table, as it is written."""

    table: NonEmpty
    row: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class WrittenToDoc(JsonRecord):
    """Where a row went."""

    table: NonEmpty
    file: NonEmpty


@dataclass(frozen=True, kw_only=True)
class ReleaseDoc(JsonRecord):
    """What the METADATA and wheels of one lacking release proved, and the rows written for it."""

    package: NonEmpty
    version: NonEmpty
    kind: NonEmpty
    status: Annotated[str, Schema(enum=["complete", "partial", "nothing", "failed"])]
    rows: tuple[TableRowDoc, ...]
    proved: tuple[str, ...]
    not_proved: tuple[str, ...]
    failed: str | None
    """why the index failed for it (nothing was written), else null"""
    from_journal: bool
    """its rows come from the journal of an earlier, interrupted run"""
    written: tuple[WrittenToDoc, ...]
    platform: Machine


@dataclass(frozen=True, kw_only=True)
class BoundDoc(JsonRecord):
    """A bound before and after."""

    before: str | None
    after: str | None


@dataclass(frozen=True, kw_only=True)
class ModelUpdateDoc(JsonRecord):
    """A [[model]] row changed in place."""

    model_type: str
    file: str
    changed: Mapping[str, BoundDoc]
    """key -> its bound before and after"""


@dataclass(frozen=True, kw_only=True)
class RefreshOutput(JsonRecord):
    """The releases on the index the matrix lacks, what their METADATA and wheels proved, and the rows written."""

    version: Literal[1] = 1
    kind: Literal["matrix-refresh"] = "matrix-refresh"
    matrix: NonEmpty
    since: str | None
    dry_run: bool
    packages: tuple[ListingDoc, ...]
    lacking: tuple[CandidateDoc, ...]
    releases: tuple[ReleaseDoc, ...]
    written: Mapping[str, Count]
    """file -> rows written"""
    rows_written: Count
    failed: Count
    seconds: Annotated[float, Schema(minimum=0)]
    models: tuple[ModelUpdateDoc, ...]
    """[[model]] rows changed in place: the bounds releases since they were derived add"""
    models_bytes: Count
    """bytes the model probe fetched"""
    models_failed: str | None
    """why the [[model]] rows could not be refreshed (nothing of them was written)"""


@dataclass(frozen=True, kw_only=True)
class AuditCheckDoc(JsonRecord):
    """One machine-checkable claim of the matrix, re-derived."""

    file: NonEmpty
    line: int | None
    table: NonEmpty
    package: NonEmpty
    version: NonEmpty
    field: NonEmpty
    claimed: Any
    found: Any
    status: Annotated[str, Schema(enum=["ok", "drift", "unverifiable", "error"])]
    detail: str
    platform: Machine


@dataclass(frozen=True, kw_only=True)
class AuditSummaryDoc(JsonRecord):
    """How many checks ended in each status."""

    ok: Count
    drift: Count
    unverifiable: Count
    error: Count


@dataclass(frozen=True, kw_only=True)
class AuditOutput(JsonRecord):
    """The matrix's machine-checkable claims re-derived from the index, and the drift found."""

    version: Literal[1] = 1
    kind: Literal["matrix-audit"] = "matrix-audit"
    matrix: NonEmpty
    deep: bool
    checks_total: Count
    checks: tuple[AuditCheckDoc, ...]
    drift: tuple[AuditCheckDoc, ...]
    summary: AuditSummaryDoc
    seconds: Annotated[float, Schema(minimum=0)]


# ------------------------------------------------------------------------------------------------
# abi and arch: what the wheels' shared objects hold
# ------------------------------------------------------------------------------------------------

Code = Annotated[str, Schema(pattern="^(sm|compute)_[0-9]+[af]?$")]


@dataclass(frozen=True, kw_only=True)
class MissingSymbolDoc(JsonRecord):
    """A symbol the extension needs from torch that the torch wheel does not export."""

    symbol: NonEmpty
    demangled: NonEmpty


@dataclass(frozen=True, kw_only=True)
class AbiModuleDoc(JsonRecord):
    """One shared object of the extension wheel."""

    member: NonEmpty
    needed: tuple[str, ...]
    """its DT_NEEDED libraries"""
    cuda_majors: tuple[Count, ...]
    needs_from_torch: Count
    missing: tuple[MissingSymbolDoc, ...]


@dataclass(frozen=True, kw_only=True)
class AbiOutput(JsonRecord):
    """An extension wheel's torch symbols against a torch release, read from the wheels."""

    version: Literal[1] = 1
    kind: Literal["abi"] = "abi"
    package: NonEmpty
    package_version: NonEmpty
    torch: NonEmpty
    platform: Platform
    wheel: NonEmpty
    torch_wheel: NonEmpty
    ok: bool
    modules: tuple[AbiModuleDoc, ...]
    missing: tuple[MissingSymbolDoc, ...]
    torch_exports: Count
    torch_cuda_majors: tuple[Count, ...]
    bytes_fetched: Count
    bytes_total: Count
    seconds: Annotated[float, Schema(minimum=0)]
    cached: bool
    warnings: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class KernelGroupDoc(JsonRecord):
    """Kernels that carry the same GPU code."""

    kernels: Annotated[int, Schema(minimum=1)]
    code: tuple[Code, ...]
    example: NonEmpty
    """one of them, by name"""


Toolkits = Mapping[str, Annotated[int, Schema(minimum=1)]]


@dataclass(frozen=True, kw_only=True)
class ArchModuleDoc(JsonRecord):
    """The GPU code of one shared object."""

    member: NonEmpty
    sass: tuple[Code, ...]
    ptx: tuple[Code, ...]
    counts: Mapping[str, Count]
    runs: bool | None
    """with a target: whether its code runs there"""
    runs_with: tuple[Code, ...]
    toolkits: Toolkits
    """CUDA release that built cubins ("12.4") -> how many"""
    kernel_code: tuple[KernelGroupDoc, ...]
    """its kernels grouped by the GPU code they carry"""
    unreadable: Count
    """fatbin entries whose kernels could not be read"""
    uncovered: tuple[KernelGroupDoc, ...]
    """with --target: groups of kernels meant for newer GPUs with no code for the target"""


@dataclass(frozen=True, kw_only=True)
class ArchOutput(JsonRecord):
    """The GPU code (SASS, PTX) in a wheel's shared objects and, with a target, whether it runs there."""

    version: Literal[1] = 1
    kind: Literal["arch"] = "arch"
    package: NonEmpty
    package_version: NonEmpty
    platform: Platform
    wheel: NonEmpty
    target: str | None
    ok: bool
    modules: tuple[ArchModuleDoc, ...]
    primary: tuple[str, ...]
    """the members whose GPU code decides the verdict"""
    sass: tuple[Code, ...]
    ptx: tuple[Code, ...]
    all_sass: tuple[Code, ...]
    all_ptx: tuple[Code, ...]
    missing: tuple[str, ...]
    """the judged members with no code for the target"""
    bytes_fetched: Count
    bytes_total: Count
    seconds: Annotated[float, Schema(minimum=0)]
    cached: bool
    toolkits: Toolkits
    """CUDA release that built cubins ("12.4") -> how many"""
    kernels: Count
    """kernels of the main modules"""
    uncovered_kernels: Count
    """with --target: main-module kernels with no code for it"""
    target_platforms: Annotated[tuple[Platform, ...], Schema(minItems=1)] | None = field(default=None,
                                                                                        metadata=OMIT_NONE)
    """with --target: the machines it ships on"""
    note: NonEmpty | None = field(default=None, metadata=OMIT_NONE)
    """with --target: the wheel read is for a machine the target never ships on"""


__all__ = ["AbiModuleDoc", "AbiOutput", "ArchModuleDoc", "ArchOutput", "KernelGroupDoc", "MissingSymbolDoc", "AuditCheckDoc", "AuditOutput", "AuditSummaryDoc", "BoundDoc", "CandidateDoc", "ListingDoc", "ModelUpdateDoc",
           "RefreshOutput", "ReleaseDoc", "SkippedReleaseDoc", "TableRowDoc", "WrittenToDoc", "EVIDENCE_KINDS", "OMIT_EMPTY", "OMIT_NONE", "AgreementDoc", "CountsDoc", "ExplainedDoc", "ProbeDoc", "RankDoc",
           "VerifyOutput", "RULES", "CauseDoc", "ChangeDoc", "CheckOutput", "ChosenDoc", "LockOutput",
           "PipEnvironmentDoc", "PipInstallOutput", "SkipDoc", "SkipNote", "UpgradeOutput", "key", "CheckedDoc", "CheckedFindingDoc",
           "CheckEvidenceDoc", "ErrorDocument", "ErrorInfo", "EvidenceDoc", "ExplainOutput", "FindingDoc", "Platform", "JsonRecord", "RunsDoc",
           "Schema", "SignatureHitDoc", "TargetDoc", "TargetsOutput"]
