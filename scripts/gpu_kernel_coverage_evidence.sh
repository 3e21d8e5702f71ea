#!/usr/bin/env bash
# GPU code is judged per kernel, and the GPU agrees: build one shared library whose four kernels carry different GPU
# code (sm_90 SASS; sm_80 SASS only; compute_80 PTX only; compute_100 PTX only), let glmcompat's fatbin reader say which
# kernels can run on this GPU, then launch each one and print what the driver answered.
# Usage (repository root, on a machine with an NVIDIA GPU and nvcc): OUT=dir bash scripts/gpu_kernel_coverage_evidence.sh
set -euo pipefail
OUT=${OUT:-/tmp/kernel-coverage}; mkdir -p "$OUT"
work=$(mktemp -d); here=$(pwd)
cd "$work"
for spec in sass90:90:sm_90 sass80:80:sm_80 ptx80:80:compute_80 ptx100:100:compute_100; do
  IFS=: read -r n a c <<<"$spec"
  cat > "k_$n.cu" <<EOF
#include <cuda_runtime.h>
__global__ void k_$n(int *p) { *p = $a; }
extern "C" int launch_$n(int *p) { k_$n<<<1, 1>>>(p); cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize(); return (int)e; }
EOF
  nvcc -Xcompiler -fPIC -c -gencode "arch=compute_$a,code=$c" "k_$n.cu" -o "k_$n.o"
done
nvcc -shared -o libkcov.so k_*.o
cat > main.cu <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
extern "C" int launch_sass90(int*); extern "C" int launch_sass80(int*);
extern "C" int launch_ptx80(int*); extern "C" int launch_ptx100(int*);
int main() {
  int *p; if (cudaMalloc(&p, sizeof(int)) != cudaSuccess) { printf("{\"error\": \"no GPU\"}\n"); return 3; }
  const char *names[] = {"k_sass90", "k_sass80", "k_ptx80", "k_ptx100"};
  int (*fns[])(int*) = {launch_sass90, launch_sass80, launch_ptx80, launch_ptx100};
  printf("{");
  for (int i = 0; i < 4; i++) { int e = fns[i](p); printf("%s\"%s\": \"%s\"", i ? ", " : "", names[i], cudaGetErrorName((cudaError_t)e)); }
  printf("}\n"); return 0;
}
EOF
nvcc main.cu -L. -lkcov -Xlinker -rpath,'$ORIGIN' -o kcov
cp libkcov.so "$OUT/"
./kcov | tee "$OUT/launched.json"
cd "$here"
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
python3 scripts/kernel_coverage_compare.py "$work/libkcov.so" "sm$cap" "$OUT/launched.json" | tee "$OUT/compared.txt"
