"""glmcompat's lines in a user's pyproject.toml, on its text: reading the file, and :func:`without_ours` and
:func:`with_core` (see :mod:`glmcompat.readers.pyproject`, which holds the project as uv sees it and names these
too). Apart from that module because the start of a cold project lock reads and writes a pyproject.toml before uv
starts (:mod:`glmcompat.ops.projectguess`), and that module's dataclasses cost that start a few milliseconds."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from glmcompat.model.errors import InputError
from glmcompat.model.tomltext import loads

MARK = "# glmcompat lock"
KEYS = ("constraint-dependencies", "override-dependencies")
MAX_PYPROJECT = 4 * 1024 * 1024  # a pyproject.toml larger than this is not one


def read_text(path: Path) -> str:
    """A pyproject.toml's text (UTF-8, a regular file of sane size); InputError naming it otherwise."""
    try:
        st = path.stat()
        if st.st_size > MAX_PYPROJECT:
            raise InputError(f"larger than {MAX_PYPROJECT // (1024 * 1024)} MiB; not a pyproject.toml", path=str(path))
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read it: {e.strerror or e}", path=str(path)) from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 (byte {e.start})", path=str(path)) from None


def parse(path: Path, text: str) -> dict[str, Any]:
    return loads(text, InputError, str(path))


# ------------------------------------------------------------------------------------------------
# glmcompat's lines in the user's pyproject.toml
# ------------------------------------------------------------------------------------------------

_ITEM = re.compile(r'\n[ \t]*"[^"\\\n]*",[ \t]*' + re.escape(MARK) + r"\b[^\n]*")
_END = re.compile(r"\n[ \t]*" + re.escape(MARK) + r": end\n[ \t]*")
_OWN_KEY = re.compile(r"(?m)^(?:constraint|override)-dependencies = \[  " + re.escape(MARK) + r"\n\]\n")
_OWN_TABLE = re.compile(r"\n\[tool\.uv\]  " + re.escape(MARK) + r"\n(?=\[|\Z)")
_TABLE = re.compile(r"(?m)^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*uv[ \t]*\][ \t]*(?:#[^\n]*)?$")
_HEADER = re.compile(r"(?m)^[ \t]*\[")


def _arrays(doc: Mapping[str, Any]) -> dict[str, list[Any]]:
    tool = doc.get("tool", {})
    uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
    uv = uv if isinstance(uv, dict) else {}
    return {k: list(uv[k]) if isinstance(uv.get(k), list) else [] for k in KEYS}


def _rest(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document without the two arrays glmcompat edits (and without a [tool.uv] that holds nothing else)."""
    out = dict(doc)
    tool = dict(out.get("tool", {})) if isinstance(out.get("tool"), dict) else None
    if tool is None:
        return out
    uv = tool.get("uv")
    if isinstance(uv, dict):
        uv = {k: v for k, v in uv.items() if k not in KEYS}
        if uv:
            tool["uv"] = uv
        else:
            tool.pop("uv")
    if tool:
        out["tool"] = tool
    else:
        out.pop("tool")
    return out


def ours(path: Path, text: str) -> dict[str, list[str]]:
    """The entries glmcompat wrote, per key (``constraint-dependencies``, ``override-dependencies``)."""
    doc = parse(path, text)
    arrays = _arrays(doc)
    found: dict[str, list[str]] = {k: [] for k in KEYS}
    for m in _ITEM.finditer(text):
        value = m.group(0).split('"')[1]
        for k in KEYS:
            if arrays[k].count(value) > found[k].count(value):
                found[k].append(value)
                break
    return found


def reasons(text: str) -> dict[str, str]:
    """The reason glmcompat wrote after each of its lines' mark (``# glmcompat lock: REASON``), by the line's value."""
    out: dict[str, str] = {}
    for m in _ITEM.finditer(text):
        line = m.group(0)
        value = line.split('"')[1]
        why = line.split(MARK, 1)[1]
        if why.startswith(": "):
            out[value] = why[2:].strip()
    return out


def _minus(values: list[Any], drop: list[str]) -> list[Any]:
    """``values`` with each of ``drop`` removed once."""
    out = list(values)
    for d in drop:
        if d in out:
            out.remove(d)
    return out


def without_ours(path: Path, text: str) -> str:
    """``text`` without glmcompat's lines (and the key or table it created, once empty)."""
    if MARK not in text:
        return text
    new = _END.sub("", _ITEM.sub("", text), count=0)
    new = _OWN_KEY.sub("", new)
    new = _OWN_TABLE.sub("", new)
    before, after = parse(path, text), parse(path, new)
    mine = ours(path, text)
    want = {k: _minus(_arrays(before)[k], mine[k]) for k in KEYS}
    if _rest(before) != _rest(after) or _arrays(after) != want:
        raise InputError(f"the lines marked `{MARK}` are not where glmcompat writes them ([tool.uv] "
                         f"{' / '.join(KEYS)}); remove them by hand", path=str(path))
    return new


def _comment(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


def _lines(entries: list[tuple[str, str]], indent: str) -> str:
    return "".join(f'\n{indent}"{value}",  {MARK}{": " + _comment(why) if why else ""}' for value, why in entries)


def with_core(path: Path, text: str, entries: Mapping[str, list[tuple[str, str]]]) -> str:
    """``text`` (already without glmcompat's lines) with ``entries`` -- per key, ``(requirement, reason)`` --
    inserted at the head of ``[tool.uv]``'s arrays; the key, or ``[tool.uv]`` itself, created when absent."""
    for key, items in entries.items():
        for value, _ in items:
            if '"' in value or "\\" in value or not value.isprintable():
                raise InputError(f"cannot write {value!r} into {key}", path=str(path))
    doc = parse(path, text)
    new = text
    for key in reversed(KEYS):  # each goes first in [tool.uv]: constraints end up above overrides
        items = entries.get(key, [])
        if items:
            new = _insert(path, new, key, items)
    try:
        after = parse(path, new)
    except InputError:
        after = {}
    want = {k: [v for v, _ in entries.get(k, [])] + _arrays(doc)[k] for k in KEYS}
    if _rest(doc) != _rest(after) or _arrays(after) != want:
        raise InputError("cannot place glmcompat's constraints in it: [tool.uv] is written in a form glmcompat does "
                         "not edit (dotted keys or an inline table); write it as a `[tool.uv]` table", path=str(path))
    return new


def _insert(path: Path, text: str, key: str, items: list[tuple[str, str]]) -> str:
    table = _TABLE.search(text)
    if table is None:  # (a [tool.uv] made of dotted keys makes this invalid TOML: with_core refuses it)
        sep = "" if text.endswith("\n") or not text else "\n"
        return (text + sep + ("\n" if text else "") + f"[tool.uv]  {MARK}\n"
                + f"{key} = [  {MARK}" + _lines(items, "    ") + "\n]\n")
    start = table.end()
    nxt = _HEADER.search(text, start + 1)
    end = nxt.start() if nxt else len(text)
    m = re.search(r"(?m)^[ \t]*" + re.escape(key) + r"[ \t]*=[ \t]*\[", text[start:end])
    if m is None:
        eol = text.find("\n", start)
        at = len(text) if eol < 0 else eol + 1
        block = f"{key} = [  {MARK}" + _lines(items, "    ") + "\n]\n"
        return text[:at] + ("\n" if eol < 0 else "") + block + text[at:]
    bracket = start + m.end()
    eol = text.find("\n", bracket)
    rest = text[bracket: len(text) if eol < 0 else eol]
    if rest.strip() == "" or rest.strip().startswith("#"):
        at = len(text) if eol < 0 else eol
        return text[:at] + _lines(items, "    ") + text[at:]
    # The array's first item is on the line of its "[": glmcompat's lines go before it, closed by an end marker.
    return text[:bracket] + _lines(items, "    ") + f"\n    {MARK}: end\n    " + text[bracket:]
