"""``glmcompat verify`` and ``glmcompat explain``."""

from __future__ import annotations

import functools
import math
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from glmcompat.cli.commands._common import add_output_options, dump_json, output, paint_line, paint_text, parser
from glmcompat.model.errors import InputError


def main(name: str, argv: Sequence[str]) -> int:
    if name == "explain":
        return _explain(argv)
    return _verify(argv)


def verify_parser() -> Any:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("verify", "Prove that the installed stack loads and runs its kernels on this GPU. Each probe runs "
               "in its own process with a timeout; exit 0 when every probe passes, 1 otherwise, 2 on bad input.")
    p.add_argument("--target", default="auto", metavar="T",
                   help="GPU target to check against (sm90, sm120, ...; default: auto, the device's)")
    p.add_argument("--model", metavar="M", help="HF model_type that must be supported (e.g. glm_moe_dsa)")
    p.add_argument("--json", action="store_true", help="print the versioned JSON report")
    p.add_argument("--all-gpus", action="store_true", help="probe every GPU and the peer-access matrix")
    p.add_argument("--distributed", action="store_true",
                   help="under torchrun: an NCCL all-reduce across the ranks; rank 0 prints one report")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="seconds each probe process may run before it is killed and reported (default 120)")
    p.add_argument("--no-gpu", action="store_true",
                   help="this machine has no GPU on purpose: run the static and import probes only, and let "
                        "the skipped GPU probes not fail the run")
    p.add_argument("--jit", action="store_true", help="allow smoke tests that JIT-compile kernels (flashinfer)")
    p.add_argument("--path", action="append", default=[], metavar="DIR",
                   help="also look for packages in DIR, before sys.path (e.g. a pip --target folder; repeatable)")
    add_output_options(p)
    return p


def _verify(argv: Sequence[str]) -> int:
    p = verify_parser()
    args = p.parse_args(list(argv))

    if not (math.isfinite(args.timeout) and args.timeout > 0):
        p.error(f"--timeout must be positive and finite (seconds), got {args.timeout!r}")

    from glmcompat.ops.verify.core import run  # lazy: keeps `verify --help` light
    from glmcompat.ops.verify.plan import Options  # lazy: keeps `verify --help` light
    from glmcompat.ops.verify.render import table  # lazy: keeps `verify --help` light

    report = run(Options(target=args.target, model=args.model, timeout=args.timeout, all_gpus=args.all_gpus,
                         distributed=args.distributed, no_gpu=args.no_gpu, jit=args.jit, paths=args.path,
                         fork=os.environ.get("GLMCOMPAT_VERIFY_FORK", "1") != "0"))
    quiet = args.distributed and (report.rank or 0) != 0
    o = output(args)
    if args.json:
        if not quiet:
            dump_json(report.to_json(), o.out)
    elif not quiet:
        shown = report
        if o.quiet:  # -q: the probes that were skipped are left out (the counts still say how many)
            shown = replace(report, probes=tuple(pr for pr in report.probes if pr.status != "skipped"))
        for line in table(shown):
            print(paint_line(line, o.color), file=o.out)
    return 0 if report.ok else 1


@functools.lru_cache(maxsize=1)
def explain_parser() -> Any:
    """The argument parser of this command (also what `glmcompat completion` reads): built once a process (a process that
    explains many logs in turn, the API or a test, parses each command line with the same one; parsing changes nothing of
    it but the command line it reads, which each parse sets anew)."""
    p = parser("explain", "Explain known failure signatures in a server log (cause and remedy). Exit 1 when one "
               "is found, 0 when none, 2 when the log cannot be read.")
    p.add_argument("log", metavar="LOGFILE", help="the log to scan, or - for stdin")
    add_output_options(p, json="print versioned JSON")
    return p


def _explain(argv: Sequence[str]) -> int:
    p = explain_parser()
    args = p.parse_args(list(argv))
    from glmcompat.decide.diagnose import Env, diagnose  # lazy: keeps `verify --help` light
    from glmcompat.decide.othercauses import Watch  # lazy: keeps `verify --help` light
    from glmcompat.decide.pasted import pasted  # lazy: keeps `verify --help` light
    from glmcompat.matrix.load import load_facts  # lazy: keeps `verify --help` light
    from glmcompat.model.signatures import numbered_lines, render, scan_numbered  # lazy: keeps `verify --help` light

    facts = load_facts()
    sigs = facts.rows("signature")
    watch = Watch(facts.rows("other_cause"))  # the causes outside packaging the log shows, read on the way
    if args.log == "-":
        name = "<stdin>"
        stream = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None
        scan = (scan_numbered(watch.through(pasted(numbered_lines(stream), sigs)), sigs) if stream
                else scan_numbered(watch.through(pasted(enumerate(sys.stdin, 1), sigs)), sigs))
    else:
        name = args.log
        with _open_log(args.log) as f:
            try:
                scan = scan_numbered(watch.through(pasted(numbered_lines(f), sigs)), sigs)
            except OSError as e:
                raise InputError(f"cannot read: {e.strerror or e}", path=args.log) from None
    hits, others = watch.withhold(diagnose(scan.hits, Env.from_log(scan.context), facts))
    if args.json:
        from glmcompat.model.outputs.explain import ExplainOutput  # lazy: --json only

        doc = ExplainOutput(log=name, found=bool(hits), signatures=tuple(hits), others=others)
        dump_json(doc.to_json(), output(args).out)
    else:
        print(paint_text(render(hits, name, others), output(args).color), file=output(args).out)
    return 1 if hits else 0


def _open_log(path: str):  # type: ignore[no-untyped-def]
    """The log at ``path``, opened for reading in binary: a regular file only (a FIFO or a device is refused at
    once, opened without blocking and never read; ``-`` reads standard input)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a log file", path=path) from None
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read: {getattr(e, 'strerror', None) or e}", path=path) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise InputError("is a directory, not a log file", path=path)
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise InputError(f"is {kind}, not a regular file (pipe a stream in with `glmcompat explain -`)", path=path)
    return os.fdopen(fd, "rb", buffering=0)
