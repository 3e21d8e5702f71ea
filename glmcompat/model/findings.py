"""One structured verdict type, :class:`Finding`, for every producer: the check rules
(:mod:`glmcompat.decide.rules`), ``glmcompat check``'s own findings and ``glmcompat verify``'s (the rules'
findings for the installed packages, the state of the installation, the probes' verdicts).

A finding is data: what is wrong, with which packages, on what evidence, and one remedy. Its JSON form
(:meth:`Finding.to_json`) is what every versioned report carries; :meth:`Finding.from_json` reads it back
(``verify``'s probe processes hand their findings to the parent as JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SEVERITIES = ("error", "warning")


@dataclass(frozen=True, order=True)
class Finding:
    """One structured verdict: what is wrong, with which packages, the evidence and one remedy."""

    rule: str
    severity: str
    packages: tuple[str, ...]
    message: str
    evidence: tuple[tuple[str, str], ...] = ()  # (kind, source)
    remedy: str = ""
    environments: tuple[str, ...] = ()  # where it holds ("extra sglang, Python 3.12, Linux x86_64"); () = everywhere

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "packages": list(self.packages),
            "message": self.message,
            "evidence": [{"kind": k, "source": s} for k, s in self.evidence],
            "remedy": self.remedy,
            "environments": list(self.environments),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Finding:
        """The finding :meth:`to_json` wrote (``evidence``, ``remedy`` and ``environments`` may be absent)."""
        return cls(str(data["rule"]), str(data["severity"]), tuple(map(str, data["packages"])), str(data["message"]),
                   tuple((str(e["kind"]), str(e["source"])) for e in data.get("evidence") or ()),
                   str(data.get("remedy") or ""), tuple(map(str, data.get("environments") or ())))


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

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "because": list(self.clauses),
                "conclusion": self.conclusion, "remedy": self.remedy}


__all__ = ["SEVERITIES", "Cause", "Finding"]
