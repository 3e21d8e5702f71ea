"""The check rules: a pure function from (installed packages, target, model, matrix) to findings.

One module per family of breaks (``abi``, ``family``, ``gpu_code``, ``cuda``, ...), each declaring its check and its
:class:`~glmcompat.decide.rules.context.Rule`; :mod:`.registry` lists them in one table; :func:`evaluate` runs them
all over one set and :func:`evaluate_lock` over every environment of a lock. Nothing here does I/O: ``glmcompat
check`` feeds it a lockfile's packages, ``glmcompat verify`` the installed distributions, the resolver a candidate set.
"""

from __future__ import annotations

from glmcompat.decide.rules.context import Context, Rule, label_torch
from glmcompat.decide.rules.judge import evaluate, stack_findings
from glmcompat.decide.rules.implied import RESOLVED_AT_INSTALL, Implied, resolve_named
from glmcompat.decide.rules.lockjudge import evaluate_lock
from glmcompat.decide.rules.registry import RULES

__all__ = ["RESOLVED_AT_INSTALL", "RULES", "Context", "Implied", "Rule", "evaluate", "evaluate_lock", "label_torch",
           "resolve_named", "stack_findings"]
