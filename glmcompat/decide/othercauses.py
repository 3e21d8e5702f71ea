"""Causes outside packaging and compatibility that a failure log shows by itself (the matrix's ``[[other_cause]]`` rows,
glmcompat/matrix/data/other-causes.toml): the compiler killed or out of memory, an index pip ignored, a requirement's
variable left unexpanded, a misspelled LD_LIBRARY_PATH, WSL 1, a message the run went on past.

A :class:`Watch` reads each line of a log as :mod:`glmcompat.model.signatures` scans it (it passes the lines through, so
a log is read once, a stream included), and keeps the first line each cause shows on and every line it read. Then
:meth:`Watch.withhold` leaves out of explain's diagnosis every hit on such a line (the line is that cause's message, not
a signature's: gcc's "<path>: Cannot allocate memory" is no cut of glibc's static-TLS message) and every hit of a
signature the row withholds (the failed build step after the killed compiler), and gives what the log shows instead,
with the usual remedy. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from glmcompat.decide.reportcauses import SIDE_NOTE_GROUPS
from glmcompat.matrix.rows import OtherCause
from glmcompat.model.outputs.explain import OtherCauseHit
from glmcompat.model.signatures import MAX_LINE, Hit, required_literals

_FIELD = re.compile(r"\{(\w+)\}")  # a row's {group} field (glmcompat.matrix.schema checks each names a group)


def _filled(text: str, m: re.Match[str]) -> str:
    """``text`` with each ``{group}`` field the match's value (as the log printed it; "" where the group did not match)."""
    return _FIELD.sub(lambda f: m.group(f.group(1)) or "", text)


@dataclass
class Watch:
    """The ``[[other_cause]]`` rows read over a log's numbered lines: the first line each cause (by id) shows on, and
    the lines each row read."""

    rows: Sequence[OtherCause]
    first: dict[str, OtherCauseHit] = field(default_factory=dict)  # id -> what the first line that shows it says
    read: set[int] = field(default_factory=set)  # the lines any row read
    _compiled: list[tuple[OtherCause, re.Pattern[str], tuple[str, ...] | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # each row's pattern, and the texts one of which a line must hold to match it (a line holding none is not searched)
        self._compiled = [(r, re.compile(r.pattern), required_literals(r.pattern)) for r in self.rows]

    def through(self, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        """``lines`` (1-based number, line) as they come, each read by every row on the way."""
        for n, line in lines:
            text = line[:MAX_LINE]
            for row, pattern, literals in self._compiled:
                if literals is not None and not any(w in text for w in literals):
                    continue
                if (m := pattern.search(text)) is None:
                    continue
                self.read.add(n)
                if row.id not in self.first:
                    self.first[row.id] = OtherCauseHit(row.id, _filled(row.shows, m), _filled(row.remedy, m), m.group(0),
                                                       n, row.source)
            yield n, line

    def withhold(self, hits: Sequence[Hit]) -> tuple[list[Hit], tuple[OtherCauseHit, ...]]:
        """``hits`` without those on a line a row read and those of a signature a shown cause's row withholds; and the
        causes shown, in the order of their first lines."""
        shown = sorted(self.first.values(), key=lambda o: o.line)
        ids = {o.id for o in shown}
        withheld = {sid for r in self.rows if r.id in ids for sid in r.withholds}
        kept = [h for h in hits if h.line not in self.read and h.id not in withheld]
        if shown:  # fix-r: pip's conflict report of packages outside the stack, a side note of a failure shown elsewhere
            kept = [h for h in kept if not (h.id == "pip-requirement-conflict" and SIDE_NOTE_GROUPS & h.groups.keys())]
        return kept, tuple(shown)


__all__ = ["Watch"]
