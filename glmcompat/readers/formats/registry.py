"""The formats glmcompat reads, in the order a file is recognised: adding a format is one module (its reader and
its :class:`~glmcompat.readers.formats.common.Format`) and one entry here."""

from __future__ import annotations

import re
from pathlib import Path

from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats import conda, pdm, pipfile, poetry, pylock, requirements, uvlock
from glmcompat.readers.formats.common import Format

# sniffing order: a document that shows the signs of two formats is the first one's
FORMATS: tuple[Format, ...] = (poetry.FORMAT, pdm.FORMAT, pylock.FORMAT, uvlock.FORMAT, pipfile.FORMAT, conda.FORMAT,
                               requirements.FORMAT)
BY_KIND = {f.kind: f for f in FORMATS}
FALLBACK = next(f for f in FORMATS if f.fallback)

READABLE = ("uv.lock, pylock.toml, requirements files (*.txt, *.in, requirements*.lock, pip freeze, uv pip compile), "
            "poetry.lock, pdm.lock, Pipfile.lock, conda environment.yml, or a pyproject.toml with one of them beside it")

# the locks a pyproject.toml names, in the order one is taken when several are beside it
BESIDE: tuple[str, ...] = tuple(f.kind for f in sorted((f for f in FORMATS if f.beside is not None),
                                                      key=lambda f: f.beside or 0))

_NAMES = tuple((f.kind, re.compile("|".join(f"(?:{n})" for n in (*f.names, *f.loose)), re.DOTALL))
               for f in FORMATS if f.names or f.loose)
_CONVENTIONAL = re.compile("|".join(f"(?:{n})" for f in FORMATS for n in f.names), re.DOTALL)
_SIGNS = tuple((f, tuple(tuple(re.compile(p, re.MULTILINE) for p in sign) for sign in f.signs)) for f in FORMATS)
_TOML_TABLE = re.compile(r"^\[{1,2}[A-Za-z_.\"-]+\]{1,2}\s*$", re.MULTILINE)


def kind_from_name(name: str) -> str | None:
    """The kind a well-known file name tells (``poetry.lock``, ``conda-cuda.yml``, ``requirements-dev.lock``,
    ``*.txt``, ...), or None when only the content can tell (``prod.lock``, ``env.yaml``)."""
    low = name.lower()
    return next((kind for kind, pattern in _NAMES if pattern.fullmatch(low)), None)


def conventional(name: str) -> bool:
    """Whether ``name`` is a dependency file's conventional name (``uv.lock``, ``requirements-gpu.txt``,
    ``environment.yml``, ``pyproject.toml``: not a ``README.txt``, whose name only suggests a requirements file)."""
    low = name.lower()
    return low == "pyproject.toml" or _CONVENTIONAL.fullmatch(low) is not None


def sniff_kind(path: Path, text: str) -> str | None:
    """The kind a file's content tells, for names that do not (``locks/prod.lock``, ``env.yaml``, a
    ``deps.txt`` that is really a poetry.lock): one of the lock kinds, the fallback (requirements) for anything
    else that reads as text lines, or None for a TOML or JSON document of no known kind."""
    body = text.lstrip("\ufeff")
    is_json = body.lstrip().startswith("{")
    for fmt, signs in _SIGNS:
        if fmt.json == is_json and any(all(p.search(body) for p in sign) for sign in signs):
            return fmt.kind
    if is_json or _TOML_TABLE.search(body):
        return None  # JSON, or TOML tables of some other document (a pyproject.toml, a config)
    return FALLBACK.kind


def detect_kind(path: Path) -> str | None:
    """The kind a file's name tells (``pyproject.toml`` included), or None when only its content can."""
    if path.name == "pyproject.toml":
        return "pyproject.toml"
    return kind_from_name(path.name)


def kind_of(path: Path, text: str) -> str:
    """The kind by name, else by content; LockFormatError listing what glmcompat reads otherwise."""
    kind = detect_kind(path) or sniff_kind(path, text)
    if kind is None:
        raise LockFormatError(f"unknown file kind (glmcompat reads {READABLE})", path=str(path))
    return kind
