"""List every message a library can raise or warn, mechanically, from its wheels on the index (issue 38's sweep of
raise sites, library by library): the ``raise X(...)`` and ``warnings.warn(...)`` calls of its Python files, and
the module-level message constants (``CUDA_MISMATCH_MESSAGE = ...``), each with its file, line and release; for the
CUDA runtime, the error strings of libcudart's own table (``cudaGetErrorString``).

Needs the index (range reads: only the chosen members of each wheel are fetched). Run:
``python scripts/harvest_raise_sites.py > /tmp/raise_sites.jsonl`` (one JSON object a line: library, release, file,
line, kind, text; an f-string's fields are written ``{expr}``). ``scripts/raise_site_coverage.py`` then asks
``glmcompat explain`` which of the packaging and compatibility messages it names a cause for.

``--family install`` lists the installers' and builders' instead (pip, poetry, poetry-core, pdm, setuptools, wheel,
build, torch's cpp_extension) and uv's binary strings: tests/fixtures/raise_sites/install-family.toml is made from it."""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from glmcompat.edges.index import IndexClient
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip

# (distribution, releases, which members to read)
TORCH_FILES = re.compile(r"torch/(__init__|_utils_internal|version|hub|cuda/__init__|cuda/_utils|cuda/memory|"
                         r"utils/cpp_extension|utils/_triton|utils/collect_env|backends/cudnn/__init__|"
                         r"backends/cuda/__init__|distributed/distributed_c10d|distributed/__init__|cuda/nccl|"
                         r"_inductor/(exc|utils|codecache|cpp_builder)|_dynamo/(exc|utils)|_inductor/runtime/\w{1,40}|"
                         r"_C/__init__|_library/\w{1,40}|ops)\.py$")
TORCH_WIDE = re.compile(r"torch/(_inductor|_dynamo|utils|cuda|backends|_library|_C|hub|distributed/[a-z_]{1,40}\.py$|"
                        r"_utils_internal|__init__|__config__|version|_ops|_subclasses|multiprocessing|library)")
WANT: list[tuple[str, tuple[str, ...], Callable[[str], bool]]] = [
    ("torch", ("1.13.1", "2.0.1", "2.1.2", "2.4.1", "2.7.1", "2.9.1"), lambda n: TORCH_FILES.match(n) is not None),
    # one release read wide: every module of the packages where packaging failures surface
    ("torch", ("2.9.1",), lambda n: TORCH_FILES.match(n) is None and TORCH_WIDE.match(n) is not None),
    ("torchvision", ("0.16.2", "0.24.1"), lambda n: n.startswith("torchvision/") and n.endswith(".py")),
    ("torchaudio", ("2.1.2", "2.9.1"), lambda n: n.startswith("torchaudio/") and n.endswith(".py")),
    ("triton", ("2.1.0", "3.1.0", "3.5.1"), lambda n: re.match(r"triton/(backends/\w{1,20}/\w{1,40}|runtime/\w{1,40}|"
                                                              r"__init__|common/\w{1,40}|compiler/\w{1,40}|tools/\w{1,40}|"
                                                              r"knobs)\.py$", n) is not None),
    ("numpy", ("1.26.4", "2.0.2", "2.3.5"), lambda n: re.match(r"numpy/(_?core/(__init__|multiarray|_multiarray_umath|"
                                                               r"overrides)|__init__|_utils/__init__)\.py$", n) is not None),
]
# members read as text or bytes, not parsed: C sources and headers the wheels ship, and compiled libraries (their
# read-only strings: the messages a C/C++ check formats, the CUDA runtime's table of error strings)
RAW: list[tuple[str, str, str, str]] = [
    ("torch", "2.9.1", "torch/lib/libc10_cuda.so", "c10 CUDA checks"),
    ("numpy", "1.26.4", "numpy/core/include/numpy/__multiarray_api.h", "numpy import_array"),
    ("numpy", "2.3.5", "numpy/_core/include/numpy/__multiarray_api.h", "numpy import_array"),
    ("triton", "3.5.1", "triton/backends/nvidia/driver.c", "triton's CUDA driver glue"),
    ("nvidia-cuda-runtime-cu12", "12.9.79", "nvidia/cuda_runtime/lib/libcudart.so.12", "cudaGetErrorString"),
    ("torch", "2.9.1", "torch/include/ATen/cuda/Exceptions.h", "torch's CUDA library checks"),
    ("torch", "2.9.1", "torch/include/c10/cuda/CUDAException.h", "torch's CUDA checks"),
    ("torch", "2.9.1", "torch/include/torch/csrc/distributed/c10d/NCCLUtils.hpp", "torch's NCCL checks"),
]
# headers whose enums name a library's error codes (the names its callers print): member -> the enum prefix
ENUMS: list[tuple[str, str, str, str]] = [
    ("nvidia-cuda-runtime-cu12", "12.9.79", "nvidia/cuda_runtime/include/driver_types.h", "cudaError"),
    ("nvidia-cudnn-cu12", "9.10.2.21", "nvidia/cudnn/include/cudnn_graph.h", "CUDNN_STATUS_"),
    ("nvidia-cublas-cu12", "12.9.1.4", "nvidia/cublas/include/cublas_api.h", "CUBLAS_STATUS_"),
    ("nvidia-nccl-cu12", "2.27.5", "nvidia/nccl/include/nccl.h", "nccl"),
]
RAW_WORDS = re.compile(rb"(?i)driver|version|compiled|CUDA|capabilit|library|found|support|API|PTX|toolchain|import|"
                       rb"kernel image|invalid|initiali[sz]|stub|insufficient|JIT")
# the installers, builders and loaders (``--family install``): pip's exceptions, resolver and build steps; poetry's and
# pdm's solvers; setuptools' and distutils' compiler steps, wheel's and build's; conda's solver (the conda wheels on the
# index are old: conda's own releases are on conda-forge, read at their GitHub tags instead)
PIP_FILES = re.compile(r"pip/_internal/(exceptions|resolution/\w{1,30}/\w{1,40}|resolution/\w{1,30}|models/wheel|"
                       r"operations/build/\w{1,40}|operations/install/\w{1,40}|req/req_install|utils/subprocess|"
                       r"index/package_finder|commands/install|wheel_builder|pyproject|utils/packaging|"
                       r"metadata/\w{1,40}|build_env)\.py$|pip/_vendor/resolvelib/\w{1,40}\.py$")
INSTALL_WANT: list[tuple[str, tuple[str, ...], Callable[[str], bool]]] = [
    ("pip", ("22.3.1", "23.3.2", "24.3.1", "25.3"), lambda n: PIP_FILES.match(n) is not None),
    ("poetry", ("1.8.5", "2.2.1"), lambda n: re.match(r"poetry/(mixology|puzzle|installation|inspection|utils/env)/"
                                                      r"[\w/]{1,80}\.py$", n) is not None),
    ("poetry-core", ("1.9.1", "2.2.1"), lambda n: re.match(r"poetry/core/(packages|version|constraints)/[\w/]{1,80}\.py$",
                                                           n) is not None),
    ("pdm", ("2.26.1",), lambda n: re.match(r"pdm/(resolver/\w{1,40}|exceptions|installers/\w{1,40}|models/candidates|"
                                            r"models/requirements|builders/\w{1,40}|environments/\w{1,40})\.py$", n)
     is not None),
    ("setuptools", ("69.5.1", "80.9.0"), lambda n: re.match(r"setuptools/(_distutils/(errors|ccompiler|unixccompiler|"
                                                            r"spawn|sysconfig|command/build_ext|_msvccompiler|"
                                                            r"compilers/C/\w{1,40})|build_meta|command/build_ext|"
                                                            r"command/bdist_wheel|extension|dist)\.py$", n)
     is not None),
    ("wheel", ("0.45.1",), lambda n: re.match(r"wheel/[\w/]{1,60}\.py$", n) is not None),
    ("build", ("1.3.0",), lambda n: re.match(r"build/[\w/]{1,60}\.py$", n) is not None),
    ("torch", ("2.9.1",), lambda n: n == "torch/utils/cpp_extension.py"),
]
# compiled installers and loaders: uv's binary (its messages are Rust string literals, read as printable runs)
INSTALL_RAW: list[tuple[str, str, str, str]] = [
    ("uv", "0.9.16", "uv-0.9.16.data/scripts/uv", "uv's binary"),
]
INSTALL_WORDS = re.compile(rb"(?i)wheel|platform|python|solution|depend|requires|satisf|compatib|version|found|tag|"
                           rb"marker|build|metadata|resolv|conflict|yanked|available|unsupported|not supported")
PYTHON = {("torch", "1.13.1"): "cp310"}  # the interpreter whose wheel is read, where a release has none for cp311
WARN = {"warn", "warning", "warn_once", "warning_once"}


def _text(node: ast.expr, names: dict[str, str] | None = None) -> str | None:
    """The message an expression builds, with each formatted field as ``{expr}`` (a name bound to a string in the same
    file read as that string); None where it is no string."""
    names = names or {}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"  # type: ignore[attr-defined]
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left, right = _text(node.left, names), _text(node.right, names)
        if left is not None and isinstance(node.op, ast.Mod):
            return left
        if left is not None or right is not None:
            return (left or "{" + ast.unparse(node.left) + "}") + (right or "{" + ast.unparse(node.right) + "}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "strip"):
        return _text(node.func.value, names)
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("textwrap.dedent", "dedent") and node.args:
        return _text(node.args[0], names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" and node.args:
        return None
    if isinstance(node, ast.Name):
        return names.get(node.id, "{" + node.id + "}")
    return None


def _worded(text: str) -> bool:
    """Whether a message has words of its own besides its formatted fields (``{lib_name} not found in the system
    path {sys.path}`` has; ``{CUDA_MISMATCH_MESSAGE}`` has not: the constant is listed where it is bound)."""
    return len(re.sub(r"\{[^{}]{0,200}\}", "", text).strip()) >= 15


def sites(source: str) -> Iterator[tuple[int, str, str]]:
    """(line, kind, text) of each raise, warning and message constant of one Python file."""
    tree = ast.parse(source)
    bound: dict[str, list[tuple[int, str]]] = {}  # name -> (line, string) of each binding, in order
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            t = _text(node.value)
            if t and len(t) > 20:
                bound.setdefault(node.targets[0].id, []).append((node.lineno, t))
    for node in ast.walk(tree):
        at = getattr(node, "lineno", 0)  # a name reads as its last binding before the use
        names = {k: max((b for b in v if b[0] <= at), default=v[0])[1] for k, v in bound.items()}
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            t = _text(node.exc.args[0], names)
            if t and _worded(t):
                yield node.lineno, "raise " + ast.unparse(node.exc.func), t
        elif isinstance(node, ast.Call) and node.args and (
                isinstance(node.func, ast.Attribute) and node.func.attr in WARN
                or isinstance(node.func, ast.Name) and node.func.id in WARN):
            t = _text(node.args[0], names)
            if t and _worded(t):
                yield node.lineno, "warn", t
        elif isinstance(node, ast.Assert) and node.msg is not None:
            t = _text(node.msg, names)
            if t and _worded(t):
                yield node.lineno, "assert", t
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.isupper() and re.search("MESSAGE|WARNING|ERROR|MSG", node.targets[0].id):
            t = _text(node.value)
            if t:
                yield node.lineno, "constant " + node.targets[0].id, t


def _log_calls(node: ast.AST, names: dict[str, str]) -> Iterator[tuple[str, str]]:
    """(kind, text) of an installer's other message shapes: a logger's error or critical line, an exception built with
    ``message=`` (pip's diagnostic errors), a class's ``reference`` (pip's error codes, printed as ``error: <ref>``)."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("error", "critical", "exception") and ast.unparse(node.func.value) in ("logger", "log"):
        t = _text(node.args[0], names)
        if t and _worded(t):
            yield "log " + node.func.attr, t
    if isinstance(node, ast.Call):
        for kw in node.keywords:
            if kw.arg in ("message", "context", "hint_stmt", "note_stmt"):
                t = _text(kw.value, names)
                if t and _worded(t):
                    yield f"{ast.unparse(node.func)}({kw.arg}=)", t
    if isinstance(node, ast.ClassDef):
        for st in node.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and ast.unparse(st.targets[0]) == "reference":
                t = _text(st.value)
                if t:
                    yield f"reference of {node.name}", t


def install_sites(source: str) -> Iterator[tuple[int, str, str]]:
    """:func:`sites`, and the installers' own message shapes (:func:`_log_calls`)."""
    yield from sites(source)
    for node in ast.walk(ast.parse(source)):
        for kind, text in _log_calls(node, {}):
            yield getattr(node, "lineno", 0), kind, text


def _python_sites(ic: IndexClient, want: Any, read: Callable[[str], Iterator[tuple[int, str, str]]],
                  python: Callable[[str, str], str], *, skip_missing: bool) -> None:
    """Print, as JSON lines, the sites ``read`` finds in the members ``pick`` chooses of each release's wheel in
    ``want`` ((dist, releases, pick) rows); a release the index lacks is said and passed over where ``skip_missing``."""
    for dist, releases, pick in want:
        for rel in releases:
            try:
                f = ic.find_wheel(dist, rel, python=python(dist, rel), platform="manylinux_x86_64")
            except Exception as e:  # noqa: BLE001 - a release the index lacks: say so, go on
                if not skip_missing:
                    raise
                print(f"{dist}=={rel}: {e}", file=sys.stderr)
                continue
            zf = RemoteZip(HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size))
            for m in zf.members:
                if not pick(m.name):
                    continue
                try:
                    found_sites = list(read(zf.read(m).decode("utf-8", "replace")))
                except SyntaxError:  # not Python this interpreter parses (a template, a data file named .py)
                    continue
                for line, kind, text in found_sites:
                    print(json.dumps({"library": dist, "release": rel, "wheel": f.filename, "file": m.name,
                                      "line": line, "kind": kind, "text": text}))
            sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["--family", "install"]:
        return install()
    with IndexClient(None) as ic:
        _python_sites(ic, WANT, sites, lambda dist, rel: PYTHON.get((dist, rel), "cp311"), skip_missing=False)
        for dist, rel, member, what in RAW:
            f = ic.find_wheel(dist, rel, python="cp311", platform="manylinux_x86_64")
            zf = RemoteZip(HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size))
            data = zf.read(member, limit=256 << 20)
            if member.endswith((".c", ".h")):  # a source: the string literals of each line
                found = [(n, b"".join(re.findall(rb'"((?:[^"\\\n]|\\.){0,500})"', ln)))
                         for n, ln in enumerate(data.split(b"\n"), 1) if b'"' in ln]
            else:  # a library: its printable runs of words (a message has spaces; a symbol name has none)
                found = [(m.start(), m.group()) for m in re.finditer(rb"[\x20-\x7e\t]{20,2000}", data)
                         if m.group().count(b" ") >= 3]
            for where, text in found:
                if len(text) >= 20 and RAW_WORDS.search(text):
                    print(json.dumps({"library": dist, "release": rel, "wheel": f.filename, "file": member,
                                      "line": where, "kind": "string " + what, "text": text.decode()}))
        for dist, rel, member, prefix in ENUMS:
            try:
                f = ic.find_wheel(dist, rel, python="cp311", platform="manylinux_x86_64")
            except Exception as e:  # noqa: BLE001 - a release the index lacks: say so, go on
                print(f"{dist}=={rel}: {e}", file=sys.stderr)
                continue
            zf = RemoteZip(HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size))
            lines = zf.read(member).decode("utf-8", "replace").splitlines()
            for n, ln in enumerate(lines, 1):
                m = re.match(r"\s*(" + prefix + r"\w{1,80})\s*=\s*(-?\d{1,6})", ln)
                if m:  # the enum constant, with the comment block above it (what the header says it means)
                    doc = []
                    for prev in reversed(lines[max(0, n - 8):n - 1]):
                        if re.match(r"\s*(" + prefix + r")\w", prev):
                            break
                        doc.insert(0, prev.strip(" /*"))
                    print(json.dumps({"library": dist, "release": rel, "wheel": f.filename, "file": member, "line": n,
                                      "kind": f"enum {m.group(2)}", "text": m.group(1) + ": " + " ".join(d for d in doc if d)}))
    return 0


def install() -> int:
    """The installers', builders' and loaders' messages (``--family install``): their Python sources' raise sites and
    uv's binary strings. The dynamic loader's and conda's are not on the index: tests/fixtures/raise_sites/install.toml
    cites them with the probe command that lists them (``strings /lib64/ld-linux-x86-64.so.2``) or the tag's file."""
    with IndexClient(None) as ic:
        _python_sites(ic, INSTALL_WANT, install_sites, lambda dist, rel: "cp311", skip_missing=True)
        for dist, rel, member, what in INSTALL_RAW:
            f = ic.find_wheel(dist, rel, python="cp311", platform="manylinux_x86_64")
            zf = RemoteZip(HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size))
            data = zf.read(member, limit=256 << 20)
            for m in re.finditer(rb"[\x20-\x7e\t]{20,4000}", data):
                if m.group().count(b" ") >= 3 and INSTALL_WORDS.search(m.group()):
                    print(json.dumps({"library": dist, "release": rel, "wheel": f.filename, "file": member,
                                      "line": m.start(), "kind": "string " + what, "text": m.group().decode()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
