"""``glmcompat abi EXT==VER --torch VER`` and ``glmcompat arch PKG==VER [--target T]``.

Both read the published wheels with HTTP range requests (nothing is installed) and print a table or
versioned JSON. Exit codes: 0 compatible / runs, 1 not, 2 bad input, 3 the network or index failed.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from glmcompat.cli.commands._common import (
    add_index_options,
    add_output_options,
    add_python_option,
    apply_settings,
    dump_json,
    fetch_finished,
    fetch_started,
    index_client,
    output,
    paint_text,
    parser,
    probing,
    python_tag,
)
from glmcompat.model.errors import GlmcompatError, InputError

if TYPE_CHECKING:
    from glmcompat.ops.wheelprobe import AbiResult, ArchResult

# The probes (glmcompat.ops.wheelprobe: the index, range reads, the ELF and fatbin readers), the matrix and the progress
# display are imported when a probe runs: `glmcompat abi --help` and `glmcompat completion`, which build the parsers,
# import none of them.


def _common_args(p: argparse.ArgumentParser) -> None:
    add_python_option(p, what="interpreter whose wheel to read")
    p.add_argument("--platform", default=None, metavar="PLAT",
                   help="the machine whose wheels to read: x86_64 or aarch64, or a manylinux tag of one "
                        "(manylinux_2_28_aarch64); default: x86_64")
    add_index_options(p)
    add_output_options(p, json="versioned JSON")


def main(name: str, argv: Sequence[str]) -> int:
    build, run = (arch_parser, _arch) if name == "arch" else (abi_parser, _abi)
    return run(build().parse_args(list(argv)))


def abi_parser() -> argparse.ArgumentParser:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("abi", "Compare an extension wheel's undefined torch symbols with what a torch release exports, "
                      "reading both wheels from the index (no install).")
    p.add_argument("extension", metavar="EXT", help="EXT==VER (the index's wheel), 'EXT @ URL' or a wheel file's path")
    p.add_argument("--torch", required=True, metavar="VER", help="the torch release to check against")
    add_python_option(p, dest="torch_python", flag="--torch-python", default=None,
                      what="interpreter of the torch wheel (default: --python)")
    p.add_argument("--all", action="store_true", help="list modules that need nothing from torch too")
    _common_args(p)
    return p


def _abi(args: argparse.Namespace) -> int:
    from glmcompat.ops.wheelinput import parse_artifact  # lazy: the probe stack, not for building the parser (help, completion)
    from glmcompat.ops.wheelprobe import parse_pin, probe_abi  # lazy: the probe stack, not for building the parser (help, completion)

    art = parse_artifact(args.extension)
    pkg, ver = art.name, art.version
    parse_pin(f"torch=={args.torch}")
    platform = _platform(args)
    o = output(args)
    index, cache = index_client(args)
    torch_py = args.torch_python or args.python
    with index:
        what = f"{pkg} {ver} ({python_tag(args.python)}) and torch {args.torch} ({python_tag(torch_py)})"
        fetch_started(o, index, what, platform)
        with probing(o, index, "reading the wheels"):
            result = probe_abi(pkg, ver, args.torch, index=index, cache=cache, python=python_tag(args.python),
                               platform=platform, torch_python=python_tag(torch_py), at=art.location)
        fetch_finished(o, f"{result.wheel} and {result.torch_wheel}", result)
    if args.json:
        dump_json(result.to_json(), o.out)
    else:
        o.out.write(paint_text(_render_abi(result, show_all=args.all, notes=o.notes), o.color))
    return 0 if result.ok else 1


def _platform(args: argparse.Namespace) -> str:
    """The ``--platform`` value, checked before anything is fetched (an unknown one: InputError, exit 2)."""
    from glmcompat.ops.wheelprobe import machine_of  # lazy: the probe stack, not for building the parser (help, completion)

    if args.platform is None:
        return "manylinux_x86_64"
    machine_of(args.platform)
    return str(args.platform)


def _target_platforms(target: str, explicit: str | None) -> tuple[list[str], str] | None:
    """(platforms the target's products ship on, those products as text) from the matrix; an explicit
    ``--platform`` the target never ships on is an InputError. None for a target the matrix does not list."""
    from glmcompat.matrix.load import load_facts  # lazy: the probe stack, not for building the parser (help, completion)
    from glmcompat.model.platforms import products_on, target_platforms  # lazy: the probe stack, not for building the parser (help, completion)
    from glmcompat.ops.wheelprobe import machine_of, parse_target  # lazy: the probe stack, not for building the parser (help, completion)

    name, _ = parse_target(target)
    try:
        row = load_facts().target(name)
    except GlmcompatError:
        return None
    plats = target_platforms(row)
    if explicit is not None:
        machine = machine_of(explicit)
        if machine not in plats:
            where = "; ".join(f"{', '.join(products_on(row, p))} on {p}" for p in plats)
            raise InputError(f"target {name} never ships on {machine} ({where}): no {name} machine installs the "
                             f"{machine} wheel; pass --platform {plats[0]}")
    return plats, "; ".join(f"{', '.join(products_on(row, p))} on {p}" for p in plats)


def _render_abi(r: AbiResult, *, show_all: bool, notes: bool = True) -> str:
    """The text report of an ABI probe (``notes``: the bytes-and-seconds line, left out with -q)."""
    parts: list[str] = []
    out = parts.append
    out(f"{r.package} {r.version} ({r.wheel}, Linux {r.platform})\n  vs torch {r.torch} ({r.torch_wheel}: {r.torch_exports} exported "
        f"symbols, CUDA runtime {'/'.join(map(str, r.torch_cuda_majors)) or '?'})\n\n")
    width = max((len(m.member) for m in r.modules), default=10)
    for m in r.modules:
        if not m.needs_from_torch and not show_all:
            continue
        verdict = "ok" if m.ok else f"MISSING {len(m.missing)}"
        cuda = "/".join(map(str, m.cuda_majors)) or "-"
        out(f"  {m.member:<{width}}  needs {m.needs_from_torch:>4} from torch  CUDA {cuda:<3} {verdict}\n")
        for s in m.missing:
            out(f"      {s.demangled}\n        {s.symbol}\n")
    for w in r.warnings:
        out(f"\nwarning: {w}\n")
    if notes:
        out(f"\n{_how(r)}, {r.seconds:.2f} s\n")
    else:
        out("\n")
    if r.ok:
        out(f"compatible: every torch symbol {r.package} {r.version} needs is exported by torch {r.torch}\n")
    else:
        n = len(r.missing)
        out(f"INCOMPATIBLE: torch {r.torch} does not export {n} symbol{'s' if n != 1 else ''} that "
            f"{r.package} {r.version} needs; loading it fails with 'undefined symbol'\n")
        out(f"hint: pin torch to the release {r.package} {r.version} was built against, or pick a "
            f"{r.package} release built for torch {r.torch}\n")
    return "".join(parts)


def _how(r: AbiResult | ArchResult) -> str:
    from glmcompat.ops.progress import shown_bytes  # lazy: the probe stack, not for building the parser (help, completion)

    return "cached" if r.cached else f"fetched {shown_bytes(r.bytes_fetched, r.bytes_total)}"


def arch_parser() -> argparse.ArgumentParser:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("arch", "List the GPU code (SASS and PTX) in a wheel's shared objects, read from the index; with "
                       "--target, say whether each has code that runs there.")
    p.add_argument("package", metavar="PKG", help="PKG==VER (the index's wheel), 'PKG @ URL' or a wheel file's path")
    p.add_argument("--target", default=None, metavar="T",
                   help="GPU target, e.g. sm120, sm_90 or 12.0 (default: GLMCOMPAT_TARGET, else the one target of "
                        "[tool.glmcompat] targets, else none: the GPU code is listed, not judged)")
    p.add_argument("--module", action="append", default=None, metavar="GLOB",
                   help="judge only members matching GLOB (repeatable; default: the package's main modules)")
    _common_args(p)
    return p


def _arch(args: argparse.Namespace) -> int:
    from glmcompat.ops.wheelinput import parse_artifact  # lazy: the probe stack, not for building the parser (help, completion)
    from glmcompat.ops.wheelprobe import parse_target, probe_arch  # lazy: the probe stack, not for building the parser (help, completion)

    apply_settings(args, "arch", keys=("target", "platform"), several="ignore")

    art = parse_artifact(args.package)
    pkg, ver = art.name, art.version
    platform = _platform(args)
    shipped = None
    if args.target:
        parse_target(args.target)
        shipped = _target_platforms(args.target, args.platform)
    o = output(args)
    index, cache = index_client(args)
    with index:
        fetch_started(o, index, f"{pkg} {ver} ({python_tag(args.python)})", platform)
        with probing(o, index, "reading the wheel"):
            result = probe_arch(pkg, ver, index=index, cache=cache, target=args.target, python=python_tag(args.python),
                                platform=platform, modules=args.module, at=art.location)
        fetch_finished(o, result.wheel, result)
    note = None
    if shipped is not None and result.platform not in shipped[0]:
        note = (f"{result.target} ships only on {', '.join(shipped[0])} ({shipped[1]}): this is the {result.platform} "
                f"wheel, which no {result.target} machine installs; pass --platform {shipped[0][0]}")
    if args.json:
        doc = replace(result.to_output(), note=note or None,
                      target_platforms=tuple(shipped[0]) if shipped is not None else None)
        dump_json(doc.to_json(), o.out)
    else:
        o.out.write(paint_text(_render_arch(result, note, notes=o.notes), o.color))
    return 0 if result.ok else 1


def _render_kernels(r: ArchResult) -> str:
    """The main modules' kernels, the toolkits of their cubins and, with a target, the kernels it cannot run."""
    from glmcompat.ops.wheelprobe import kernel_labels  # lazy: the probe stack, not for building the parser (help, completion)

    groups = r.kernel_code
    parts = []
    if r.toolkits:
        parts.append("built by " + ", ".join(f"CUDA {k} ({n} cubin{'s' if n != 1 else ''})" for k, n in r.toolkits.items())
                     + "\n")
    if groups:
        parts.append(f"kernels: {sum(g.kernels for g in groups)} in {len(groups)} group(s) by the code they carry\n")
    unread = sum(m.unreadable for m in r.modules if m.member in (r.primary or [m.member]))
    if unread:
        parts.append(f"note: {unread} fatbin entr{'y' if unread == 1 else 'ies'} of the main modules could not be read "
                     "(a zstd frame without the zstandard module, or a cubin this reader cannot parse): "
                     "coverage per kernel not judged\n")
    gaps = r.uncovered
    if r.target is not None and gaps:
        labels = kernel_labels(g.example for g in gaps)
        total = sum(g.kernels for g in groups)
        parts.append(f"{sum(g.kernels for g in gaps)} of {total} kernels have no code for {r.target}:\n")
        for g in gaps[:5]:
            parts.append(f"  {g.kernels} with only {', '.join(g.code)} (e.g. {labels.get(g.example, g.example)})\n")
        if len(gaps) > 5:
            parts.append(f"  ... and {len(gaps) - 5} more group(s) (--json lists them)\n")
    return "".join(parts)


def _render_arch(r: ArchResult, note: str | None = None, *, notes: bool = True) -> str:
    """The text report of a GPU-code probe (``notes``: the bytes-and-seconds line, left out with -q)."""
    parts: list[str] = []
    out = parts.append
    out(f"{r.package} {r.version} ({r.wheel}, Linux {r.platform})\n\n")
    with_code = [m for m in r.modules if m.sass or m.ptx]
    width = max((len(m.member) for m in with_code), default=10)
    checked = set(r.primary) if r.primary else {m.member for m in with_code}
    for m in with_code:
        line = f"  {m.member:<{width}}  SASS {', '.join(m.sass) or 'none'}  PTX {', '.join(m.ptx) or 'none'}"
        if m.member not in checked:
            line += "  (bundled; not judged)"
        elif m.runs is not None:
            if m.uncovered:
                line += f"  -> {sum(g.kernels for g in m.uncovered)} of {m.kernels} kernels lack code for {r.target}"
            else:
                runs = f"runs on {r.target} ({', '.join(m.runs_with)})" if m.runs else f"NO code for {r.target}"
                line += f"  -> {runs}"
        out(line + "\n")
    if not with_code:
        out(f"  no GPU code in any of its {len(r.modules)} shared object(s)\n")
        if r.package == "torch":
            has_cuda = any(m.member.endswith("/libtorch_cuda.so") for m in r.modules)
            out("  torch/lib/libtorch_cuda.so is " + ("there, with no fatbin\n" if has_cuda else
                                                    "not in this wheel: a CPU-only build\n"))
    out(f"\nmain modules: SASS {', '.join(r.sass) or 'none'}; PTX {', '.join(r.ptx) or 'none'}\n")
    out(_render_kernels(r))
    if notes:
        out(f"{_how(r)}, {r.seconds:.2f} s\n")
    if r.target is not None:
        if r.ok:
            out(f"runs on {r.target}: every module with GPU code has code for it\n")
        else:
            gaps = r.uncovered
            what = (f"{sum(g.kernels for g in gaps)} of their kernels carry" if gaps else
                    f"carr{'y' if len(r.not_running) > 1 else 'ies'}")
            out(f"DOES NOT RUN on {r.target}: {', '.join(r.not_running)}: {what} no SASS or PTX for it\n")
            out(f"hint: pick a release built with SASS for {r.target} (or PTX of an older compute_XY)\n")
    if note:
        out(f"note: {note}\n")
    return "".join(parts)
