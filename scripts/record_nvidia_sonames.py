"""Print the shared libraries (nvidia/<folder>/lib/lib*.so*) of NVIDIA's nvidia-* wheels, for the first, last and two
middle releases of each project named (needs the index; run: ``python scripts/record_nvidia_sonames.py nvidia-cufft-cu11
nvidia-cufft-cu12 nvidia-cufft``): the evidence of the ``[[nvidia_soname]]`` rows of
glmcompat/matrix/data/nvidia-libraries.toml (which soname major each CUDA major's wheels ship). Reads each wheel's zip
directory by range requests (glmcompat.readers.wheelzip.RemoteZip), never the whole wheel. With ``--windows`` first, the
Windows DLLs (nvidia/<folder>/bin/*.dll) of each project's win_amd64 wheels instead: the evidence of the rows' ``dlls``
(``python scripts/record_nvidia_sonames.py --windows nvidia-cublas-cu11 nvidia-cublas-cu12``)."""

from __future__ import annotations

import re
import sys

from glmcompat.edges.index import IndexClient
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip
from packaging.version import Version


def main(pkgs: list[str]) -> None:
    windows = bool(pkgs) and pkgs[0] == "--windows"
    pkgs = pkgs[1:] if windows else pkgs
    platform, member = ("win_amd64", r"/[^/]*\.dll$") if windows else ("x86_64", r"/lib[^/]*\.so")
    with IndexClient() as ic:
        for p in pkgs:
            try:
                proj = ic.project(p)
            except Exception as e:
                print(p, "ERR", e)
                continue
            vers = sorted({v for v in proj.versions if not Version(v).is_prerelease}, key=Version)
            # first, last, and up to 2 in between
            pick = vers if len(vers) <= 4 else [vers[0], vers[len(vers) // 3], vers[2 * len(vers) // 3], vers[-1]]
            for v in pick:
                fs = [
                    f
                    for f in proj.files_for(v)
                    if f.filename.endswith(".whl") and (platform in f.filename) and not f.yanked
                ]
                if not fs:
                    print(p, v, f"no {platform} wheel")
                    continue
                f = fs[0]
                try:
                    z = RemoteZip(HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size))
                    libs = sorted({m.name.rsplit("/", 1)[-1] for m in z.members if re.search(member, m.name)})
                    print(p, v, f.filename, libs)
                except Exception as e:
                    print(p, v, "ERR", e)


if __name__ == "__main__":
    main(sys.argv[1:])
