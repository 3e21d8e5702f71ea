"""Known failure signatures: error text -> cause -> remedy (the matrix's ``[[signature]]`` rows).

Used by ``glmcompat verify`` on each failed probe's error, and by ``glmcompat explain LOGFILE|-``
on a server's log. Matching is line by line (a signature is a one-line regular expression), so a
log of any size streams through; each signature is reported once, with the first line it matched
and how many lines matched it.

The most specific signature wins a line: when two match the same line and the text one matched lies
inside the other's (``undefined symbol: X`` inside ``vllm/_C.abi3.so: undefined symbol: X``), only
the wider match counts for that line, so a vLLM log gets vLLM's cause and remedy, not the generic one.
The signatures come from every matrix file (``matrices/signatures.toml``,
``matrices/vllm-signatures.toml``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_LINE = 8192  # longer lines are matched on their first MAX_LINE characters


@dataclass(frozen=True)
class Hit:
    """One signature found: where first, how often, and what it means."""

    id: str
    cause: str
    remedy: str
    text: str  # the matched text of the first match
    line: int = 0  # 1-based line of the first match (0: matched in a probe's error text)
    count: int = 1
    groups: Mapping[str, str] = field(default_factory=dict)
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "line": self.line, "count": self.count, "match": self.text,
                "groups": dict(self.groups), "cause": self.cause, "remedy": self.remedy, "source": self.source}


def _compiled(signatures: Sequence[Mapping[str, Any]]) -> list[tuple[re.Pattern[str], Mapping[str, Any]]]:
    return [(re.compile(s["pattern"]), s) for s in signatures]


def scan_lines(lines: Iterable[str], signatures: Sequence[Mapping[str, Any]]) -> list[Hit]:
    """Match every line against every signature; one :class:`Hit` per signature, in order of first match."""
    pats = _compiled(signatures)
    first: dict[str, Hit] = {}
    counts: dict[str, int] = {}
    for n, raw in enumerate(lines, 1):
        line = raw[:MAX_LINE]
        found = [(m, sig) for pat, sig in pats if (m := pat.search(line)) is not None]
        if len(found) > 1:
            found = [(m, sig) for m, sig in found if not _inside(m, [o for o, _ in found])]
        for m, sig in found:
            sid = sig["id"]
            counts[sid] = counts.get(sid, 0) + 1
            if sid not in first:
                groups = {k: v for k, v in m.groupdict().items() if v is not None}
                first[sid] = Hit(sid, sig["cause"], sig["remedy"], m.group(0), n, 1, groups, sig.get("source", ""))
    return [Hit(h.id, h.cause, h.remedy, h.text, h.line, counts[h.id], h.groups, h.source) for h in first.values()]


def _inside(m: re.Match[str], others: list[re.Match[str]]) -> bool:
    """Whether ``m``'s span lies inside a strictly wider match of another signature on the same line."""
    a, b = m.span()
    return any(o is not m and o.start() <= a and b <= o.end() and o.end() - o.start() > b - a for o in others)


def match_signatures(text: str, signatures: Sequence[Mapping[str, Any]]) -> list[Hit]:
    """The signatures found in ``text`` (a probe's error), with line 0."""
    return [Hit(h.id, h.cause, h.remedy, h.text, 0, h.count, h.groups, h.source)
            for h in scan_lines(text.splitlines(), signatures)]


def render(hits: list[Hit], name: str) -> str:
    """uv-style prose: what was found, why, and one concrete hint each."""
    if not hits:
        return f"{name}: no known failure signature found"
    out = [f"{name}: {len(hits)} known failure signature(s)"]
    for h in hits:
        times = f" ({h.count} lines)" if h.count > 1 else ""
        out.append("")
        out.append(f"line {h.line}: {h.id}{times}")
        out.append(f"  matched: {h.text}")
        out.append(f"  cause:   {h.cause}")
        out.append(f"  hint:    {h.remedy}")
    return "\n".join(out)
