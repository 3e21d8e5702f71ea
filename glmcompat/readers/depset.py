"""What a dependency file reads as: its :class:`Entry` rows and the :class:`Lock` that holds them, and the
small text helpers every reader shares (TOML with glmcompat's errors, the line of a string).

Both :mod:`glmcompat.readers.lockfiles` (uv.lock, pylock.toml, the dispatch and the cache) and
:mod:`glmcompat.readers.formats` (requirements files, poetry.lock, pdm.lock, Pipfile.lock, conda files)
build on this module; neither imports the other's data model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glmcompat.model.errors import LockFormatError
from glmcompat.model.tomltext import loads

SOURCE_KINDS = ("registry", "wheel", "git", "path", "directory", "editable", "url")
BUILT_FROM_SOURCE = frozenset({"git", "path", "directory", "editable", "url"})


@dataclass(frozen=True)
class Entry:
    """One distribution a dependency file names.

    ``version`` is the exact version (local label kept: ``2.9.1+cu128``), or None when the file does not
    pin it exactly (``torch>=2.8``, ``torchvision==0.24.*``): then ``spec`` holds what it asks for.
    ``source`` says where it comes from: ``registry`` (an index), ``wheel`` (a wheel file or URL: its
    name and version come from the file name), or a source build (``git``, ``path``, ``directory``,
    ``editable``, ``url`` of an sdist). ``constraint`` entries (``-c`` files) narrow what something else
    installs and install nothing. ``origin`` names the file it was read from when that is an include,
    ``line`` its line there.
    """

    name: str
    version: str | None
    marker: str | None = None
    source: str = "registry"
    spec: str | None = None
    constraint: bool = False
    origin: str | None = None
    line: int | None = None


# An environment is a plain dict (so it caches as JSON):
#   {"name": "extra sglang, Python 3.12, Linux x86_64" ("" when the file has only one),
#    "platform": "x86_64" | "aarch64",                      # the machine (a platform nothing installs on has none)
#    "packages": {canonical name: exact version},          # what installs there
#    "sources": {name: source kind},                         # only the ones not from a registry
#    "unpinned": {name: specifier},                          # named without an exact pin
#    "overrides": {name: specifier},                         # uv override-dependencies (deliberate)
#    "missing_wheels": {name: version}}                      # uv.lock only, when any: no wheel for the machine, no sdist
Env = dict[str, Any]


@dataclass(frozen=True)
class Lock:
    path: str
    kind: str  # "uv.lock" | "pylock.toml" | "requirements.txt" | "poetry.lock" | "pdm.lock" | "Pipfile.lock" | "environment.yml"
    entries: tuple[Entry, ...]
    requires_python: str | None = None
    sets: tuple[Env, ...] = ()  # filled by read_lock: the environments the file installs on the target platform
    meta: dict[str, Any] = field(default_factory=dict)  # build settings ("no_build_isolation"), notes, overrides


def toml(path: Path, text: str) -> dict[str, Any]:
    """The TOML document of a dependency file; a :class:`LockFormatError` naming the file and line if it is not."""
    return loads(text, LockFormatError, str(path))


def line_of(text: str, needle: str) -> int | None:
    """The 1-based line where ``needle`` first occurs in ``text``, or None."""
    i = text.find(needle)
    return text.count("\n", 0, i) + 1 if i >= 0 else None
