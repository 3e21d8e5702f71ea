"""One root exception type; narrow subclasses. Messages quote the input and name the file/line."""

from __future__ import annotations


class GlmcompatError(Exception):
    """Root of every error glmcompat raises on purpose.

    ``exit_code`` is what the CLI exits with: 2 for bad input or usage, 1 for findings that make
    a stack unsafe, 3 for environment failures (network, uv).
    """

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return where + self.message


class InputError(GlmcompatError):
    """Bad input: a file that cannot be read or parsed, an unknown name, a bad option."""


class MatrixError(InputError):
    """The compatibility matrix is malformed or contradicts itself."""


class LockFormatError(InputError):
    """A lockfile or requirements file that cannot be read."""


class UnsafeError(GlmcompatError):
    """What was asked for cannot be made safe (exit 1)."""

    exit_code = 1


class EnvironmentFailure(GlmcompatError):
    """Something outside the input failed: the network, the index, the uv binary."""

    exit_code = 3
