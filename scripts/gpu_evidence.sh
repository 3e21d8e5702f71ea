#!/usr/bin/env bash
# On the device (an image with torch and a GPU, no index): install glmcompat from the working tree with the wheels carried in .whl/
# (`pip download -d .whl --only-binary=:all: --python-version 3.12 ...` of its dependencies and pytest), then collect the
# GPU evidence under $OUT: verify of the image stack (text and --json, checked against the shipped schema), GPU code per
# kernel, the half-installed torchvision, and the GPU tests. Run from the repository root: bash scripts/gpu_evidence.sh
set -u
exec > >(tee "$OUT/gpu-log.txt") 2>&1
date; nvidia-smi -L; python3 -c "import sys, torch, torchvision; print(sys.version.split()[0], 'torch', torch.__version__, 'torchvision', torchvision.__version__, torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))"
python3 -m pip install -q --no-index --find-links .whl hatchling pydantic packaging pytest hypothesis jsonschema pyyaml pyelftools cxxfilt 2>&1 | tail -5
python3 -m pip install -q --no-index --find-links .whl --no-build-isolation . 2>&1 | tail -20; command -v glmcompat
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
OUT=/tmp/kcov bash scripts/gpu_kernel_coverage_evidence.sh; echo "rc=$?"; cp /tmp/kcov/launched.json /tmp/kcov/compared.txt "$OUT/" 2>/dev/null
echo "== half-installed torchvision (scripts/gpu_half_installed_evidence.sh)"
OUT=/tmp/half bash scripts/gpu_half_installed_evidence.sh > /tmp/half.log 2>&1; echo "rc=$?"; tail -8 /tmp/half.log
echo "== the machine: check/lock --target auto, verify's driver comparison (scripts/gpu_machine_evidence.sh)"
bash scripts/gpu_machine_evidence.sh; echo "rc=$?"
echo "== gpu tests"
python3 -m pytest -o addopts="" -p no:cacheprovider -m gpu -q tests/ops/verify/test_verify.py tests/ops/verify/test_vllm.py tests/ops/test_pipguard.py 2>&1 | tail -15
echo "rc=$?"
date
