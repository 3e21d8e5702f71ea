#!/usr/bin/env bash
# On the device (an image with torch and a GPU, no index): install glmcompat from the working tree with the wheels carried in .whl/
# (`pip download -d .whl --only-binary=:all: --python-version 3.12 ...` of its dependencies and pytest), then collect the
# GPU evidence under $OUT: verify of the image stack (text and --json, checked against the shipped schema), GPU code per
# kernel, the half-installed torchvision, numexpr 2.8.8 (NumPy 1.x C ABI) caught by verify, explain on a NumPy-1.x
# extension and on torchao's skipped extensions, verify's benchmark against both floors, and the GPU tests. .whl/
# must also hold numexpr 2.8.8 and torchao 0.15.0: `pip download numexpr==2.8.8 torchao==0.15.0 --no-deps
# --only-binary :all: --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 -d .whl/`.
# Run from the repository root: bash scripts/gpu_evidence.sh
# glmcompat itself is installed --no-deps over the dependencies the line before installs (uv, which verify does not
# run, is not carried).
# SKIP="kcov half machine" leaves those steps out (a run that re-checks only what changed since their evidence).
# The tree and .whl/ travel together within the device call's 64 MiB. At 2026-12-07 the 53 MB of tracked files and a
# 13.3 MB .whl/ (no hypothesis: the GPU steps need none) did not fit one call, a 7.8 MB one did: install the
# dependencies in a first call (.whl/ without zstandard and numexpr), then run this with .whl/ holding those two.
set -u
SKIP=" ${SKIP:-} "
exec > >(tee "$OUT/gpu-log.txt") 2>&1
date; nvidia-smi -L; python3 -c "import sys, torch, torchvision; print(sys.version.split()[0], 'torch', torch.__version__, 'torchvision', torchvision.__version__, torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))"
python3 -m pip install -q --no-index --find-links .whl hatchling pydantic packaging pytest jsonschema pyyaml pyelftools cxxfilt 2>&1 | tail -5
python3 -m pip install -q --no-index --find-links .whl --no-deps --no-build-isolation . 2>&1 | tail -20; command -v glmcompat
echo "== glmcompat verify (the image stack)"
glmcompat verify --json > "$OUT/final-verify-h200.json"; echo "rc=$?"
glmcompat verify > "$OUT/final-verify-h200.txt"; echo "rc=$?"
echo "== verify --json against the shipped, generated schema (glmcompat/cli/schemas/verify.schema.json)"
python3 - "$OUT/final-verify-h200.json" <<'PY'
import json, sys
from importlib.resources import files
from jsonschema import Draft202012Validator
schema = json.loads(files("glmcompat.cli").joinpath("schemas", "verify.schema.json").read_text())
doc = json.load(open(sys.argv[1]))
errors = list(Draft202012Validator(schema).iter_errors(doc))
print("schema errors:", len(errors), [e.message[:200] for e in errors[:3]])
print("ok:", doc.get("ok"), "probes:", len(doc.get("probes", [])))
raise SystemExit(bool(errors))
PY
echo "rc=$?"
echo "== GPU code judged per kernel (scripts/gpu_kernel_coverage_evidence.sh)"
[[ $SKIP == *" kcov "* ]] && echo skipped || OUT=/tmp/kcov bash scripts/gpu_kernel_coverage_evidence.sh; echo "rc=$?"; cp /tmp/kcov/launched.json /tmp/kcov/compared.txt "$OUT/" 2>/dev/null
echo "== half-installed torchvision (scripts/gpu_half_installed_evidence.sh)"
[[ $SKIP == *" half "* ]] && echo skipped || OUT=/tmp/half bash scripts/gpu_half_installed_evidence.sh > /tmp/half.log 2>&1; echo "rc=$?"; tail -8 /tmp/half.log
echo "== verify catches an extension built for NumPy 1.x: numexpr 2.8.8 (wheel carried in .whl/) over the image's numpy"
python3 -c "import numpy; print('numpy', numpy.__version__)"
rm -rf /tmp/numexpr-site && python3 -m pip install -q --no-index --find-links .whl --no-deps --target /tmp/numexpr-site numexpr==2.8.8 2>&1 | tail -3
glmcompat verify --path /tmp/numexpr-site --json > "$OUT/verify-numexpr-2.8.8.json"; echo "rc=$? (1 expected over numpy 2)"
glmcompat verify --path /tmp/numexpr-site > "$OUT/verify-numexpr-2.8.8.txt"; echo "rc=$?"
grep -A4 "^extension:numexpr" "$OUT/verify-numexpr-2.8.8.txt"; grep -A1 "error\[extension\]" "$OUT/verify-numexpr-2.8.8.txt"
echo "== verify's time against floor (a) bare torch + CUDA init and floor (b) importing what verify verifies"
python3 benchmarks/bench_verify.py --runs 3 > "$OUT/bench-verify.json"; echo "rc=$?"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({k: d[k] for k in ('verify_median_s','bare_median_s','imports_median_s','imports_bytecode_median_s','ratio_to_floor_a','ratio_to_floor_b','within_goal','verify_exit_codes','floor_b_imports')})" "$OUT/bench-verify.json"
echo "== NumPy-1.x extension and torchao's skipped extensions, explained (scripts/gpu_compiled_stack_evidence.sh)"
OUT="$OUT" bash scripts/gpu_compiled_stack_evidence.sh > "$OUT/compiled-stack.log" 2>&1; echo "rc=$?"; tail -30 "$OUT/compiled-stack.log"
echo "== the machine: check/lock --target auto, verify's driver comparison (scripts/gpu_machine_evidence.sh)"
[[ $SKIP == *" machine "* ]] && echo skipped || bash scripts/gpu_machine_evidence.sh; echo "rc=$?"
echo "== gpu tests"
python3 -m pytest -o addopts="" -p no:cacheprovider -m gpu -q tests/ops/verify/test_verify.py tests/ops/verify/test_vllm.py tests/ops/test_pipguard.py 2>&1 | tail -15
echo "rc=$?"
date
