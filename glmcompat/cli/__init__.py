"""Command-line entry point. Each command lives in its own module, imported only when it runs.

Exit codes everywhere: 0 ok, 1 findings (the stack is unsafe), 2 bad input or usage, 3 the
environment failed (network, index, file system, uv), 4 an internal error (a bug: one line asking for
a report; ``GLMCOMPAT_DEBUG=1`` prints the traceback), 130 interrupted. A crash is never 1. See
:func:`glmcompat.model.errors.classify`.
"""

from __future__ import annotations

import os
import stat
import sys

from glmcompat.cli.commands import COMMANDS, DEFAULT_STACK, HELP
from glmcompat.cli.streams import stderr, stdout

TYPE_CHECKING = False  # not typing's: every run reads this module, and typing costs the warm paths
if TYPE_CHECKING:
    from collections.abc import Sequence

    from glmcompat.ops.speculate import Speculation
    from glmcompat.ops.projectspec import LockCheck, Run


# The options every command spells the same way (glmcompat.cli.commands._common), accepted before the command
# too, as uv takes `uv -q lock`: moved after the command's own arguments (before a `--`), where its parser reads
# them. A command that does not take one (`check --index-url`) refuses it as it would after the command.
GLOBAL_FLAGS = ("-q", "--quiet", "-v", "--verbose", "--no-cache")
GLOBAL_VALUES = ("--color", "--index-url", "--python")
# The environment variables that stand for an option no flag gives: GLMCOMPAT_TARGET is --target, and so on. Each
# is given to the command as that flag (so the flag beats it, and it beats [tool.glmcompat]; the start-up paths'
# keys, built from the arguments, see it). variable -> (option, {command: whether the option repeats}).
ENV_OPTIONS: dict[str, tuple[str, dict[str, bool]]] = {
    "GLMCOMPAT_TARGET": ("--target", {"check": True, "lock": True, "pip install": True, "upgrade": False,
                                      "arch": False, "verify": False}),
    "GLMCOMPAT_MODEL": ("--model", {"check": False, "lock": False, "pip install": False, "upgrade": False,
                                    "verify": False}),
    "GLMCOMPAT_PLATFORM": ("--platform", {"check": True, "lock": False, "upgrade": False, "abi": False,
                                          "arch": False}),
    "GLMCOMPAT_DRIVER": ("--driver", {"check": False, "lock": False, "pip install": False, "upgrade": False}),
    "GLMCOMPAT_GLIBC": ("--glibc", {"check": False, "lock": False, "upgrade": False}),
}


def _usage() -> str:
    width = max(len(n) for n in [*COMMANDS, "help"])
    lines = ["usage: glmcompat [OPTIONS] COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {n:<{width}}  {h}" for n, (_, h) in [*COMMANDS.items(), ("help", ("", HELP))]]
    lines += ["", "options (before or after the command; each command's help lists those it takes):",
              "  -q, --quiet      no progress and no notes; on a safe `check`, only the verdict line",
              "  -qq              silent: nothing on stdout (errors still on stderr)",
              "  -v, --verbose    detail and progress on stderr",
              "  --color WHEN     colour the output: auto, always or never (default: auto)",
              "  --index-url URL  the simple-API index to read (commands that read the index)",
              "  --no-cache       neither read nor write the cache (commands that read the index)",
              "  --python X.Y     the target CPython minor, as 3.11 or cp311 (commands that build for one)",
              "  -V, --version    print glmcompat's version",
              "  -h, --help       print this help",
              "", "environment (where no flag gives the option; [tool.glmcompat] of the project comes after them):",
              "  GLMCOMPAT_TARGET    --target (several, comma-separated, where it repeats)",
              "  GLMCOMPAT_MODEL     --model",
              "  GLMCOMPAT_PLATFORM  --platform",
              "  GLMCOMPAT_DRIVER    --driver (the NVIDIA driver judged; auto: read it from this machine)",
              "  GLMCOMPAT_GLIBC     --glibc",
              "", "Run 'glmcompat help COMMAND' (or 'glmcompat COMMAND --help') for a command's options."]
    return "\n".join(lines)


def _hoist(args: list[str]) -> tuple[list[str], str | None]:
    """``ARGS`` with the shared options given before the command moved after its arguments (before a ``--``),
    or (ARGS, one line of error) when something before the command is no such option."""
    lead: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        flag = a.split("=", 1)[0]
        if a in GLOBAL_FLAGS or (len(a) > 2 and a[0] == "-" and a[1] in "qv" and a[1:] == a[1] * (len(a) - 1)):
            lead.append(a)  # -q, -qq, -vvv
            i += 1
        elif flag in GLOBAL_VALUES:
            if "=" in a:
                lead.append(a)
                i += 1
            elif i + 1 < len(args):
                lead += [a, args[i + 1]]
                i += 2
            else:
                return args, f"{a} expects a value"
        elif a.startswith("-") and a not in ("-h", "--help", "-V", "--version"):
            return args, _did_you_mean(f"unexpected argument '{flag}' before the command", flag,
                                       [*GLOBAL_FLAGS, *GLOBAL_VALUES, "--help", "--version"])
        else:
            break
    rest = args[i:]
    if not lead or not rest or rest[0].startswith("-"):
        return rest, None  # no command (the usage, exit 2), or --help / --version
    cut = rest.index("--") if "--" in rest else len(rest)
    return [*rest[:cut], *lead, *rest[cut:]], None


def _from_environment(args: list[str], environ: dict[str, str] | None = None,
                      given: dict[str, str] | None = None) -> tuple[list[str], str | None]:
    """``ARGS`` (a command and its arguments) with the options that :data:`ENV_OPTIONS`' variables give and no flag
    gives added before a ``--``; or (ARGS, one line of error) for a value a command cannot take (several targets
    for a command that takes one). ``given`` gains each value added -> its variable (an error about it names it)."""
    env = os.environ if environ is None else environ
    if not args:
        return args, None
    command = args[0] if args[0] != "pip" else " ".join(args[:2])
    cut = args.index("--") if "--" in args else len(args)
    head, tail = args[:cut], args[cut:]
    for var, (flag, commands) in ENV_OPTIONS.items():
        raw = env.get(var, "").strip()
        if not raw or command not in commands or any(a == flag or a.startswith(flag + "=") for a in head):
            continue
        if "-h" in head or "--help" in head:
            continue
        values = [v for v in raw.replace(",", " ").split() if v]
        if len(values) > 1 and not commands[command]:
            return args, (f"{var}={raw!r} names {len(values)} values and `glmcompat {command}` takes one {flag}: "
                          f"pass {flag}, or set {var} to one")
        for v in values:
            head += [flag, v]
            if given is not None:
                given[v] = var
    return head + tail, None


def _did_you_mean(message: str, word: str, choices: Sequence[str]) -> str:
    from glmcompat.cli.commands._common import suggest  # lazy: a mistyped command only

    guess = suggest(word, choices)
    return message + (f" (did you mean '{guess}'?)" if guess else "; see 'glmcompat --help'")


def _help(topic: list[str]) -> int:
    """``glmcompat help [COMMAND [ACTION]]``: glmcompat's usage, or what ``glmcompat COMMAND [ACTION] --help``
    prints (exit 0); an unknown command is a usage error with the command it most likely meant (exit 2)."""
    if not topic:
        print(_usage(), file=stdout())
        return 0
    name = topic[0]
    if name == "help":
        print(f"usage: glmcompat help [COMMAND [ACTION]]\n\n{HELP[0].upper()}{HELP[1:]}.", file=stdout())
        return 0
    entry = COMMANDS.get(name)
    if entry is None:
        print(f"error: {_did_you_mean(f'unknown command {name!r}', name, [*COMMANDS, 'help'])}", file=stderr())
        return 2
    import importlib  # lazy: start-up path: a replayed answer loads no command

    try:
        return int(importlib.import_module(entry[0]).main(name, [*topic[1:], "--help"]))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0 if e.code is None else 2


def _sane_streams() -> None:
    """Streams every answer can be written to: one whose encoding cannot spell a character
    (``PYTHONIOENCODING=ascii``) escapes it instead of failing the run after the verdict was made. A stream the caller
    closed (``>&-``: Python then has None) is left None, and written nowhere (:mod:`glmcompat.cli.streams`)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def main(argv: Sequence[str] | None = None) -> int:
    _sane_streams()
    args, problem = _hoist(list(sys.argv[1:] if argv is None else argv))
    if problem is not None:
        print(f"error: {problem}", file=stderr())
        return 2
    if not args or args[0] in ("-h", "--help"):
        print(_usage(), file=stdout() if args else stderr())
        return 0 if args else 2
    if args[0] in ("--version", "-V"):
        from glmcompat.model.public import __version__  # lazy: start-up path

        print(f"glmcompat {__version__}", file=stdout())
        return 0
    name = args[0]
    if name == "help":
        return _help(args[1:])
    entry = COMMANDS.get(name)
    if entry is None:
        print(f"error: {_did_you_mean(f'unknown command {name!r}', name, [*COMMANDS, 'help'])}", file=stderr())
        return 2
    given: dict[str, str] = {}  # a value the environment gave -> its variable
    args, problem = _from_environment(args, given=given)
    if problem is not None:
        from glmcompat.cli import jsonerrors  # lazy: --json errors only

        jsonerrors.emit(args, 2, problem)
        print(f"error: {problem}", file=stderr())
        return 2
    # -qq is silent (nothing on stdout, errors still on stderr): each command writes its answer to the stream its
    # options name (Output.out, glmcompat.cli.commands._common.stdout_for), stdout never swapped
    return _dispatch(name, entry, args, given)


def _dispatch(name: str, entry: tuple[str, str], args: list[str], given: dict[str, str]) -> int:
    spec: Speculation | None = None  # a speculative uv this run started: handed to the lock, discarded at the end
    early: Run | LockCheck | None = None  # a project lock's (glmcompat.ops.projectspec): taken by the command, discarded at the end
    try:
        if name == "check" and not _special_file_named(args[1:]):
            try:
                from glmcompat.cli.fastpath import lookup  # lazy: start-up path: the check replay, for `check` only

                rc = lookup(args[1:])
            except (BrokenPipeError, KeyboardInterrupt):
                raise
            except Exception:
                rc = None  # a damaged verdict cache is a miss: the full path answers and replaces it
            if rc is not None:
                return rc
        if name == "lock":
            rc = _fast_lock(args[1:])  # a recorded no-op, of a stack's lock or a project's
            if rc is not None:
                return rc
            if not _project_mode(args[1:]):
                spec = _speculate(args[1:])
            else:
                early = _speculate_project(args[1:])
        import importlib  # lazy: start-up path: a replayed answer loads no command

        module = importlib.import_module(entry[0])
        if name == "lock":
            from glmcompat.cli.fastlock import record  # lazy: the lock command only

            # its answer through the streams record gives it (kept for the record; sys.stdout is never swapped),
            # its Exit carrying a no-op's record
            return record(args[1:], lambda out, err: module.main(name, args[1:], out=out, err=err, spec=spec,
                                                            early=early))
        return int(module.main(name, args[1:]))
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except SystemExit:
        raise
    except BaseException as e:  # the one place every failure becomes one line and an exit code
        return _report(e, args, given)
    finally:
        if spec is not None:
            spec.discard()  # stopped and removed, used or not (the run failed, or asked something else)
        if early is not None:
            early.discard()


def _project_mode(argv: list[str]) -> bool:
    """Whether ``lock ARGV`` may lock the user's project (or a requirements.in) rather than a curated stack: then
    the stack's speculative uv must not start (a recorded no-op answers either, keyed by the working directory). With ``os`` alone: no --stack,
    --out, --with or --engine, and a pyproject.toml at or above the working directory that glmcompat did not
    generate, or a positional argument. A wrong "yes" only costs the stack path its head start."""
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
        from glmcompat.cli.fastlock import lookup  # lazy: start-up path: the lock replay, for `lock` only

        return lookup(argv)
    except (BrokenPipeError, KeyboardInterrupt):
        raise
    except Exception:
        return None  # a damaged record is a miss: the full path answers and replaces it


def _speculate_project(argv: list[str]) -> Run | LockCheck | None:
    """``uv lock`` of the project as it is, started before the heavy imports for the project lock to take
    (:func:`glmcompat.ops.projectspec.start_early`), or None. Never fails the run."""
    try:
        from glmcompat.ops.projectspec import start_early  # lazy: the project lock speculation only

        return start_early(argv)
    except Exception:
        return None


def _speculate(argv: list[str]) -> Speculation | None:
    """``uv lock`` started on the pyproject.toml ``lock ARGV`` will most likely write, before the heavy imports
    (:mod:`glmcompat.ops.speculate`: used only if the prediction proves exact), or None. Never fails the run."""
    try:
        from glmcompat.ops.speculate import start_early  # lazy: the lock speculation only

        return start_early(argv, DEFAULT_STACK)
    except Exception:
        return None


def _special_file_named(argv: Sequence[str]) -> bool:
    """Whether an argument names something that exists but is neither a regular file nor a directory (a
    FIFO, a device): the warm path would open it to hash it, and opening a FIFO waits for a writer. The
    full path refuses it (exit 2). Costs one ``stat`` per argument."""
    for a in argv:
        try:
            mode = os.stat(a).st_mode
        except (OSError, ValueError):
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return True
    return False


def _report(e: BaseException, args: Sequence[str] = (), given: dict[str, str] | None = None) -> int:
    """The exit code of the failure ``e`` of the command ``args``, after its one line on stderr (and, under
    ``--json``, its error document on stdout: :mod:`glmcompat.cli.jsonerrors`); ``given``: the values the environment
    gave (:func:`_from_environment`), each named with its variable in the line about it."""
    from glmcompat.model.errors import GlmcompatError, classify  # lazy: the error path only

    code, line = classify(e, _tracker()) if not isinstance(e, GlmcompatError) else classify(e)
    for value, var in (given or {}).items():
        if f"'{value}'" in line:
            line += f" (from {var})"
            if isinstance(e, GlmcompatError):
                e.message += f" (from {var})"
            break
    if os.environ.get("GLMCOMPAT_DEBUG") and not isinstance(e, KeyboardInterrupt):
        import traceback  # lazy: GLMCOMPAT_DEBUG only

        traceback.print_exception(e, file=stderr())
    if "--json" in args:
        try:
            from glmcompat.cli import jsonerrors  # lazy: --json errors only

            from glmcompat.cli.streams import quiet_level  # lazy: the error path only

            jsonerrors.emit(list(args), code, *jsonerrors.parts(e, line), quiet=quiet_level(args))
        except Exception:
            pass  # the stderr line below still says it
    try:
        print(f"error: {line}", file=stderr())
    except (OSError, ValueError):
        pass
    return code


def _tracker() -> str:
    """Where to report a bug: the ``Issues`` (or ``Bug Tracker``) project URL of the installed
    distribution's metadata, else a description of it."""
    try:
        from importlib.metadata import metadata  # lazy: the bug report line of an internal error only

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
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def run() -> None:
    """Console-script entry point."""
    rc = main()
    if _hoist(sys.argv[1:])[0][:1] == ["lock"]:
        _exit_now(rc)
    sys.exit(rc)


def _exit_now(rc: int) -> None:
    """Exit without the interpreter's finalization, which costs a cold ``lock`` a tenth of a second (freeing the
    matrix, the index pages, the modules): by now the command has written and closed its files, removed its
    temporary directories and stopped its subprocesses; only the standard streams are left to flush."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(rc)
