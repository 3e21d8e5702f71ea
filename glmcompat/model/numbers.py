"""Numbers read from input are length-checked before ``int()`` sees them.

Python refuses to convert a string of more than 4,300 digits (``sys.get_int_max_str_digits``) with a ValueError that
names no input, and packaging's ``Version`` calls ``int()`` on every release segment. No version, compute capability,
glibc or Python release has more than :data:`MAX_DIGITS` digits in a row, so every parser of a value from the command
line or a file asks :func:`check_digits` (or :func:`to_int`) first: a longer run is an :class:`InputError` (exit 2)
that quotes the value, shortened. Imports only ``re``: the start-up paths use it.
"""

from __future__ import annotations

import re

from glmcompat.model.errors import InputError

MAX_DIGITS = 64
_LONG = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")
_SHOWN = 40  # characters of the value quoted in the message


class TooManyDigits(InputError, ValueError):
    """A number of more than :data:`MAX_DIGITS` digits in an input value. A ValueError too, so the readers that turn
    a value packaging refuses into a file:line error treat it the same way."""


def shorten(text: str) -> str:
    """``text`` as a message quotes it: at most :data:`_SHOWN` characters, then how many more."""
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text)} characters)"


def check_digits(text: str, what: str) -> str:
    """``text`` when no run of digits in it is longer than :data:`MAX_DIGITS`; :class:`TooManyDigits` naming
    ``what`` (``--target``, ``--with``, ``requirements.txt:3``) otherwise."""
    m = _LONG.search(text)
    if m is not None:
        raise TooManyDigits(f"{what}: {shorten(text)!r} holds a number of {len(m.group())} digits; no version, "
                            f"GPU target or platform tag has more than {MAX_DIGITS}")
    return text


def to_int(text: str, what: str) -> int:
    """``int(text)`` for a string of digits from input, its length checked first (:func:`check_digits`)."""
    return int(check_digits(text, what))
