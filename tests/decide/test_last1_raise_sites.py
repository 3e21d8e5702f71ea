"""The messages of tests/fixtures/raise_sites/last1-signatures.toml (issue 38, branch fix-last1): the packaged CUDA
toolkit's gcc/g++ wrapper finding no supported host compiler (host-compiler-unsupported, with the clang it offers and
the -ccbin / CUDAHOSTCXX remedy), CTranslate2's own cuBLAS loader at its CUDA 11 and 12 releases (cuda-lib-missing with
the library's CUDA major and wheel), and tensorflow's / XLA's CUDA diagnostics (driver-library-mismatch naming the loaded
kernel module's and the user-space libcuda's releases), each near miss left unclaimed."""

from __future__ import annotations

from glmcompat.model.signatures import LogContext
from tests.decide.explaining import table

MESSAGES = table("last1-signatures.toml")



def test_the_diagnostics_releases_are_read_from_the_log():
    ctx = LogContext()
    for line in ("libcuda reported version is: 470.57.2", "kernel reported version is: 460.91.3"):
        ctx.take(line)
    assert (ctx.cuda.get("libcuda"), ctx.cuda.get("kernel_module")) == ("470.57.2", "460.91.3")
