"""The messages of tests/fixtures/raise_sites/adae-signatures.toml (issue 38, branch fix-adae): a container's CUDA or
driver requirement the host driver misses (nvidia-docker 1.0's check, libnvidia-container's and the container toolkit's
"unsatisfied condition"), torch 0.4's THD NCCL backend missing from the build, and ld's -lcuda in a build's link other
than triton's launcher; each named with its words, and each near miss left unclaimed. And the attribution rule the
-lcuda case showed: a package path that is a compiler or linker directory option's argument names no package."""

from __future__ import annotations

import pytest

from glmcompat.model.signatures import mentions
from tests.decide.explaining import table

MESSAGES = table("adae-signatures.toml")



@pytest.mark.parametrize("line", [
    "c++ a.o -shared -L/env/lib/python3.10/site-packages/torch/lib -lc10 -ltorch -o ext.so",
    "g++ -I/env/lib/python3.10/site-packages/torch/include -c ext.cpp -o ext.o",
    "c++ -isystem /env/lib/python3.10/site-packages/torch/include -c ext.cpp",
    "['-I', '/env/lib/python3.10/site-packages/torch/include', '-c', 'ext.cpp']",
    "gcc -Wl,-rpath,/env/lib/python3.10/site-packages/torch/lib ext.o -o ext.so",
])
def test_a_directory_option_argument_names_no_package(line):
    assert [m for m in mentions(line) if m[1] == "path"] == []


@pytest.mark.parametrize(("line", "package"), [
    ('  File "/env/lib/python3.10/site-packages/torch/utils/cpp_extension.py", line 2105, in _run_ninja_build', "torch"),
    ("ImportError: /env/lib/python3.10/site-packages/flash_attn_2_cuda.so: undefined symbol: x", "flash-attn"),
    ("/usr/bin/ld: /env-x/lib/python3.10/site-packages/vllm/_C.abi3.so: error", "vllm"),
])
def test_other_paths_still_name_their_package(line, package):
    assert package in [m[2] for m in mentions(line)]
