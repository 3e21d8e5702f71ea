"""One structured verdict type, :class:`Finding`, for every producer: the check rules
(:mod:`glmcompat.decide.rules`), ``glmcompat check``'s own findings and ``glmcompat verify``'s (the rules'
findings for the installed packages, the state of the installation, the probes' verdicts).

A finding is data: what is wrong, with which packages, on what evidence, and one remedy. Its JSON form
(:meth:`Finding.to_json`) is what every versioned report carries; :meth:`Finding.from_json` reads it back
(``verify``'s probe processes hand their findings to the parent as JSON).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Self, get_args

from glmcompat.model.outputs.base import OMIT_EMPTY, JsonRecord, NonEmpty, Schema
from glmcompat.model.outputs.common import EvidenceDoc

SEVERITIES = ("error", "warning")

# The kinds of evidence a finding (and a matrix row: glmcompat.matrix.schema.Evidence) cites.
EvidenceKind = Literal["metadata", "abi-probe", "arch-probe", "observed-run", "upstream-fix", "inferred",
                       "documentation"]
EVIDENCE_KINDS: tuple[str, ...] = get_args(EvidenceKind)
# The rules of the check: glmcompat.decide.rules' and check's own ("output-set", glmcompat.ops.checkfile); a
# finding of `check --json` names one of them (tests/decide/test_rules.py holds the producers to this list).
CheckRule = Literal["abi", "numpy-abi", "family", "equal-version", "gpu-code", "cuda", "driver", "glibc", "model", "target-fix", "requires",
                    "unknown", "stack", "source-build", "untracked", "unpinned", "override", "output-set", "platform",
                    "torch-pins", "non-nvidia", "artifact"]
CHECK_RULES: tuple[str, ...] = get_args(CheckRule)

# A glmcompat probe command inside an evidence source: the command and its options with their values
# (``glmcompat abi sgl-kernel==0.3.21 --torch 2.9.0 and --torch 2.9.1: ...`` -> the first command).
_VALUE = r"[^\s`:;,()'\"]+"
_COMMAND = re.compile(rf"glmcompat (?:abi|arch|matrix probe) {_VALUE}(?: --[a-z][a-z-]*(?: (?!--){_VALUE})?)*")
_URL = re.compile(r"https?://[^\s`'\"()<>]+[^\s`'\"()<>.,;:]")
SHORT = 120  # the most characters a cited clause keeps by default


def cite(source: str, limit: int = SHORT) -> str:
    """The short form of an evidence ``source`` for a one-line verdict: the glmcompat command that reproduces
    it, else its first URL, else its first clause (cut at a word, at most ``limit`` characters). The full
    source stays in the finding (``-v``, ``--json``)."""
    m = _COMMAND.search(source)
    if m:
        return m.group(0)
    m = _URL.search(source)
    if m:
        return m.group(0)
    head = re.split(r"(?<=[^\d.]); |: (?=[A-Z(`])", source, maxsplit=1)[0].strip()
    if len(head) <= limit:
        return head
    cut = head[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:(")
    return cut + "…"


NameVersion = tuple[str, str]  # (name, version) a finding names; version "" where it names the package alone


def name_version(pin: str) -> NameVersion:
    """The (name, version) of ``"name==version"`` (a bare name: version "")."""
    name, _, version = pin.partition("==")
    return name, version


@dataclass(frozen=True, order=True, kw_only=True)
class Finding:
    """One structured verdict: what is wrong, with which packages, the evidence and one remedy (built with
    keywords only)."""

    rule: str
    severity: str
    packages: tuple[NameVersion, ...]  # (name, version); version "" where the finding names the package alone
    message: str
    evidence: tuple[tuple[str, str], ...] = ()  # (kind, source)
    remedy: str = ""
    environments: tuple[str, ...] = ()  # where it holds ("extra sglang, Python 3.12, Linux x86_64"); () = everywhere
    probe: str = ""  # the glmcompat command that reproduces it (`glmcompat abi sgl-kernel==0.3.21 --torch 2.15.0`)

    @property
    def pins(self) -> tuple[str, ...]:
        """The packages as the reports write them: ``name==version`` (a bare name where there is no version)."""
        return tuple(f"{n}=={v}" if v else n for n, v in self.packages)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.packages)

    def short_evidence(self) -> tuple[str, str] | None:
        """(kind, text) of the one evidence line a default verdict prints: the probe that reproduces the
        finding, else the short form (:func:`cite`) of its first evidence; None when it has neither."""
        kind = self.evidence[0][0] if self.evidence else "probe"
        if self.probe:
            return kind, self.probe
        if self.evidence:
            return kind, cite(self.evidence[0][1])
        return None

    def to_json(self) -> dict[str, Any]:
        """The finding as every versioned report carries it: its record's (:class:`FindingDoc`)."""
        return FindingDoc.of(self).to_json()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Finding:
        """The finding :meth:`to_json` wrote (``evidence``, ``remedy``, ``environments`` and ``probe`` may be absent)."""
        return cls(rule=str(data["rule"]), severity=str(data["severity"]),
                   packages=tuple(name_version(str(p)) for p in data["packages"]), message=str(data["message"]),
                   evidence=tuple((str(e["kind"]), str(e["source"])) for e in data.get("evidence") or ()),
                   remedy=str(data.get("remedy") or ""), environments=tuple(map(str, data.get("environments") or ())),
                   probe=str(data.get("probe") or ""))


@dataclass(frozen=True, kw_only=True)
class FindingDoc(JsonRecord):
    """One finding (glmcompat.model.findings.Finding)."""

    # Declared beside Finding and derived from it (:meth:`of`, field for field: ``packages`` as its pins, ``evidence``
    # as records): the one JSON form of a finding; no protocol restates Finding's fields.

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
        return cls(**finding_fields(f, EvidenceDoc))


def finding_fields(f: Finding, evidence: type[EvidenceDoc]) -> dict[str, Any]:
    """The fields of a finding's record (its evidence as records of the type ``evidence``)."""
    return {"rule": f.rule, "severity": f.severity, "packages": f.pins, "message": f.message,
            "evidence": tuple(evidence(kind=k, source=s) for k, s in f.evidence), "remedy": f.remedy,
            "environments": f.environments, "probe": f.probe}



@dataclass
class Printed:
    """What the evidence lines of one text verdict printed so far: each text with the finding it came under."""

    findings: int = 0
    at: dict[str, int] = field(default_factory=dict)


def evidence_lines(f: Finding, *, verbose: bool, printed: Printed) -> list[str]:
    """The evidence lines of one finding in a text verdict (without indentation). By default one: the probe
    that reproduces it or the short form of its first evidence (:meth:`Finding.short_evidence`); ``verbose``:
    that probe, then every evidence source in full. ``printed`` (updated here) is the verdict's so far: the short
    line of the finding just above reads "as above"; a full source printed before is cited by its short form."""
    out: list[str] = []
    here = printed.findings
    printed.findings += 1
    if not verbose:
        short = f.short_evidence()
        if short is not None:
            kind, text = short
            out.append("evidence: as above" if printed.at.get(text) == here - 1 else f"evidence ({kind}): {text}")
            printed.at[text] = here
        return out
    if f.probe:
        out.append(f"reproduce: {f.probe}")
    for kind, src in f.evidence:
        out.append(f"evidence ({kind}): as above ({cite(src)})" if src in printed.at else f"evidence ({kind}): {src}")
        printed.at.setdefault(src, here)
    return out


def dedupe(evidence: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``evidence`` in order, each (kind, source) once."""
    return tuple(dict.fromkeys(evidence))


@dataclass(frozen=True)
class Cause:
    """One structured reason why what was asked for cannot be made safe: ``clauses`` from which ``conclusion``
    follows, and one ``remedy`` (:mod:`glmcompat.decide.explain` renders it uv-style: "Because ..., we can
    conclude that ..."). ``kind`` says what rules it out (``root``: a requirement of yours, the model's or the
    target's; ``pinned``, ``ruled-out``: the matrix, ``conflict``, ``preference``, ``abi``, ``unserved``);
    ``subject`` names the package whose trouble it is ("" when none does)."""

    kind: str
    subject: str
    clauses: tuple[str, ...]
    conclusion: str
    remedy: str
    evidence: tuple[tuple[str, str], ...] = ()  # (kind, source) in full: the clauses cite only its short form

    def because(self) -> str:
        """The uv-style derivation, "Because ..., and ..., we can conclude that ...": the one place it is joined
        (its clauses come rendered: :func:`glmcompat.decide.explain.render` for the resolver's causes)."""
        return f"Because {', and '.join(self.clauses)}, we can conclude that {self.conclusion}."

    def as_json(self) -> dict[str, Any]:
        """The cause as ``upgrade --json`` and ``pip install --json`` carry it: its record's (:class:`CauseDoc`)."""
        return CauseDoc.of(self).to_json()


@dataclass(frozen=True, kw_only=True)
class CauseDoc(JsonRecord):
    """Why what was asked for cannot be made safe: uv-style clauses, the conclusion and one remedy."""

    # Declared beside Cause and derived from it (:meth:`of`, field for field: ``clauses`` as ``because``, the joined
    # derivation as ``reason``, ``evidence`` as records): the one JSON form of a cause; no protocol restates Cause's
    # fields.

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
    def of(cls, c: Cause) -> Self:
        """The record of the cause ``c``, its derivation in one sentence (:meth:`Cause.because`) as ``reason``."""
        return cls(kind=c.kind, subject=c.subject, because=c.clauses, conclusion=c.conclusion, reason=c.because(),
                   remedy=c.remedy, evidence=tuple(EvidenceDoc(kind=k, source=s) for k, s in c.evidence))


__all__ = ["CHECK_RULES", "EVIDENCE_KINDS", "SEVERITIES", "CheckRule", "EvidenceKind", "Cause", "CauseDoc", "Finding", "FindingDoc", "NameVersion", "Printed", "cite", "dedupe", "evidence_lines",
           "finding_fields", "name_version"]
