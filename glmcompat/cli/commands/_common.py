"""Helpers shared by the command modules: argparse with exit 2 and one-line errors, and the options every
command spells the same way, as uv and pre-commit do:

* ``--color {auto,always,never}`` (:func:`~glmcompat.cli.startup.use_color`: ``auto`` follows ``NO_COLOR``, ``FORCE_COLOR``,
  ``TERM=dumb`` and whether stdout is a terminal; the flag beats the environment);
* ``-q/--quiet`` and ``-v/--verbose`` (:class:`Output`: ``-q`` hides progress and non-essential notes, never
  the verdict or an error; ``-qq`` is silent, nothing on stdout: a command writes its answer to
  :attr:`Output.out`, which is then a stream to nowhere (:func:`glmcompat.cli.streams.stdout_for`); ``-v``
  adds detail such as progress and the requests made);
* ``--python`` (:func:`python_minor`: ``3.11`` and ``cp311`` both name the target CPython minor);
* ``--index-url`` and ``--no-cache`` (:func:`add_index_options`, :func:`index_client`; the commands hand them on
  explicitly, as :class:`glmcompat.edges.index.IndexOptions`, never through the process environment).

Loaded with a command's module, after the start-up paths (which read none of it: the default stack is
:data:`glmcompat.cli.commands.DEFAULT_STACK`): the standard library it needs at the top; packaging, the index
client and the probes when a function needs them, so that a command's ``--help`` stays light.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from glmcompat.cli.commands import DEFAULT_STACK
from glmcompat.cli.startup import use_color
from glmcompat.cli.streams import quiet_level, stderr, stdout_for
from glmcompat.model.errors import InputError
from glmcompat.model.platforms import python_minor as _python_minor

TYPE_CHECKING = False  # not typing's: the start-up path of lock reads this module, and importing typing costs them
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from contextlib import AbstractContextManager
    from typing import Any, NoReturn, TextIO

DEFAULT_PYTHON = "3.11"
COLOR_CHOICES = ("auto", "always", "never")


# -- argparse --------------------------------------------------------------------------------------


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    """An argparse parser that reports usage errors in one line and exits 2, as uv does: no prefix
    abbreviations (``--targ`` is not ``--target``: a script that relied on one would break the day a longer
    option is added), and an unknown option or a mistyped choice gets a "did you mean" (:func:`suggest`). Its
    subparsers (``matrix validate``, ``pip install``) are of the same class, so they behave the same."""

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("allow_abbrev", False)
            self._checking = False  # within add_argument (see _get_formatter)
            super().__init__(*args, **kwargs)
            self._seen: list[str] = []

        def add_argument(self, *args: Any, **kwargs: Any) -> Any:
            self._checking = True  # argparse formats the new option's metavar to check it (see _get_formatter)
            try:
                return super().add_argument(*args, **kwargs)
            finally:
                self._checking = False

        def _get_formatter(self) -> Any:
            # The metavar check of add_argument needs no width: a formatter of a fixed one spares building a parser
            # argparse's read of the terminal's, and the import of shutil (with bz2 and lzma) it costs, 3 ms of a cold
            # project lock before its predicted uv starts (issue 39). Help and usage are formatted as argparse does.
            # (No parser here has a formatter_class of its own: the check is HelpFormatter's either way.)
            if self._checking and self.formatter_class is argparse.HelpFormatter:
                return argparse.HelpFormatter(prog=self.prog, width=80)
            return super()._get_formatter()

        def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
            self._seen = [str(a) for a in (sys.argv[1:] if args is None else args)]
            return super().parse_known_args(args, namespace)

        def print_help(self, file: Any = None) -> None:  # --help: stdout, nowhere with -qq
            super().print_help(file if file is not None else stdout_for(quiet_level(self._seen)))

        def error(self, message: str) -> NoReturn:
            line = usage_error(self, self._seen, message)
            if "--json" in self._seen:  # the usage error as the command's JSON error document too
                from glmcompat.cli import jsonerrors  # lazy: --json errors only

                jsonerrors.emit([*self.prog.split()[1:], *self._seen], 2, f"{self.prog}: {line}",
                                quiet=quiet_level(self._seen))
            self.exit(2, f"error: {self.prog}: {line}\n")

    return Parser(prog=f"glmcompat {prog}", description=description)


def _option_strings(p: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``p`` and of its subparsers, recursively."""

    seen: set[str] = set()
    for action in p._actions:
        seen.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                seen |= _option_strings(sub)
    return seen


def _unknown_option(token: str, known: set[str]) -> bool:
    """Whether the command-line token ``token`` is an option argparse would not know among ``known``: ``--x``
    or ``--x=v`` with no option ``--x``; ``-x`` (or a cluster ``-qq``, ``-ofile``) whose first letter is no
    option. A negative number, ``-`` and a token with a space in it are positional, as argparse reads them."""
    if not token.startswith("-") or token == "-" or " " in token:
        return False
    if token[1:].replace(".", "", 1).isdigit():
        return False
    if token.startswith("--"):
        return token.split("=", 1)[0] not in known
    return token not in known and token[:2] not in known


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` that ``word`` most likely meant: the only one it is a prefix of, else (when it
    begins none) the closest by :mod:`difflib`; None when none is close or it begins several."""
    options = sorted(set(choices))
    starts = [c for c in options if c.startswith(word) and c != word]
    if starts:
        return starts[0] if len(starts) == 1 else None

    # compared without the leading dashes, which every option shares (--bogus is not "close" to --no-gpu)
    bare = {c.lstrip("-"): c for c in options}
    import difflib  # lazy: a mistyped option only

    close = difflib.get_close_matches(word.lstrip("-"), list(bare), n=1, cutoff=0.75)
    return bare[close[0]] if close else None


def usage_error(p: argparse.ArgumentParser, argv: list[str], message: str) -> str:
    """The one line of a usage error of ``p`` on ``argv``. An unknown option is the cause of whatever argparse
    said (``the following arguments are required: --target`` after ``--targ sm120``), so it is named first, with
    the option it most likely meant; a mistyped choice (``matrix valdate``, ``--color nevr``) gets the choice it
    most likely meant."""

    known = _option_strings(p)
    for token in argv:
        if token == "--":
            break
        if _unknown_option(token, known):
            name = token.split("=", 1)[0]
            longs = [k for k in known if k.startswith("--")] if name.startswith("--") else known
            guess = suggest(name, longs)
            hint = f" (did you mean '{guess}'?)" if guess else f"; see '{p.prog} --help'"
            return f"unexpected argument '{name}'{hint}"
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if m:
        guess = suggest(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
        if guess:
            message += f" (did you mean '{guess}'?)"
    return message


def add_target_option(p: argparse.ArgumentParser, default: str, *, repeat: str | None = "repeatable") -> None:
    """``--target``, the GPU target; ``default``: where it comes from without the flag; ``repeat``: how it repeats, as
    its help says it (None: one target, not a list)."""
    p.add_argument("--target", action="append" if repeat else "store", metavar="T",
                   help=f"GPU target, e.g. sm120 ({f'{repeat}; ' if repeat else ''}default: {default})")


def add_core_options(p: argparse.ArgumentParser, with_example: str, *, targets: bool = False) -> None:
    """The options `lock` and `upgrade` share: which stack, engine, target, machine, model and Python, and
    extra core requirements. ``targets``: --target is repeatable and optional (`lock` reads a project's
    ``[tool.glmcompat] targets`` without it)."""
    p.add_argument("--stack", metavar="NAME",
                   help=f"named stack (default {DEFAULT_STACK}; with --engine vllm the newest vLLM stack for the target and model)")
    p.add_argument("--engine", metavar="E", help="serving engine: sglang or vllm (default: the stack's; sglang without --stack)")
    add_target_option(p, "GLMCOMPAT_TARGET, else [tool.glmcompat] targets", repeat="repeatable in a project" if targets else None)
    p.add_argument("--platform", metavar="P",
                   help="the machine: x86_64 or aarch64 (default: GLMCOMPAT_PLATFORM, else [tool.glmcompat] platform, "
                        "else the target's only one, else x86_64; GH200/GB200/GB300 hosts are aarch64)")
    p.add_argument("--model", metavar="M", help="HF model_type to serve (default: GLMCOMPAT_MODEL, else "
                                                "[tool.glmcompat] model, else the stack's first model)")
    p.add_argument("--with", dest="with_", action="append", default=[], metavar="REQ",
                   help=f"extra core requirement, e.g. {with_example} (repeatable)")


# -- [tool.glmcompat] -------------------------------------------------------------------------------
# Where an option comes from: the flag, else its environment variable (GLMCOMPAT_TARGET, GLMCOMPAT_MODEL,
# GLMCOMPAT_PLATFORM: glmcompat.cli.main gives them as flags), else [tool.glmcompat] of the project.


def settings_targets(settings: dict[str, Any], where: Any) -> list[str]:
    """``[tool.glmcompat] targets`` (or ``target``): a name or a list of them; anything else is exit 2 naming the file."""

    t = settings.get("targets", settings.get("target"))
    if t is None:
        return []
    if isinstance(t, str):
        return [t]
    if isinstance(t, list) and t and all(isinstance(x, str) for x in t):
        return list(t)
    raise InputError(f"[tool.glmcompat] targets must be a target name or a list of them, not {t!r}"[:300], path=str(where))


def setting(settings: dict[str, Any], key: str, where: Any) -> str | None:
    """``[tool.glmcompat] KEY``, a string (exit 2 naming the file otherwise), or None."""

    v = settings.get(key)
    if v is not None and not isinstance(v, str):
        raise InputError(f"[tool.glmcompat] {key} must be a string, not {v!r}"[:300], path=str(where))
    return v


def project_file() -> str | None:
    """The pyproject.toml of the project at or above the working directory (as uv finds it), whose
    ``[tool.glmcompat]`` gives what no flag gave; None outside a project."""

    from glmcompat.readers import pyproject as pp  # lazy: a command's --help stays light (packaging, the index client, probes)

    found = pp.find(Path.cwd())
    return None if found is None else str(found)


def apply_settings(args: Any, command: str, *, single: bool = True, keys: tuple[str, ...] = ("target", "model", "platform"),
                   several: str = "error") -> str | None:
    """Fill ``args.target``/``model``/``platform`` that neither a flag nor an environment variable gave from
    ``[tool.glmcompat]`` of the project at or above the working directory (as uv finds it); returns that
    pyproject.toml's path when it gave any. ``single``: ``command`` takes one target (several there: exit 2, or with
    ``several="ignore"`` none is taken from there). The target is stored as the option stores it (a list where the
    option repeats)."""

    from glmcompat.readers import pyproject as pp  # lazy: a command's --help stays light (packaging, the index client, probes)

    wanted = [k for k in keys if not getattr(args, k, None)]
    if not wanted:
        return None
    found = pp.find(Path.cwd())
    if found is None:
        return None
    settings = pp.load(found).settings
    used = False
    for key in wanted:
        if key == "target":
            targets = settings_targets(settings, found)
            if not targets:
                continue
            if single and len(targets) > 1:
                if several == "ignore":
                    continue
                raise InputError(f"[tool.glmcompat] targets names {len(targets)} targets ({', '.join(targets)}) and "
                                 f"`glmcompat {command}` takes one: pass --target (or GLMCOMPAT_TARGET)", path=str(found))
            args.target = targets if isinstance(getattr(args, "target", None), list) or not single else targets[0]
            used = True
        else:
            value = setting(settings, key, found)
            if value is not None:
                setattr(args, key, [value] if isinstance(getattr(args, key, None), list) else value)
                used = True
    return str(found) if used else None


def dump_json(obj: Any, out: TextIO) -> None:

    out.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")


# -- colour (the decision itself, use_color, is in glmcompat.cli.startup: the check start-up path needs it) ----


def paint(code: str, text: str, on: bool) -> str:
    """``text`` in the SGR colour ``code`` (``1;31``: bold red) when ``on``."""
    return f"\033[{code}m{text}\033[0m" if on else text


# Leading labels coloured the way uv colours them (uv: error red, warning yellow, hint cyan, all bold).
LABELS = {"error": "1;31", "warning": "1;33", "hint": "1;36", "note": "1", "ok": "1;32", "compatible": "1;32",
          "INCOMPATIBLE": "1;31", "DOES NOT RUN": "1;31", "runs on": "1;32", "DRIFT": "1;31", "ERROR": "1;31",
          "UNVERIFIABLE": "1;33", "FAILED": "1;31", "cause": "1"}


def paint_line(line: str, on: bool) -> str:
    """``line`` with its leading label (``error:``, ``  hint:``, ``INCOMPATIBLE:``, ...) coloured when ``on``;
    any other line unchanged."""
    if not on:
        return line
    body = line.lstrip(" ")
    for label, code in LABELS.items():
        if body.startswith(label) and body[len(label):len(label) + 1] in (":", " ", "["):
            indent = line[:len(line) - len(body)]
            return f"{indent}{paint(code, label, True)}{body[len(label):]}"
    return line


def paint_text(text: str, on: bool) -> str:
    """:func:`paint_line` on every line of ``text``."""
    if not on:
        return text
    return "\n".join(paint_line(line, True) for line in text.split("\n"))


# -- -q / -v / --color -----------------------------------------------------------------------------


def add_output_options(p: argparse.ArgumentParser, *, json: str | None = None) -> None:
    """``--color``, ``-q/--quiet`` and ``-v/--verbose``, on every command; with ``json`` (its help), ``--json`` first."""
    if json is not None:
        p.add_argument("--json", action="store_true", help=json)
    p.add_argument("--color", choices=COLOR_CHOICES, default="auto", metavar="WHEN",
                   help="colour the output: auto (on a terminal, unless NO_COLOR or TERM=dumb; FORCE_COLOR forces "
                        "it), always or never (default: auto)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="count", default=0,
                   help="quiet output: no progress and no non-essential notes (never the verdict or an error); "
                        "-qq: silent, nothing on stdout")
    g.add_argument("-v", "--verbose", action="count", default=0,
                   help="verbose output: progress and the requests made, on stderr")


class Output:
    """What ``--color``, ``-q`` and ``-v`` ask of a command: colour on stdout, notes, progress and detail
    (progress and detail go to stderr, so they never mix with a verdict or JSON on stdout)."""

    def __init__(self, color: str = "auto", quiet: int = 0, verbose: int = 0, *, out: TextIO | None = None,
                 err: TextIO | None = None) -> None:
        self.color = use_color(color, out)
        self.quiet = quiet
        self.verbose = verbose
        self._out = out
        self._err = err

    @property
    def err(self) -> TextIO:
        return stderr() if self._err is None else self._err

    @property
    def out(self) -> TextIO:
        """Where the answer (verdict, report, JSON) goes: the stream given (stdout by default), nowhere with ``-qq``
        (:func:`stdout_for`)."""
        return self._out if self._out is not None and self.quiet < 2 else stdout_for(self.quiet)

    @property
    def notes(self) -> bool:
        """Whether to print non-essential notes (not with -q)."""
        return not self.quiet

    @property
    def progress(self) -> bool:
        """Whether to show progress: on a terminal (stderr) or with -v; never with -q."""
        if self.quiet:
            return False
        if self.verbose:
            return True
        try:
            return bool(self.err.isatty())
        except (AttributeError, ValueError, OSError):
            return False

    def detail(self, message: str) -> None:
        """One line of -v detail on stderr."""
        if self.verbose:
            self.err.write(f"{message}\n")
            self.err.flush()

    def status(self, message: str) -> None:
        """One line of progress on stderr (see :attr:`progress`)."""
        if self.progress:
            self.err.write(f"{message}\n")
            self.err.flush()

    def paint(self, code: str, text: str) -> str:
        return paint(code, text, self.color)

    def line(self, text: str) -> str:
        return paint_line(text, self.color)


def output(args: Any, *, out: TextIO | None = None, err: TextIO | None = None) -> Output:
    """The :class:`Output` of parsed arguments (those of :func:`add_output_options`), writing to ``out`` and ``err``
    (default: the process's stdout and stderr)."""
    return Output(getattr(args, "color", "auto"), getattr(args, "quiet", 0) or 0, getattr(args, "verbose", 0) or 0,
                  out=out, err=err)


# -- --python --------------------------------------------------------------------------------------


def python_minor(value: str) -> str:
    """The CPython minor ``value`` names, as ``X.Y`` (:func:`glmcompat.model.platforms.python_minor`)."""
    return _python_minor(value)


def python_tag(minor: str) -> str:
    """The wheel interpreter tag of a CPython minor: ``3.11`` -> ``cp311``."""
    return "cp" + minor.replace(".", "")


def python_arg(value: str) -> str:
    """argparse ``type=`` for ``--python``: :func:`python_minor`, its error as argparse's (one line, exit 2)."""


    try:
        return python_minor(value)
    except InputError as e:
        raise argparse.ArgumentTypeError(e.message.removeprefix(f"--python {value!r}: ") + f", got {value!r}") from None


def add_python_option(p: argparse.ArgumentParser, *, dest: str = "python", flag: str = "--python",
                      default: str | None = DEFAULT_PYTHON, what: str = "the target CPython") -> None:
    """``--python``: the target CPython minor, as ``3.11`` or ``cp311`` (stored as ``3.11``)."""
    shown = f"default: {default}" if default else "default: the stack's range"
    p.add_argument(flag, dest=dest, type=python_arg, default=default, metavar="X.Y",
                   help=f"{what}, as 3.11 or cp311 ({shown})")


# -- --index-url / --no-cache ----------------------------------------------------------------------


def index_url_arg(value: str) -> str:
    """argparse ``type=`` for ``--index-url``: an http(s) URL with a host (one line, exit 2 otherwise)."""

    try:
        u = urlsplit(value.strip())
        ok = u.scheme in ("http", "https") and bool(u.hostname)
    except ValueError:
        ok = False
    if not ok:
        raise argparse.ArgumentTypeError(f"expected an http(s) simple-API URL such as https://index.invalid/simple, "
                                         f"got {value!r}")
    return value.strip()


def add_index_options(p: argparse.ArgumentParser, *, cache: bool = True) -> None:
    """``--index-url`` (and ``--no-cache`` where a cache is read), for every command that reads the index."""
    p.add_argument("--index-url", default=None, type=index_url_arg, metavar="URL",
                   help="simple-API base URL (default: UV_DEFAULT_INDEX, UV_INDEX_URL, PIP_INDEX_URL, then uv's "
                        "and pip's configuration)")
    if cache:
        p.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the cache (glmcompat's, and uv's where uv runs)")


def index_client(args: Any) -> tuple[Any, Any]:
    """(an IndexClient for ``--index-url``, the cache it and the probes use: none with ``--no-cache``)."""
    from glmcompat.edges.cache import Cache, NoCache  # lazy: a command's --help stays light (packaging, the index client, probes)
    from glmcompat.edges.index import IndexClient  # lazy: a command's --help stays light (packaging, the index client, probes)

    cache = NoCache() if getattr(args, "no_cache", False) else Cache()
    return IndexClient(getattr(args, "index_url", None), cache=cache), cache


def shown_url(url: str | None) -> str:
    """The index URL as messages show it: without credentials; the configured one when ``url`` is None."""
    from glmcompat.edges.index import default_index_url, redact  # lazy: a command's --help stays light (packaging, the index client, probes)

    return redact(url or default_index_url())


def fetch_started(o: Output, index: Any, what: str, platform: str) -> None:
    """Progress of a wheel probe (a terminal or -v, never -q): which wheels are read, for which machine, from
    which index."""
    if o.progress:
        from glmcompat.edges.index import redact  # lazy: a command's --help stays light (packaging, the index client, probes)
        from glmcompat.ops.wheelprobe import machine_of  # lazy: a command's --help stays light (packaging, the index client, probes)

        o.status(f"reading {what} for Linux {machine_of(platform)} from {redact(index.base_url.rstrip('/'))}")


def fetch_finished(o: Output, wheels: str, r: Any) -> None:
    """Progress of a wheel probe: the wheels read (by file name) and the bytes fetched from them (never shown past
    the wheels' size: a span read twice is received twice)."""
    from glmcompat.ops.progress import shown_bytes  # lazy: a command's --help stays light (packaging, the index client, probes)

    if r.cached:
        o.status(f"read {wheels}: cached, nothing fetched ({r.seconds:.2f} s)")
    else:
        o.status(f"read {wheels}: fetched {shown_bytes(r.bytes_fetched, r.bytes_total)} ({r.seconds:.2f} s)")


def probing(o: Output, index: Any, label: str) -> AbstractContextManager[Any]:
    """While a probe reads through ``index`` (an IndexClient): the progress bar on a terminal (stderr), the
    requests answered and the bytes received; nothing when piped or with -q."""

    from glmcompat.ops.progress import Meter, watch  # lazy: a command's --help stays light (packaging, the index client, probes)

    @contextmanager
    def shown() -> Iterator[Any]:
        with Meter(label, stream=o.err, quiet=o.quiet, unit="request(s)") as meter:
            stop = watch(index.client, meter)
            try:
                yield meter
            finally:
                stop()

    return shown()


def size(n: int) -> str:
    """A byte count for people: ``12.3 MB``, ``4.5 kB``."""
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"
