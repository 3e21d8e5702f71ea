"""What glmcompat's own caches key on besides their inputs: the version, and the size and mtime of every
module of the installed package (so an editable install whose code changed never serves a verdict or a
parse the new code would not give). Imports only ``os``; costs one ``stat`` per module."""

from __future__ import annotations

import os

_memo: str | None = None


def code_fingerprint() -> str:
    global _memo
    if _memo is None:
        from glmcompat import __version__

        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the glmcompat package
        parts = [__version__]
        _walk(here, "", parts)
        _memo = "\n".join(parts)
    return _memo


def _walk(directory: str, prefix: str, parts: list[str]) -> None:
    """``relative/path.py:size:mtime_ns`` of every module under ``directory``, sorted (scandir: one
    ``stat`` per module, no path arithmetic)."""
    with os.scandir(directory) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            if e.name != "__pycache__":
                _walk(e.path, f"{prefix}{e.name}/", parts)
        elif e.name.endswith(".py"):
            st = e.stat()
            parts.append(f"{prefix}{e.name}:{st.st_size}:{st.st_mtime_ns}")
