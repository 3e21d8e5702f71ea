"""One root exception type; narrow subclasses. Messages quote the input and name the file/line.

The exit-code contract (every command, see :func:`glmcompat.cli.main`):

* 0 ok; 1 findings (the stack is unsafe) and nothing else: a crash is never 1;
* 2 bad input or usage: a file that cannot be read or parsed (naming the file, and the line where
  one applies), an unknown name, a bad option;
* 3 the environment failed: the network or the index (every httpx error, an overall deadline or a
  response-size cap passed), the file system (any ``OSError``: a read-only or full ``--out``, a
  read-only cache), uv, memory;
* 4 an internal error: an exception glmcompat did not expect, printed as one ``error: internal
  error: ...`` line with a hint to report it (``GLMCOMPAT_DEBUG=1`` shows the traceback);
* 130 interrupted.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: this module is imported where start-up time counts
if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.model.findings import Cause

EXIT_UNSAFE = 1
EXIT_INPUT = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130

MAX_LINE = 400  # characters of an error line: a hostile value quoted in a message must not flood the terminal


class GlmcompatError(Exception):
    """Root of every error glmcompat raises on purpose.

    ``exit_code`` is what the CLI exits with: 2 for bad input or usage, 1 for findings that make
    a stack unsafe, 3 for environment failures (network, uv).
    """

    exit_code = EXIT_INPUT

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


class NoTarget(InputError):
    """No target anywhere: neither the caller (the command line's ``--target`` or ``GLMCOMPAT_TARGET``, the library's
    argument) nor ``[tool.glmcompat] targets`` of the project names one. The one error of every command and library
    call that needs a target, in one wording (the command line's); what differs is data: ``argument`` (how the caller
    names targets: ``--target``, the library's ``targets`` or ``target``) and ``where`` (the pyproject.toml whose
    table was read; None where there is none)."""

    def __init__(self, where: str | None, *, argument: str = "--target") -> None:
        self.where = where
        self.argument = argument
        place = where or "the project's pyproject.toml"
        super().__init__(f"no target: neither --target (or GLMCOMPAT_TARGET) nor [tool.glmcompat] targets in {place} "
                         "names one; pass --target (e.g. --target sm120)")


class MatrixError(InputError):
    """The compatibility matrix is malformed or contradicts itself."""


class LockFormatError(InputError):
    """A lockfile or requirements file that cannot be read."""


class UnsafeError(GlmcompatError):
    """What was asked for cannot be made safe (exit 1). ``causes``: why, structured (the message is their
    rendering), for reports that carry more than the one line."""

    exit_code = EXIT_UNSAFE

    def __init__(self, message: str, *, causes: tuple[Cause, ...] = (), path: str | None = None,
                 line: int | None = None) -> None:
        self.causes = causes
        super().__init__(message, path=path, line=line)


class EnvironmentFailure(GlmcompatError):
    """Something outside the input failed: the network, the index, the uv binary."""

    exit_code = EXIT_ENVIRONMENT


class InternalError(GlmcompatError):
    """An error glmcompat did not expect (a bug), as the library raises it: the original is its ``__cause__``."""

    exit_code = EXIT_INTERNAL


# -- the top-level contract ---------------------------------------------------------------------------

_NETWORK_MODULES = ("httpx", "httpcore", "h11", "h2", "anyio", "ssl")


def _flat(text: str, cap: int = MAX_LINE) -> str:
    """``text`` on one line, capped at ``cap`` characters, credentials in URLs hidden."""
    import re  # lazy: start-up path (cli.fastpath records through matrix.store)

    one = " ".join(text.split())
    # a scheme is tried only where a run of scheme characters starts: linear (``\w+://`` tried at every position of
    # a long word, each try scanning to its end, took 77 s on a 1.6 MB line)
    one = re.sub(r"(?<![\w+.-])([\w+.-]+://)[^/@\s]*@", r"\1***@", one)
    return one if len(one) <= cap else one[: cap - 3] + "..."


OWN_MAX_LINE = 4000  # glmcompat's own messages quote capped values; a uv-style derivation and its hint stay whole


def is_network_error(exc: BaseException) -> bool:
    """Whether ``exc`` comes from the HTTP stack (httpx and what it is built on), by its class's module:
    classifying must not import httpx (the warm ``check`` path never loads it)."""
    return any(k.__module__.split(".")[0] in _NETWORK_MODULES for k in type(exc).__mro__[:-2])


def _os_message(exc: OSError) -> str:
    what = exc.strerror or str(exc) or type(exc).__name__
    name = exc.filename
    if name is not None:
        other = f" -> {exc.filename2}" if exc.filename2 is not None else ""
        return f"{name}{other}: {what}"
    return what


def classify(exc: BaseException, tracker: str = "glmcompat's issue tracker") -> tuple[int, str]:
    """(exit code, the one line to print after ``error: ``) for an exception that reached the top."""
    if isinstance(exc, GlmcompatError):
        return exc.exit_code, _flat(exc.one_line(), OWN_MAX_LINE)
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    if is_network_error(exc):
        detail = str(exc) or type(exc).__name__
        url = _request_url(exc)
        where = f"{url}: " if url else ""
        return EXIT_ENVIRONMENT, _flat(f"network: {where}{type(exc).__name__}: {detail}")
    if isinstance(exc, OSError):
        return EXIT_ENVIRONMENT, _flat(_os_message(exc))
    if isinstance(exc, MemoryError):
        return EXIT_ENVIRONMENT, "out of memory"
    detail = str(exc) or "(no message)"
    return EXIT_INTERNAL, _flat(f"internal error: {type(exc).__name__}: {detail}") + \
        f" (please report this at {tracker}; rerun with GLMCOMPAT_DEBUG=1 for the traceback)"


def _request_url(exc: BaseException) -> str | None:
    try:
        req = getattr(exc, "request", None)  # httpx raises RuntimeError when none is attached
    except Exception:
        return None
    url = getattr(req, "url", None)
    return str(url) if url is not None else None


class WheelError(InputError):
    """A wheel (or one of its members) that cannot be read as what it claims to be."""

    def __init__(self, wheel: str, message: str, member: str | None = None) -> None:
        self.wheel = wheel
        self.member = member
        where = f"{wheel}: {member}" if member else wheel
        super().__init__(f"{where}: {message}")


class TransferError(WheelError):
    """The server failed to deliver the wheel's bytes (answers cut short again and again, a stall past the
    deadline, an unexpected HTTP status): an environment failure (exit 3), not a bad wheel."""

    exit_code = EXIT_ENVIRONMENT


__all__ = ["EXIT_ENVIRONMENT", "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_UNSAFE", "EnvironmentFailure",
           "GlmcompatError", "InputError", "InternalError", "LockFormatError", "MatrixError", "TransferError",
           "UnsafeError", "WheelError", "classify", "is_network_error"]
