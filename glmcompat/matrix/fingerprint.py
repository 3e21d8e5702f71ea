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
        for root, dirs, files in os.walk(here):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                if f.endswith(".py"):
                    st = os.stat(os.path.join(root, f))
                    parts.append(f"{os.path.relpath(os.path.join(root, f), here)}:{st.st_size}:{st.st_mtime_ns}")
        _memo = "\n".join(parts)
    return _memo
