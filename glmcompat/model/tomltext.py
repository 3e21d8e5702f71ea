"""TOML text to a dict, each failure one error line naming the file and, where it is known, the line.

The one place that turns :mod:`tomllib`'s failures into glmcompat's: the matrix files
(:func:`glmcompat.matrix.schema.load_file`) and the dependency files (:mod:`glmcompat.readers`) read TOML
through :func:`loads`, so the message of a broken file is the same wherever it is read.
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
        return tomllib.loads(text)
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
