"""One TOML reader for the matrix files and the dependency files (:func:`glmcompat.model.tomltext.loads`): the
same broken text is the same one-line error, naming the file and the line, whichever reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.matrix.schema import load_file
from glmcompat.model.errors import GlmcompatError, LockFormatError, MatrixError
from glmcompat.model.tomltext import loads
from glmcompat.readers.formats import read_lock

BROKEN = [  # (text, message, line)
    ('a = 1\nb = "unterminated\n', "invalid TOML: Illegal character '\\n'", 2),
    ("a = 1\na = 2\n", "invalid TOML: Cannot overwrite a value", 2),
    ("x = 1\ny = " + "9" * 5000 + "\n", "invalid TOML: Exceeds the limit (4300 digits) for integer string conversion", 2),
    ("x = " + "[" * 3000 + "]" * 3000 + "\n", "invalid TOML: nested too deeply", None),
]


@pytest.mark.parametrize("text,message,line", BROKEN)
def test_loads_names_the_file_and_line(text: str, message: str, line: int | None) -> None:
    with pytest.raises(MatrixError) as e:
        loads(text, MatrixError, "m.toml")
    assert e.value.message.startswith(message) and e.value.line == line and e.value.path == "m.toml"
    assert "\n" not in str(e.value) and "(at line" not in str(e.value)


def test_loads_reads_valid_toml() -> None:
    assert loads('a = 1\n[t]\nb = "x"\n', LockFormatError, "f.toml") == {"a": 1, "t": {"b": "x"}}


@pytest.mark.parametrize("text,message,line", BROKEN)
def test_matrix_and_locks_say_the_same(tmp_path: Path, text: str, message: str, line: int | None) -> None:
    errors: list[GlmcompatError] = []
    for name, read in (("torch.toml", load_file), ("uv.lock", read_lock), ("pylock.toml", read_lock),
                       ("poetry.lock", read_lock)):
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises((MatrixError, LockFormatError)) as e:
            read(p)
        errors.append(e.value)
        assert e.value.one_line() == (f"{p}:{line}: " if line else f"{p}: ") + e.value.message
    assert isinstance(errors[0], MatrixError) and all(isinstance(x, LockFormatError) for x in errors[1:])
    assert len({(x.message, x.line) for x in errors}) == 1, [str(x) for x in errors]
