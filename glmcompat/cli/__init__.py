"""Command-line entry point. Each command lives in its own module, imported only when it runs.

Exit codes everywhere: 0 ok, 1 findings (the stack is unsafe), 2 bad input or usage, 3 the
environment failed (network, index, file system, uv), 4 an internal error (a bug: one line asking for
a report; ``GLMCOMPAT_DEBUG=1`` prints the traceback), 130 interrupted. A crash is never 1. See
:func:`glmcompat.model.errors.classify`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: every run reads this module, and typing costs the warm paths
if TYPE_CHECKING:
    from collections.abc import Sequence

# name -> (module, one-line help). Keep this table import-free: it is read on every run.
COMMANDS: dict[str, tuple[str, str]] = {
    "lock": ("glmcompat.cli.commands.lock", "resolve the coupled core for a GPU target and write host-free lockfiles"),
    "upgrade": ("glmcompat.cli.commands.upgrade", "show the newest safe core set for a target and why newer ones are skipped"),
    "check": ("glmcompat.cli.commands.check", "check a lockfile or requirements file for a GPU target"),
    "verify": ("glmcompat.cli.commands.verify", "prove that the installed stack loads and runs its kernels on this GPU"),
    "explain": ("glmcompat.cli.commands.verify", "explain known failure signatures in a server log"),
    "abi": ("glmcompat.cli.commands.abi", "compare an extension's torch symbols with a torch release, from the wheels"),
    "arch": ("glmcompat.cli.commands.abi", "list the GPU code (SASS/PTX) in a wheel's extensions"),
    "matrix": ("glmcompat.cli.commands.matrix", "validate, show, describe or extend the compatibility matrix"),
    "targets": ("glmcompat.cli.commands.matrix", "list the GPU targets"),
}


def _usage() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = ["usage: glmcompat [--version] COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {n:<{width}}  {h}" for n, (_, h) in COMMANDS.items()]
    lines += ["", "Run 'glmcompat COMMAND --help' for a command's options."]
    return "\n".join(lines)


def _sane_streams() -> None:
    """Streams every answer can be written to: a stdout or stderr the caller closed (``>&-``: Python then has None)
    goes to /dev/null, and one whose encoding cannot spell a character (``PYTHONIOENCODING=ascii``) escapes it
    instead of failing the run after the verdict was made."""
    import os

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            try:
                setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - lives as long as the run
            except OSError:
                continue
        elif getattr(stream, "errors", None) == "strict":
            try:
                stream.reconfigure(errors="backslashreplace")
            except (AttributeError, ValueError, OSError):
                pass


def main(argv: Sequence[str] | None = None) -> int:
    _sane_streams()
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] in ("--version", "-V"):
        from glmcompat import __version__

        print(f"glmcompat {__version__}")
        return 0
    name = args[0]
    entry = COMMANDS.get(name)
    if entry is None:
        print(f"error: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    try:
        if name == "check" and not _special_file_named(args[1:]):
            try:
                from glmcompat.cli.fastpath import lookup

                rc = lookup(args[1:])
            except (BrokenPipeError, KeyboardInterrupt):
                raise
            except Exception:
                rc = None  # a damaged verdict cache is a miss: the full path answers and replaces it
            if rc is not None:
                return rc
        if name == "lock" and not _project_mode(args[1:]):
            rc = _fast_lock(args[1:])
            if rc is not None:
                return rc
            _speculate(args[1:])
        import importlib

        module = importlib.import_module(entry[0])
        if name == "lock":
            from glmcompat.cli.fastlock import record

            return record(args[1:], lambda: int(module.main(name, args[1:])))
        return int(module.main(name, args[1:]))
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except SystemExit:
        raise
    except BaseException as e:  # the one place every failure becomes one line and an exit code
        return _report(e)
    finally:
        spec = sys.modules.get("glmcompat.ops.speculate")
        if spec is not None:
            spec.discard()  # a speculative uv nobody took (the run failed, or asked something else)


def _project_mode(argv: list[str]) -> bool:
    """Whether ``lock ARGV`` may lock the user's project (or a requirements.in) rather than a curated stack: then
    the stack's start-up paths (a recorded no-op, a speculative uv) must not answer. With ``os`` alone: no --stack,
    --out, --with or --engine, and a pyproject.toml at or above the working directory that glmcompat did not
    generate, or a positional argument. A wrong "yes" only costs the stack path its head start."""
    import os

    if any(a in ("--stack", "--out", "--with", "--engine") or a.startswith(("--stack=", "--out=", "--with=", "--engine="))
           for a in argv):
        return False
    if "--project" in argv or any(a.startswith("--project=") for a in argv):
        return True
    takes = {"--target", "--platform", "--model", "--python", "--matrix", "--index-url", "--color", "-o", "--output-file"}
    prev = ""
    for a in argv:
        if not a.startswith("-") and prev not in takes:
            return True  # a requirements.in
        prev = a
    d = os.getcwd()
    while True:
        pp = os.path.join(d, "pyproject.toml")
        if os.path.isfile(pp):
            try:
                with open(pp, "rb") as f:
                    head = f.read(64)
            except OSError:
                return True
            if not head.startswith(b"# Generated by `glmcompat lock"):
                return True
        parent = os.path.dirname(d)
        if parent == d:
            return False
        d = parent


def _fast_lock(argv: list[str]) -> int | None:
    """The warm no-op answer of ``lock ARGV`` (:mod:`glmcompat.cli.fastlock`), or None: the full path runs."""
    try:
        from glmcompat.cli.fastlock import lookup

        return lookup(argv)
    except (BrokenPipeError, KeyboardInterrupt):
        raise
    except Exception:
        return None  # a damaged record is a miss: the full path answers and replaces it


def _speculate(argv: list[str]) -> None:
    """Start ``uv lock`` on the pyproject.toml ``lock ARGV`` will most likely write, before the heavy imports
    (:mod:`glmcompat.ops.speculate`: used only if the prediction proves exact). Never fails the run."""
    try:
        from glmcompat.cli.commands._common import DEFAULT_STACK
        from glmcompat.ops.speculate import start_early

        start_early(argv, DEFAULT_STACK)
    except Exception:
        pass


def _special_file_named(argv: Sequence[str]) -> bool:
    """Whether an argument names something that exists but is neither a regular file nor a directory (a
    FIFO, a device): the warm path would open it to hash it, and opening a FIFO waits for a writer. The
    full path refuses it (exit 2). Costs one ``stat`` per argument."""
    import os
    import stat

    for a in argv:
        try:
            mode = os.stat(a).st_mode
        except (OSError, ValueError):
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return True
    return False


def _report(e: BaseException) -> int:
    import os

    from glmcompat.model.errors import GlmcompatError, classify

    code, line = classify(e, _tracker()) if not isinstance(e, GlmcompatError) else classify(e)
    if os.environ.get("GLMCOMPAT_DEBUG") and not isinstance(e, KeyboardInterrupt):
        import traceback

        traceback.print_exception(e, file=sys.stderr)
    try:
        print(f"error: {line}", file=sys.stderr)
    except (OSError, ValueError):
        pass
    return code


def _tracker() -> str:
    """Where to report a bug: the ``Issues`` (or ``Bug Tracker``) project URL of the installed
    distribution's metadata, else a description of it."""
    try:
        from importlib.metadata import metadata

        for entry in metadata("glmcompat").get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower().replace(" ", "") in ("issues", "bugtracker", "tracker", "bugs") and url.strip():
                return str(url.strip())
    except Exception:
        pass
    return "glmcompat's issue tracker"


def _quiet_stdout() -> None:
    """After a closed pipe (``glmcompat ... | head``): point stdout at /dev/null so that the interpreter's
    final flush does not print a second error."""
    import os

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def run() -> None:
    """Console-script entry point."""
    rc = main()
    if sys.argv[1:2] == ["lock"]:
        _exit_now(rc)
    sys.exit(rc)


def _exit_now(rc: int) -> None:
    """Exit without the interpreter's finalization, which costs a cold ``lock`` a tenth of a second (freeing the
    matrix, the index pages, the modules): by now the command has written and closed its files, removed its
    temporary directories and stopped its subprocesses; only the standard streams are left to flush."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(rc)
