"""Record what the machine's libraries really print (issue 38, the system sweep): NumPy's C-API and ABI checks, run by
a tiny C extension built with gcc against one NumPy's headers and imported under another, and glibc's loader refusing
an NVIDIA library whose sibling of another release is found first (gcc-built stand-ins with the real sonames and
symbol-version nodes). Writes tests/fixtures/raise_sites/system-real.toml; tests/decide/test_system_raise_sites.py
asserts that explain names each run's `expect`.

    python scripts/record_system_messages.py --numpy-wheels DIR   # DIR: numpy-1.24.4, 1.26.4, 2.3.5 cp311 wheels
                                                                   # (pip download --no-deps --only-binary :all: numpy==V)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "raise_sites" / "system-real.toml"

EXT = textwrap.dedent("""\
    #define PY_SSIZE_T_CLEAN
    #include <Python.h>
    #include <numpy/arrayobject.h>
    static struct PyModuleDef m = {PyModuleDef_HEAD_INIT, "npext", NULL, -1, NULL};
    PyMODINIT_FUNC PyInit_npext(void) { import_array(); return PyModule_Create(&m); }
    """)


def _unpack(wheels: Path, version: str, into: Path) -> Path:
    whl = next(wheels.glob(f"numpy-{version}-cp311-*.whl"))
    dest = into / f"numpy-{version}"
    with zipfile.ZipFile(whl) as z:
        z.extractall(dest)
    return dest


def _include(site: Path) -> Path:
    return next(p for p in (site / "numpy" / "_core" / "include", site / "numpy" / "core" / "include") if p.is_dir())


def _build(site: Path, out: Path, *defines: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "npext.c").write_text(EXT)
    so = out / ("npext" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(so), str(out / "npext.c"), f"-I{sysconfig.get_paths()['include']}",
                    f"-I{_include(site)}", *defines], check=True, capture_output=True)
    return out


def _import(ext: Path, site: Path) -> str:
    r = subprocess.run([sys.executable, "-S", "-c", "import npext"], capture_output=True, text=True,
                       env={"PYTHONPATH": f"{ext}:{site}"})
    assert r.returncode != 0, r
    return r.stderr.replace(str(ext), "/ext").replace(str(site), "/site-packages")


def numpy_runs(wheels: Path, tmp: Path) -> list[dict[str, object]]:
    sites = {v: _unpack(wheels, v, tmp) for v in ("1.24.4", "1.26.4", "2.3.5")}
    runs = []
    # NumPy 1.25's headers default to an old target (NPY_TARGET_VERSION, 1.19's API): name 1.25's to need it
    t = _build(sites["1.26.4"], tmp / "built-1.26.4-target-1.25", "-DNPY_TARGET_VERSION=NPY_1_25_API_VERSION")
    runs.append({"tool": "numpy 1.24.4 (an extension built against numpy 1.26.4's headers, NPY_TARGET_VERSION 1.25)",
                 "command": "import npext", "expect": ["numpy-too-old"], "output": _import(t, sites["1.24.4"])})
    a = _build(sites["1.26.4"], tmp / "built-1.26.4")
    runs.append({"tool": "numpy 2.3.5 (an extension built against numpy 1.26.4's headers)", "command": "import npext",
                 "expect": ["numpy-abi"], "output": _import(a, sites["2.3.5"])})
    b = _build(sites["2.3.5"], tmp / "built-2.3.5-target-2.0", "-DNPY_TARGET_VERSION=NPY_2_0_API_VERSION")
    runs.append({"tool": "numpy 1.26.4 (an extension built against numpy 2.3.5's headers, NPY_TARGET_VERSION 2.0)",
                 "command": "import npext", "expect": ["numpy-too-old"], "output": _import(b, sites["1.26.4"])})
    c = _build(sites["2.3.5"], tmp / "built-2.3.5-target-2.3", "-DNPY_TARGET_VERSION=NPY_2_3_API_VERSION")
    runs.append({"tool": "numpy 1.26.4 (an extension built against numpy 2.3.5's headers, NPY_TARGET_VERSION 2.3)",
                 "command": "import npext", "expect": ["numpy-too-old"], "output": _import(c, sites["1.26.4"])})
    return runs


def _cc(src: str, out: Path, *args: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    c = out.with_name(out.name.replace(".", "_") + ".c")
    c.write_text(src)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(c), *args], check=True, capture_output=True)


def _map(path: Path, node: str, *symbols: str) -> str:
    path.write_text(f"{node} {{ global: {'; '.join(symbols)}; local: *; }};\n")
    return f"-Wl,--version-script,{path}"


def _load(lib: Path, ld_path: Path, tmp: Path) -> str:
    r = subprocess.run([sys.executable, "-S", "-c", f"import ctypes; ctypes.CDLL({str(lib)!r})"], capture_output=True,
                       text=True, env={"LD_LIBRARY_PATH": str(ld_path)})
    assert r.returncode != 0, r
    return r.stderr.replace(str(tmp), "/opt")


def loader_runs(tmp: Path) -> list[dict[str, object]]:
    """libcublas.so.11 of the nvidia-cublas-cu11 wheel (RUNPATH $ORIGIN) beside its libcublasLt.so.11, and a system
    libcublasLt.so.11 of another release first on LD_LIBRARY_PATH: without the function, then without the node."""
    wheel = tmp / "venv" / "site-packages" / "nvidia" / "cublas" / "lib"
    _cc("int cublasLtCreate(void){return 0;}\nconst char* cublasLtGetStatusString(int s){return \"\";}\n",
        wheel / "libcublasLt.so.11", "-Wl,-soname,libcublasLt.so.11",
        _map(tmp / "lt.map", "libcublasLt.so.11", "cublasLtCreate", "cublasLtGetStatusString"))
    _cc("extern const char* cublasLtGetStatusString(int);\nint cublasCreate_v2(void){return cublasLtGetStatusString(0)!=0;}\n",
        wheel / "libcublas.so.11", "-Wl,-soname,libcublas.so.11", "-L", str(wheel), "-l:libcublasLt.so.11",
        "-Wl,-rpath,$ORIGIN")
    old = tmp / "usr-local-cuda-11.0" / "lib64"
    _cc("int cublasLtCreate(void){return 0;}\n", old / "libcublasLt.so.11", "-Wl,-soname,libcublasLt.so.11",
        _map(tmp / "old.map", "libcublasLt.so.11", "cublasLtCreate"))
    other = tmp / "usr-local-cuda-10.2" / "lib64"
    _cc("int cublasLtCreate(void){return 0;}\n", other / "libcublasLt.so.11", "-Wl,-soname,libcublasLt.so.10",
        _map(tmp / "ten.map", "libcublasLt.so.10", "cublasLtCreate"))
    # cuDNN 9's graph library needing a CUDA runtime function that an older libcudart.so.12 first on the path lacks
    cudnn = tmp / "venv" / "site-packages" / "nvidia" / "cudnn" / "lib"
    _cc("int cudaGetDriverEntryPointByVersion(void){return 0;}\nint cudaGetDeviceCount(int*c){return 0;}\n",
        cudnn.parent.parent / "cuda_runtime" / "lib" / "libcudart.so.12", "-Wl,-soname,libcudart.so.12",
        _map(tmp / "rt.map", "libcudart.so.12", "cudaGetDriverEntryPointByVersion", "cudaGetDeviceCount"))
    _cc("extern int cudaGetDriverEntryPointByVersion(void);\nint cudnnGetVersion(void){return cudaGetDriverEntryPointByVersion();}\n",
        cudnn / "libcudnn_graph.so.9", "-Wl,-soname,libcudnn_graph.so.9", "-L", str(cudnn.parent.parent / "cuda_runtime" / "lib"),
        "-l:libcudart.so.12", "-Wl,-rpath,$ORIGIN/../../cuda_runtime/lib")
    rt = tmp / "usr-local-cuda-12.1" / "lib64"
    _cc("int cudaGetDeviceCount(int*c){return 0;}\n", rt / "libcudart.so.12", "-Wl,-soname,libcudart.so.12",
        _map(tmp / "rt121.map", "libcudart.so.12", "cudaGetDeviceCount"))
    return [
        {"tool": "glibc ld.so (gcc-built libcublas.so.11 and libcublasLt.so.11)",
         "command": "LD_LIBRARY_PATH=/opt/usr-local-cuda-11.0/lib64 python -c 'ctypes.CDLL(\".../nvidia/cublas/lib/libcublas.so.11\")'",
         "expect": ["cuda-toolkit-clash"], "output": _load(wheel / "libcublas.so.11", old, tmp)},
        {"tool": "glibc ld.so (gcc-built libcublas.so.11; a libcublasLt.so.11 file of soname libcublasLt.so.10)",
         "command": "LD_LIBRARY_PATH=/opt/usr-local-cuda-10.2/lib64 python -c 'ctypes.CDLL(\".../nvidia/cublas/lib/libcublas.so.11\")'",
         "expect": ["cuda-toolkit-clash"], "output": _load(wheel / "libcublas.so.11", other, tmp)},
        {"tool": "glibc ld.so (gcc-built libcudnn_graph.so.9 and libcudart.so.12)",
         "command": "LD_LIBRARY_PATH=/opt/usr-local-cuda-12.1/lib64 python -c 'ctypes.CDLL(\".../nvidia/cudnn/lib/libcudnn_graph.so.9\")'",
         "expect": ["cuda-toolkit-clash"], "output": _load(cudnn / "libcudnn_graph.so.9", rt, tmp)},
    ]


def _toml(runs: list[dict[str, object]]) -> str:
    out = ["# What the machine's libraries really print (issue 38, the system sweep), recorded by",
           "# scripts/record_system_messages.py: NumPy's import_array checks from a gcc-built extension imported under another",
           "# NumPy (real numpy wheels, unpacked), and glibc's loader on gcc-built stand-ins of NVIDIA's libraries (their real",
           "# sonames and symbol-version nodes). tests/decide/test_system_raise_sites.py asserts explain names each `expect`.",
           "schema = 1", ""]
    for r in runs:
        out += ["[[run]]"] + [f"{k} = {json.dumps(r[k], ensure_ascii=False)}" for k in ("tool", "command", "expect", "output")]
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--numpy-wheels", type=Path, required=True)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        runs = numpy_runs(args.numpy_wheels, tmp) + loader_runs(tmp)
    OUT.write_text(_toml(runs), encoding="utf-8")
    print(f"wrote {OUT} ({len(runs)} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
