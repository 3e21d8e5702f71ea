"""Harvest, at each final release tag of NVIDIA/nccl from v2.12.7-1 on, the lines of ``src/enqueue.cc`` and
``src/group.cc`` that check a call (a CUDA call, or an NCCL function's result) and the lines among them that launch
NCCL's kernel, for ``[[nccl_check]]`` rows of
``glmcompat/matrix/data/nccl-checks.toml`` (issue 38: NCCL's WARN names the file and line of the check that failed,
``enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'``, so the line tells the releases that could have
printed it and whether the failing call was the launch of NCCL's own kernel; with NCCL_DEBUG=INFO each NCCL check
the failure passes back through adds ``group.cc:242 -> 1``, which narrows the releases further).

A check is one of NCCL's checking macros (src/include/checks.h: CUDACHECK, CUDACHECKGOTO, CUCHECK, CUCHECKGOTO,
NCCLCHECK, NCCLCHECKGOTO, ...): its WARN or its INFO trace prints ``__FILE__:__LINE__`` of the macro's expansion;
every line an invocation spans is listed (an invocation over several lines). A launch is such a check of
cuLaunchKernel, cuLaunchKernelEx, cudaLaunchKernel, cudaLaunchKernelExC or cudaLaunchCooperativeKernel inside
``ncclLaunchKernel``.

The source is read with ``git show <tag>:src/enqueue.cc`` in a clone of NVIDIA/nccl (the search tool's ``fetch
github:NVIDIA/nccl`` gives one). Run:
``python scripts/harvest_nccl_checks.py <git dir> > glmcompat/matrix/data/nccl-checks.toml``.
"""

from __future__ import annotations

import re
import subprocess
import sys

from packaging.version import InvalidVersion, Version

OLDEST = Version("2.12.7")
FILES = ("src/enqueue.cc", "src/group.cc")
CHECK = re.compile(r"\b(?:CUDACHECK|CUCHECK|NCCLCHECK)\w*\s*\(")
LAUNCH = re.compile(r"\b(?:cuLaunchKernel(?:Ex)?|cudaLaunchKernel(?:ExC)?|cudaLaunchCooperativeKernel)\s*\(")
FUNCTION = re.compile(r"^\S.*\bncclLaunchKernel\s*\(")


def tags(git: str) -> list[tuple[str, Version]]:
    out = []
    for t in subprocess.run(["git", "--git-dir", git, "tag"], capture_output=True, text=True, check=True).stdout.split():
        m = re.fullmatch(r"v(\d+\.\d+\.\d+)-\d+", t)
        if not m:
            continue
        try:
            pv = Version(m.group(1))
        except InvalidVersion:
            continue
        if pv >= OLDEST:
            out.append((t, pv))
    return sorted(out, key=lambda x: x[1])


def lines_at(git: str, tag: str, path: str) -> tuple[list[int], list[int]]:
    """(the lines a check spans, the launch checks inside ncclLaunchKernel) of ``path`` at ``tag``."""
    src = subprocess.run(["git", "--git-dir", git, "show", f"{tag}:{path}"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    checks: list[int] = []
    launches: list[int] = []
    inside, depth, launch = False, 0, False
    for n, line in enumerate(src, 1):
        if line and not line[0].isspace() and not line.startswith(("}", "#", "/")):
            inside = bool(FUNCTION.search(line))  # a function's head at column 0: are we in ncclLaunchKernel
        code = line.split("//", 1)[0]
        if depth == 0 and (m := CHECK.search(code)):
            depth, launch = 0, False
            code = code[m.start():]
        elif depth == 0:
            continue
        checks.append(n)
        launch = launch or bool(inside and LAUNCH.search(code))
        depth += code.count("(") - code.count(")")
        if depth <= 0:
            if launch:
                launches.append(n)
            depth = 0
    return checks, launches


def main(argv: list[str]) -> int:
    git = argv[1]
    got = tags(git)
    print("# The lines of NCCL's src/enqueue.cc and src/group.cc that check a call (checks) and, of those, the launches of NCCL's own")
    print("# kernel in ncclLaunchKernel (launches), at each release tag of NVIDIA/nccl, read by")
    print("# scripts/harvest_nccl_checks.py. explain reads NCCL's \"<file>:<line> NCCL WARN Cuda failure ...\" against them")
    print("# (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    for tag, pv in got:
        for path in FILES:
            checks, launches = lines_at(git, tag, path)
            print()
            print("[[nccl_check]]")
            print(f'release = "{pv}"')
            print(f'file = "{path.rsplit("/", 1)[-1]}"')
            print("checks = [" + ", ".join(map(str, checks)) + "]")
            if launches:
                print("launches = [" + ", ".join(map(str, launches)) + "]")
            print('evidence = "metadata"')
            print(f'source = "NVIDIA/nccl tag {tag} {path} (read by scripts/harvest_nccl_checks.py)"')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
