"""What the probe processes and the parent of ``glmcompat verify`` share: the record type, the line
protocol (nonce and markers) and the exact text of an error. Standard library only: :mod:`glmcompat.ops.verify.gpuchecks` imports it at module level
inside the serving container, before any package under test."""

from __future__ import annotations

import traceback
from typing import Any

Record = dict[str, Any]

NONCE_ENV = "GLMCOMPAT_PROBE_NONCE"


MAX_RECORD = 4 << 20  # characters of one record line; longer lines are dropped, never buffered whole


def marks(nonce: str) -> tuple[str, str, str, str]:
    """The (probe record, group exit, no fork, gathered reports) line markers of a probe process whose
    parent chose ``nonce``: a package under test that prints a marker line without the nonce (by accident
    or on purpose) is ignored, so it can neither spoof a result nor break the parent's parsing."""
    tag = f"@{nonce}" if nonce else ""
    return (f"@@glmcompat-probe{tag} ", f"@@glmcompat-exit{tag} ", f"@@glmcompat-nofork{tag}",
            f"@@glmcompat-gathered{tag} ")


def error_text(e: BaseException) -> str:
    """The exact error, with its chain (cause first), one exception per line."""
    chain: list[BaseException] = []
    cur: BaseException | None = e
    while cur is not None and cur not in chain and len(chain) < 6:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    lines = []
    for exc in reversed(chain):
        lines.append("".join(traceback.format_exception_only(type(exc), exc)).strip())
    return "\n".join(lines)


def absent(pid: str, module: str) -> Record:
    """Probe ``pid`` skipped because ``module`` is not installed: ``absent`` names the module (what decisions
    read; the summary is for people)."""
    return {"id": pid, "status": "skipped", "summary": f"{module} is not installed", "seconds": 0.0, "absent": module}


__all__ = ["MAX_RECORD", "NONCE_ENV", "Record", "absent", "error_text", "marks"]
