"""Compare glmcompat's per-kernel judgement of a binary's GPU code with what the GPU did when each kernel was
launched (scripts/gpu_kernel_coverage_evidence.sh): python3 scripts/kernel_coverage_compare.py LIB smXY LAUNCHED.json"""
from __future__ import annotations

import json
import sys

from glmcompat.model.gpu import parse_capability, runs_on
from glmcompat.readers.fatbin import gpu_code_of_elf_detail


def main(lib: str, target: str, launched_json: str) -> int:
    capability = parse_capability(f"{target[2:-1]}.{target[-1]}")
    code = gpu_code_of_elf_detail(lib, payloads=True)
    codes_of: dict[str, set[str]] = {}
    for name, kernels in (code.kernels or {}).items():
        for k in kernels:
            codes_of.setdefault(k, set()).add(name)
    launched = json.loads(open(launched_json).read())
    agree = 0
    for kernel, answer in sorted(launched.items()):
        mangled = [k for k in codes_of if kernel in k]
        codes = sorted(set().union(*(codes_of[k] for k in mangled))) if mangled else []
        predicted = any(runs_on(c, capability) for c in codes)
        ran = answer == "cudaSuccess"
        agree += predicted == ran
        print(f"{kernel}: code {', '.join(codes) or 'none'}; glmcompat: {'runs' if predicted else 'cannot run'} on "
              f"{target}; GPU: {answer}{'' if predicted == ran else '  <-- DISAGREE'}")
    print(f"{agree}/{len(launched)} kernels: glmcompat's judgement agrees with the GPU")
    return 0 if agree == len(launched) else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
