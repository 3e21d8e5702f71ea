"""Where a command's answer goes: stdout, or nowhere under ``-qq`` (uv's silent mode: errors still go to stderr);
and a stream the caller closed (``>&-``: the interpreter then has None) is written nowhere.

Passed explicitly (:attr:`glmcompat.cli.commands._common.Output.out`, :func:`glmcompat.cli.jsonerrors.emit`'s
``quiet``); ``sys.stdout`` and ``sys.stderr`` themselves are never swapped, nor filled. Import-light, as the start-up paths that read
:mod:`glmcompat.cli.commands._common` need: ``sys`` only (``os`` when silenced; not even ``typing``).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's (see glmcompat.cli.commands._common)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

_SILENT: list[TextIO] = []  # the stream to nowhere, opened once


def quiet_level(argv: Sequence[str]) -> int:
    """How many ``-q`` ``ARGV`` holds, as argparse counts them (``-q -q``, ``-qq``, ``--quiet``), up to a ``--``."""
    n = 0
    for a in argv:
        if a == "--":
            break
        if a == "--quiet":
            n += 1
        elif len(a) > 1 and a[0] == "-" and a[1:] == "q" * (len(a) - 1):
            n += len(a) - 1
    return n


def stdout_for(quiet: int) -> TextIO:
    """Where a command writes its answer: stdout, or with ``-qq`` (``quiet`` 2 or more) nowhere."""
    return stdout() if quiet < 2 else _nowhere()


def stdout() -> TextIO:
    """The process's stdout, or nowhere where the caller closed it."""
    return sys.stdout if sys.stdout is not None else _nowhere()


def stderr() -> TextIO:
    """The process's stderr, or nowhere where the caller closed it."""
    return sys.stderr if sys.stderr is not None else _nowhere()


def _nowhere() -> TextIO:
    if not _SILENT:
        _SILENT.append(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - lives as long as the run
    return _SILENT[0]


__all__ = ["quiet_level", "stderr", "stdout", "stdout_for"]
