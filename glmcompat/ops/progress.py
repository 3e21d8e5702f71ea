"""The resolver's progress line: what ``lock`` and ``upgrade`` show on a terminal while the core resolves."""

from __future__ import annotations

import sys
from typing import Any


class Progress:
    """A one-line progress display on a terminal (stderr); silent otherwise or with --quiet. Wraps a resolver
    source and counts what the resolver asks of it."""

    def __init__(self, inner: Any, quiet: bool) -> None:
        self.inner = inner
        self.show = not quiet and sys.stderr.isatty()
        self.pages = 0
        self.metas = 0

    def _tick(self, what: str) -> None:
        if self.show:
            sys.stderr.write(f"\r\033[2K  resolving the core: {self.pages} project page(s), {self.metas} METADATA read(s) — {what}")
            sys.stderr.flush()

    def versions(self, name: str) -> list[str]:
        self.pages += 1
        self._tick(name)
        out: list[str] = self.inner.versions(name)
        return out

    def requires(self, name: str, version: str) -> list[str]:
        self.metas += 1
        self._tick(f"{name} {version}")
        out: list[str] = self.inner.requires(name, version)
        return out

    def done(self) -> None:
        if self.show:
            sys.stderr.write("\r\033[2K")
            sys.stderr.flush()

    def __getattr__(self, name: str) -> Any:  # the rest of the source's API (wheel, unavailable, platform)
        return getattr(self.inner, name)
