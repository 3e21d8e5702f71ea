#!/usr/bin/env bash
# Issue 35 on the GPU machine (no package index there): the machine glmcompat reads, and what it judges with it.
#   1. `glmcompat check --target auto --driver auto` on a lock of the image's torch (2.11.0, CUDA 13.0): judged on the
#      target of every GPU NVML reports (sm90 on an H100/H200) with the driver it read (580.x there): exit 0; the same
#      lock with `--driver 570.86` (a CUDA 12.8 driver) exits 1 naming driver 580; --json states the machine.
#   2. `lock requirements.in --target auto --driver auto` needs an index: the core is resolved from the recorded index
#      (tests/fixtures/resolver/index.json, carried in the tree) and uv compiles against a local index of tiny wheels
#      with the recorded Requires-Dist (tests/localindex.py), as the offline tests do; the machine is read here, so the
#      lock is for sm90, this driver and this glibc, and its header states the floors.
#   3. `glmcompat verify` compares the driver NVML read with every CUDA build installed (no driver finding on the
#      image stack; the comparison printed).
# Run from the repository root after scripts/gpu_evidence.sh installed glmcompat: OUT=... bash scripts/gpu_machine_evidence.sh
set -u
W=$(mktemp -d)
echo "== the machine, as glmcompat reads it (glmcompat.edges.machine.detect)"
python3 -c "from glmcompat.edges.machine import detect; print(detect())"
cat /sys/module/nvidia/version 2>/dev/null; head -1 /proc/driver/nvidia/version 2>/dev/null
printf 'torch==2.11.0\n' > "$W/requirements.txt"
echo "== check --target auto --driver auto (expect exit 0: sm90, the driver read from the machine)"
glmcompat check "$W/requirements.txt" --target auto --driver auto; echo "rc=$?"
glmcompat check "$W/requirements.txt" --target auto --driver auto --json > "$OUT/machine-check-auto.json"; echo "rc=$?"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('machine:', json.dumps(d['checked'][0]['machine']))" "$OUT/machine-check-auto.json"
echo "== check --target auto --driver 570.86 (expect exit 1 naming driver 580)"
glmcompat check "$W/requirements.txt" --target auto --driver 570.86; echo "rc=$?"
echo "== lock requirements.in --target auto --driver auto (recorded index for the core, local tiny-wheel index for uv)"
printf 'torch\ntorchvision\n' > "$W/requirements.in"
python3 - "$W" <<'PY'
import json, os, sys
from pathlib import Path
sys.path.insert(0, os.getcwd())
import glmcompat
from glmcompat.cli.commands._machine import machine_for
from tests.localindex import serve_index
W = Path(sys.argv[1])
index = Path("tests/fixtures/resolver/index.json")
recorded = json.loads(index.read_text())
projects = {n: {v: recorded[n]["requires"].get(v, []) for v in recorded[n]["versions"]} for n in ("torch", "torchvision")}
machine = machine_for(["auto"], "auto", None, {}, None, glibc_default=True)
print("machine:", "; ".join(machine.lines()))
with serve_index(projects) as url:
    os.environ["UV_DEFAULT_INDEX"] = url
    os.environ["UV_CACHE_DIR"] = str(W / "uv-cache")
    r = glmcompat.lock(W / "requirements.in", list(machine.targets), output=W / "requirements.txt", index=index,
                       machine=machine)
print("core:", r.core, "floors:", r.floors)
print("".join(l for l in (W / "requirements.txt").read_text().splitlines(True) if l.startswith("#"))[:800])
PY
echo "rc=$?"
cp "$W/requirements.txt" "$OUT/machine-lock-auto.txt" 2>/dev/null
echo "== verify: the driver NVML read against every CUDA build installed"
glmcompat verify --json > "$OUT/machine-verify.json"; echo "rc=$?"
python3 - "$OUT/machine-verify.json" <<'PY'
import json, sys
from glmcompat.decide import cudadriver
from glmcompat.matrix.load import load_facts
d = json.load(open(sys.argv[1]))
drv = next((p for p in d["probes"] if p["id"] == "driver"), {}).get("data", {}).get("driver")
inst = next((p for p in d["probes"] if p["id"] == "installed"), {}).get("data", {}).get("packages", {})
facts = load_facts()
print("driver (NVML):", drv, "| CUDA builds installed:", [(b.name, b.version, b.cuda) for b in cudadriver.builds(inst, facts)][:12])
print("the driver they need:", cudadriver.floor(inst, facts), "| driver findings:",
      [f["message"][:160] for f in d["findings"] if f["rule"] == "driver"])
PY
rm -rf "$W"
