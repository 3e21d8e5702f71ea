"""Shape checks of JSON that glmcompat read back from its own cache: the one vocabulary every stored thing's reader
uses (:data:`glmcompat.edges.cache.SHAPES`, the parsed-lock cache of :mod:`glmcompat.readers.formats`). Each check
takes a decoded JSON value and answers whether it has the shape; a value of another shape is a miss, recomputed by
the caller, never a crash. Pure, standard library only."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]


def decoded(raw: str | bytes | None) -> Any:
    """The JSON value ``raw`` holds; None where it holds none: empty, not JSON, or nested deeper than the parser goes
    (a miss, never a crash)."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def is_str(v: Any) -> bool:
    return isinstance(v, str)


def is_int(v: Any) -> bool:
    return type(v) is int


def is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def opt(check: Check) -> Check:
    """``check``, or None."""
    return lambda v: v is None or check(v)


def list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(map(check, v))


def map_of(check: Check) -> Check:
    """A JSON object with string keys whose values pass ``check``."""
    return lambda v: isinstance(v, dict) and all(isinstance(k, str) and check(x) for k, x in v.items())


str_list = list_of(is_str)
int_list = list_of(is_int)
str_map = map_of(is_str)
str_int_map = map_of(is_int)


def fields(v: Any, required: dict[str, Check], optional: dict[str, Check] | None = None) -> bool:
    """A JSON object holding every ``required`` key with a value that passes its check, and passing the check of each
    ``optional`` key it holds (other keys are not looked at)."""
    return (isinstance(v, dict) and all(k in v and check(v[k]) for k, check in required.items())
            and all(check(v[k]) for k, check in (optional or {}).items() if k in v))
