#!/usr/bin/env bash
# GPU evidence for `glmcompat explain` on two failures of the compiled stack that the image itself produces (issue 38):
#   1. an extension built against NumPy 1.x imported next to the image's NumPy 2 (numexpr 2.8.8's wheel was built for
#      NumPy 1.x): "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.x" / "numpy.core.multiarray
#      failed to import";
#   2. torchao 0.15.0 (built for torch 2.9.1) next to the image's torch: "Skipping import of cpp extensions due to
#      incompatible torch version ...".
# Each is installed with --no-deps into its own --target folder (the image's site-packages is not touched), imported
# for real, and `glmcompat explain` reads the output (and `glmcompat verify --path FOLDER --json` judges the folder).
# The device reaches no index: the wheels are carried in .whl/ (git-ignored), recorded on a machine that has one with
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#       --platform manylinux_2_28_x86_64 -d .whl numexpr==2.8.8 torchao==0.15.0
# Run from the repository root after glmcompat is installed (scripts/gpu_evidence.sh does both): OUT=dir bash THIS.
# Proof: numpy1-explain.txt names numpy-abi and numexpr 2.8.8, torchao-explain.txt names torchao-cpp-skipped and
# torchao 0.15.0 with the image's torch; the script exits 0 only when both do.
set -u
OUT=${OUT:?set OUT to a folder}
D=$(mktemp -d)
status=0
python3 -c "import numpy, torch; print('numpy', numpy.__version__, 'torch', torch.__version__)"

echo "== NumPy 1.x extension next to NumPy 2 (numexpr 2.8.8)"
python3 -m pip install -q --no-index --no-deps --target "$D/np1/site-packages" .whl/numexpr-2.8.8-*.whl
PYTHONPATH="$D/np1/site-packages" python3 -c "import numexpr; print('imported', numexpr.__version__)" > "$OUT/numpy1-import.txt" 2>&1
echo "import rc=$?"; tail -3 "$OUT/numpy1-import.txt"
glmcompat explain "$OUT/numpy1-import.txt" > "$OUT/numpy1-explain.txt"; echo "explain rc=$?"; cat "$OUT/numpy1-explain.txt"
glmcompat explain --json "$OUT/numpy1-import.txt" > "$OUT/numpy1-explain.json"
grep -q "numpy-abi" "$OUT/numpy1-explain.txt" && grep -q "numexpr" "$OUT/numpy1-explain.txt" || { echo "FAIL: numpy-abi/numexpr not named"; status=1; }
glmcompat verify --path "$D/np1/site-packages" --json > "$OUT/numpy1-verify.json" 2>"$OUT/numpy1-verify.err"; echo "verify rc=$?"
grep -o '"[^"]*numexpr[^"]*"' "$OUT/numpy1-verify.json" | head -5

echo "== torchao 0.15.0 next to the image's torch"
python3 -m pip install -q --no-index --no-deps --target "$D/ao/site-packages" .whl/torchao-0.15.0-*.whl
PYTHONPATH="$D/ao/site-packages" python3 -c "import logging; logging.basicConfig(); import torchao; print('imported torchao', torchao.__version__)" \
    > "$OUT/torchao-import.txt" 2>&1
echo "import rc=$?"; tail -3 "$OUT/torchao-import.txt"
glmcompat explain "$OUT/torchao-import.txt" > "$OUT/torchao-explain.txt"; echo "explain rc=$?"; cat "$OUT/torchao-explain.txt"
glmcompat explain --json "$OUT/torchao-import.txt" > "$OUT/torchao-explain.json"
grep -q "torchao-cpp-skipped" "$OUT/torchao-explain.txt" && grep -q "torchao 0.15.0" "$OUT/torchao-explain.txt" \
    || { echo "FAIL: torchao-cpp-skipped/torchao 0.15.0 not named"; status=1; }
glmcompat verify --path "$D/ao/site-packages" --json > "$OUT/torchao-verify.json" 2>"$OUT/torchao-verify.err"; echo "verify rc=$?"
grep -o '"[^"]*[Ss]kipping import of cpp extensions[^"]*"' "$OUT/torchao-verify.json" | head -3
grep -o '"torchao-cpp-skipped"' "$OUT/torchao-verify.json" | head -1

rm -rf "$D"
echo "status=$status"
exit $status
