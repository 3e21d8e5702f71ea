"""TOML text to a dict, each failure one error line naming the file and, where it is known, the line.

The one place that turns :mod:`tomllib`'s failures into glmcompat's: the matrix files
(:func:`glmcompat.matrix.schema.load_file`) and the dependency files (:mod:`glmcompat.readers`) read TOML
through :func:`loads`, so the message of a broken file is the same wherever it is read.

Most of a uv.lock's bytes are arrays with one inline table of plain values per line (each wheel's url, hash,
size and upload time; each dependency's name and marker), and :mod:`tomllib`, pure Python, reads them at about
4 MB/s: the judge of a fresh project lock waited 0.3 s on a 1.5 MB lock. :func:`_fast` reads such arrays with
one regular expression per array shape and hands :mod:`tomllib` the rest, a tenth of the text, so the document
is the one :mod:`tomllib` returns for the whole text (tests/model/test_tomltext.py holds them equal on every
TOML file of the tests): only an array whose every line is of that strict form (bare keys once each; a string
without escapes or control characters, a decimal integer, ``true``, ``false``) is taken, and any text that could
hide one (a multi-line string) or name the marker it leaves (an escaped NUL), or that then fails to parse, is
read by :mod:`tomllib` whole, which also words every error.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from glmcompat.model.errors import InputError

_AT = re.compile(r"\(at line (\d+), column \d+\)")
_LONG = re.compile(r"\d{4000,}")  # more digits than Python converts to an int (sys.get_int_max_str_digits)


def loads(text: str, error_cls: type[InputError], path: str) -> dict[str, Any]:
    """``tomllib.loads(text)``; a failure is ``error_cls("invalid TOML: ...", path=path, line=N)``.

    * a syntax error: tomllib's message without its ``(at line N, column M)``, the line kept;
    * an integer of more digits than Python converts (tomllib gives no position): the line of the
      first such run of digits;
    * nesting deeper than the interpreter recurses: ``nested too deeply``.
    """
    try:
        fast = _fast(text)
        return fast if fast is not None else tomllib.loads(text)
    except RecursionError:
        raise error_cls("invalid TOML: nested too deeply", path=path) from None
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = _AT.search(msg)
        msg = re.sub(r" \(at .*\)$", "", msg)
        raise error_cls(f"invalid TOML: {msg}", path=path, line=int(m.group(1)) if m else None) from None
    except ValueError as e:
        long = _LONG.search(text)
        raise error_cls(f"invalid TOML: {(str(e).splitlines() or [type(e).__name__])[0][:200]}", path=path,
                        line=text.count("\n", 0, long.start()) + 1 if long else None) from None


_VALUE = r'(?:"[^"\\\x00-\x1f\x7f]*"|0|[1-9][0-9]{0,17}|true|false)'  # a plain string, a decimal integer, a boolean
_PAIR = re.compile(r"([A-Za-z0-9_-]+) = (" + _VALUE + ")")
_ROW = re.compile(r"[ \t]+\{ ((?:[A-Za-z0-9_-]+ = " + _VALUE + r", )*[A-Za-z0-9_-]+ = " + _VALUE + r") \},")
_ARRAY = re.compile(r"^([A-Za-z0-9_-]+) = \[\n((?:[ \t]+\{ [^\n]* \},\n)+)\]$", re.M)  # a key's array, a table a line
_STRINGS = re.compile(r'^([A-Za-z0-9_-]+) = \[\n((?:[ \t]+"[^"\\\x00-\x1f\x7f]*",\n)+)\]$', re.M)  # a string a line
_TABLE = re.compile(r"^([A-Za-z0-9_-]+) = \{ ([^\n]*) \}$", re.M)  # a key's inline table, on its line
_MARK = "\x00glmcompat-value:"  # tomllib reads a NUL only from an escape, and texts with one are read whole
_SHAPES: dict[tuple[str, ...], re.Pattern[str]] = {}


def _fast(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text)`` with its arrays of one-line inline tables (:func:`_rows`), its arrays of one string a
    line and its one-line inline tables of plain values read here; None where the text is for :mod:`tomllib` whole
    (see the module's docstring)."""
    if '"""' in text or "'''" in text or "\\u0000" in text or "\\U00000000" in text:
        return None
    values: list[Any] = []

    def mark(key: str, value: Any) -> str:
        values.append(value)
        return f'{key} = "\\u0000glmcompat-value:{len(values) - 1}"'

    def rows(m: re.Match[str]) -> str:
        got = _rows(m.group(2))
        return m.group(0) if got is None else mark(m.group(1), got)

    def strings(m: re.Match[str]) -> str:
        return mark(m.group(1), [line.strip()[1:-2] for line in m.group(2).split("\n")[:-1]])

    def table(m: re.Match[str]) -> str:
        got = _table(m.group(2))
        return m.group(0) if got is None else mark(m.group(1), got)

    short = _TABLE.sub(table, _STRINGS.sub(strings, _ARRAY.sub(rows, text)))
    if not values:
        return None
    try:
        doc = tomllib.loads(short)
        _fill(doc, values)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None  # tomllib reads the whole text and says what is wrong with it
    return doc


def _table(items: str) -> dict[str, Any] | None:
    """The inline table of ``{ ITEMS }`` (each ``key = value``, of the strict form), or None."""
    m = _ROW.fullmatch(f" {{ {items} }},")
    if m is None:
        return None
    out: dict[str, Any] = {}
    for k, v in _PAIR.findall(m.group(1)):
        if k in out:
            return None  # tomllib's error to give
        out[k] = _value(v)
    return out


def _value(v: str) -> Any:
    return v[1:-1] if v[0] == '"' else True if v == "true" else False if v == "false" else int(v)


def _rows(body: str) -> list[dict[str, Any]] | None:
    """The inline tables of an array's lines (each ``  { key = value, ... },``), or None where one is not of the
    strict form. One expression per shape (the keys in order) reads a run of rows alike."""
    first = _ROW.fullmatch(body[:body.index("\n")])
    if first is None:
        return None
    keys = tuple(k for k, _ in _PAIR.findall(first.group(1)))
    if len(set(keys)) == len(keys):
        shape = _SHAPES.get(keys)
        if shape is None:
            shape = _SHAPES[keys] = re.compile(
                r"[ \t]+\{ " + ", ".join(re.escape(k) + " = (" + _VALUE + ")" for k in keys) + r" \},\n")
        rows: list[dict[str, Any]] = []
        pos = 0
        for m in shape.finditer(body):
            if m.start() != pos:
                break
            pos = m.end()
            rows.append(dict(zip(keys, map(_value, m.groups()), strict=True)))
        if pos == len(body):
            return rows
    out = []
    for line in body.split("\n")[:-1]:  # rows of several shapes (a marker on some dependencies only)
        one = _ROW.fullmatch(line)
        row = _table(one.group(1)) if one is not None else None
        if row is None:
            return None
        out.append(row)
    return out


def _fill(x: Any, values: list[Any]) -> None:
    """Each marker string :func:`_fast` left in the document, replaced by the value it stands for."""
    if isinstance(x, dict):
        for k, v in x.items():
            if isinstance(v, str):
                if v.startswith(_MARK):
                    x[k] = values[int(v[len(_MARK):])]
            elif isinstance(v, dict | list):
                _fill(v, values)
    elif isinstance(x, list):
        for v in x:
            if isinstance(v, dict | list):
                _fill(v, values)
