"""Which harvested raise-site messages ``glmcompat explain`` names a cause for (issue 38's sweep).

Reads the JSON lines of scripts/harvest_engine_raise_sites.py, keeps the messages that describe a packaging or compatibility
failure (:data:`COMPAT`, a word list, then :data:`NOT_COMPAT`), prefixes each with the exception's class as Python
prints it (``ImportError: ...``), and runs explain's own scan and diagnosis on it (the matrix's [[signature]] rows, as
``glmcompat explain`` does). Prints, per library, how many distinct messages were kept and how many are named; with
``--misses``, the messages not named, with file:line at the release.

    python scripts/engine_raise_site_coverage.py /tmp/h/*.jsonl [--misses]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # glmcompat from this checkout

from glmcompat.decide.diagnose import Env, diagnose  # noqa: E402
from glmcompat.matrix.load import load_facts  # noqa: E402
from glmcompat.model.signatures import scan_log  # noqa: E402

COMPAT = re.compile(
    r"(?i)(version|compiled|built (?:for|with|against)|not installed|pip install|is not available|could not import|"
    r"failed to (?:import|load)|cannot (?:import|load)|unable to (?:import|load)|\bdriver\b|\.so\b|"
    r"shared (?:object|library)|compute capability|\bsm_?\d|architecture|nvcc|CUDA_HOME|toolkit|C\+\+/CUDA|"
    r"extension|requires? .{0,30}>=|incompatib|not compiled|precompiled|cubin|jit.cache|libcuda|nccl)")
# not a packaging or compatibility failure: a choice logged, a usage error, another vendor's platform, a model's own
NOT_COMPAT = re.compile(
    r"(?i)(falling back|fall back|defaulting to|\busing |deprecated|will be removed|argument|\brocm|\bgfx|\bhip\b|"
    r"\bxpu|neuron|\btpu|\bhpu|gaudi|openvino|ascend|\bnpu\b|\bmps\b|cpu backend|model architecture|"
    r"please file|tool parser|reasoning parser|shape|out of memory|tensor parallel|\bmust be\b|not supported (?:for|with|when|in) |"
    r"only supports? |expected .{0,40}got|checkpoint|config(?:uration)? file|tokenizer_config|chat template)")

# --strict: only the phrases of a packaging or compatibility failure (a package missing or at the wrong version, a build
# for another torch or CUDA, a library, the GPU's architecture, the toolkit)
STRICT = re.compile(
    r"(?i)(not installed|pip3? install|version (?:must be|is wrong|mismatch|is too old|>=)|incompatible version|"
    r"does not match|compiled (?:for|against|with)|built (?:for|against|with)|\.so\b|shared object|undefined symbol|"
    r"compute capability (?:>=|of at least)|requires (?:sm|cuda) ?\d|requires cuda >=|nvcc|cuda_home|ninja|"
    r"c\+\+/cuda extension|cuda extensions|precompiled)")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--misses", action="store_true", help="print the messages no signature names")
    ap.add_argument("--all", action="store_true", help="keep every message, not only the compatibility ones")
    ap.add_argument("--strict", action="store_true", help="keep only the phrases of a packaging failure (STRICT)")
    a = ap.parse_args(argv)
    facts = load_facts()
    sigs = facts.rows("signature")
    seen: dict[tuple[str, str], dict[str, object]] = {}
    for path in a.files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                lib = {"sgl-kernel": "sglang", "flashinfer-cubin": "flashinfer", "flashinfer-python": "flashinfer",
                       "peft": "accelerate/peft", "accelerate": "accelerate/peft", "mmcv": "mm", "mmdet": "mm"}.get(
                    r["package"], r["package"])
                t = r["template"]
                if not a.all and (not COMPAT.search(t) or NOT_COMPAT.search(t)):
                    continue
                if a.strict and not STRICT.search(t):
                    continue
                key = (lib, re.sub(r"\{[^}]*\}", "{}", t).strip())
                seen.setdefault(key, r)
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    for (lib, _), r in sorted(seen.items()):
        kind = str(r["kind"])
        exc = kind.split()[-1].split(".")[-1] if kind.startswith("raise") else ("UserWarning" if "warn" == kind[-4:]
                                                                                 else "ERROR")
        text = f"{exc}: {r['sample']}"
        hits = diagnose(scan_log(text.splitlines(), sigs).hits, Env.from_log(scan_log([], sigs).context), facts)
        per[lib][0] += 1
        if hits:
            per[lib][1] += 1
        elif a.misses:
            misses.append(f"{lib}\t{r['package']}-{r['version']} {r['file']}:{r['line']}\t{text[:300]!r}")
    for lib, (n, k) in sorted(per.items()):
        print(f"{lib:18} {k:4}/{n:<4} named")
    print(f"{'all':18} {sum(v[1] for v in per.values()):4}/{sum(v[0] for v in per.values()):<4} named")
    for m in misses:
        print(m)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
