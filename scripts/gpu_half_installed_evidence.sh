#!/usr/bin/env bash
# Evidence for `glmcompat verify` on a half-installed torchvision, on the GPU machine (issue 24).
# Copies the image's torchvision (package and dist-info: an installed distribution) into a --path folder,
# deletes its _C.so, runs verify; then the overlay case (the package alone, its metadata left in the image);
# then applies the remedy's effect (the reinstall puts _C.so back; the machine reaches no index, so the
# image's own file is copied in, byte for byte what `pip install --force-reinstall` would write) and reruns.
# Usage (repository root): OUT=dir bash scripts/gpu_half_installed_evidence.sh
set -u
OUT=${OUT:-/tmp/half-evidence}
mkdir -p "$OUT"
log="$OUT/half-installed-log.txt"
py=${PYTHON:-python3}
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  $py -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)"
} >"$log" 2>&1
tv=$($py -c "import importlib.util as u, os; print(os.path.dirname(u.find_spec('torchvision').origin))")
sp=$(dirname "$tv")
di=$(ls -d "$sp"/torchvision-*.dist-info | head -1)
run() {  # name, verify args...
  local name=$1; shift
  echo "\$ glmcompat verify $* --json" >>"$log"
  $py -m glmcompat verify "$@" --json >"$OUT/$name.json" 2>>"$log"; echo "exit $?" >>"$log"
  $py -m glmcompat verify "$@" >"$OUT/$name.txt" 2>&1
}
d=/tmp/half-installed; rm -rf "$d"; mkdir -p "$d"
cp -a "$tv" "$d/"; cp -a "$di" "$d/"
# auditwheel's vendored libraries (torchvision.libs/) are the distribution's files too: a complete copy has them
[ -d "$sp/torchvision.libs" ] && cp -a "$sp/torchvision.libs" "$d/"
rm "$d/torchvision/_C.so"
run half-installed-torchvision --path "$d"
o=/tmp/half-overlay; rm -rf "$o"; mkdir -p "$o"
cp -a "$tv" "$o/"; rm "$o/torchvision/_C.so"
run half-installed-overlay --path "$o"
cp -a "$tv/_C.so" "$d/torchvision/_C.so"
run half-installed-remedied --path "$d"
cat "$log"
