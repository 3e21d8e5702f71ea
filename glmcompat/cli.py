"""Command-line entry point. Each command lives in its own module, imported only when it runs.

Exit codes everywhere: 0 ok, 1 findings (the stack is unsafe), 2 bad input or usage, 3 the
environment failed (network, index, uv).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# name -> (module, one-line help). Keep this table import-free: it is read on every run.
COMMANDS: dict[str, tuple[str, str]] = {
    "lock": ("glmcompat.commands.lock", "resolve the coupled core for a GPU target and write host-free lockfiles"),
    "upgrade": ("glmcompat.commands.upgrade", "show the newest safe core set for a target and why newer ones are skipped"),
    "check": ("glmcompat.commands.check", "check a lockfile or requirements file for a GPU target"),
    "verify": ("glmcompat.commands.verify", "prove that the installed stack loads and runs its kernels on this GPU"),
    "explain": ("glmcompat.commands.verify", "explain known failure signatures in a server log"),
    "abi": ("glmcompat.commands.abi", "compare an extension's torch symbols with a torch release, from the wheels"),
    "arch": ("glmcompat.commands.abi", "list the GPU code (SASS/PTX) in a wheel's extensions"),
    "matrix": ("glmcompat.commands.matrix", "validate, show, describe or extend the compatibility matrix"),
    "targets": ("glmcompat.commands.matrix", "list the GPU targets"),
}


def _usage() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = ["usage: glmcompat [--version] COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {n:<{width}}  {h}" for n, (_, h) in COMMANDS.items()]
    lines += ["", "Run 'glmcompat COMMAND --help' for a command's options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] == "--version":
        from . import __version__

        print(f"glmcompat {__version__}")
        return 0
    name = args[0]
    entry = COMMANDS.get(name)
    if entry is None:
        print(f"error: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    if name == "check":
        from .fastpath import lookup

        try:
            rc = lookup(args[1:])
        except BrokenPipeError:
            return 0
        if rc is not None:
            return rc
    import importlib

    from .errors import GlmcompatError

    try:
        module = importlib.import_module(entry[0])
        return int(module.main(name, args[1:]))
    except GlmcompatError as e:
        print(f"error: {e.one_line()}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
