"""Record what the installers and builders on this machine really print when an install fails (issue 38's sweep of the
installers' raise sites): pip refusing a wheel of another platform, pip skipping releases for their Requires-Python,
setuptools without the wheel package, a C extension whose header is missing, a build whose compiler is not there, and pip
refusing an externally managed Python. Each run builds its own small local package (no
index, no network) and keeps the tool's whole output, with the tool's version.

Run: ``python scripts/record_install_messages.py [--system-python /usr/bin/python3]`` from a venv that has pip,
setuptools and gcc on PATH; it writes tests/fixtures/raise_sites/install-real.toml (each run's command, output and the
signatures tests/decide/test_install_raise_sites.py expects explain to name in it)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "raise_sites" / "install-real.toml"


def _wheel(path: Path, name: str, version: str, tag: str, requires_python: str = "") -> Path:
    """A minimal wheel: one module, METADATA (with Requires-Python where given), WHEEL and RECORD."""
    whl = path / f"{name.replace('-', '_')}-{version}-{tag}.whl"
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + (
        f"Requires-Python: {requires_python}\n" if requires_python else "")
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr(f"{name.replace('-', '_')}.py", "")
        z.writestr(f"{dist}/METADATA", meta)
        z.writestr(f"{dist}/WHEEL", f"Wheel-Version: 1.0\nGenerator: glmcompat\nRoot-Is-Purelib: true\nTag: {tag}\n")
        z.writestr(f"{dist}/RECORD", "")
    return whl


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    import os

    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300)
    return (r.stdout + r.stderr).replace(str(cwd), "/work").replace(sys.prefix, "/venv")


def main(argv: list[str]) -> int:
    system = argv[argv.index("--system-python") + 1] if "--system-python" in argv else ""
    py = sys.executable
    pip_version = subprocess.run([py, "-m", "pip", "--version"], capture_output=True, text=True).stdout.split()[1]
    runs: list[dict[str, object]] = []
    quiet = ["--disable-pip-version-check", "--no-input", "--no-index"]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        # 1. a wheel of another platform
        other = _wheel(tmp, "glmcompat-demo", "1.0", "cp27-cp27m-win32")
        runs.append({"tool": f"pip {pip_version}", "command": "pip install --no-index --no-deps <a cp27 win32 wheel>",
                     "output": _run([py, "-m", "pip", "install", *quiet, "--no-deps", other.name], tmp),
                     "expect": ["wheel-not-supported"]})
        # 2. the only release requires a Python this is not
        links = tmp / "links"
        links.mkdir()
        _wheel(links, "glmcompat-demo", "2.0", "py3-none-any", requires_python=">=4.0")
        runs.append({"tool": f"pip {pip_version}", "command": "pip install --no-index --find-links links glmcompat-demo "
                     "(its only release: Requires-Python >=4.0)",
                     "output": _run([py, "-m", "pip", "install", *quiet, "--find-links", "links", "glmcompat-demo"], tmp),
                     "expect": ["python-version-unsupported"]})
        # 3. a C extension whose header is missing; 4. the same with a compiler that is not there
        src = tmp / "ext"
        src.mkdir()
        (src / "ext.c").write_text("#include <glmcompat_absent.h>\nint f(void) { return 0; }\n")
        (src / "setup.py").write_text(textwrap.dedent("""\
            from setuptools import Extension, setup
            setup(name="glmcompat-ext", version="1.0", ext_modules=[Extension("glmcompat_ext", ["ext.c"])])
            """))
        build = [py, "-m", "pip", "install", *quiet, "--no-build-isolation", "./ext"]
        runs.append({"tool": f"pip {pip_version}", "command": "pip install --no-build-isolation ./ext (setuptools "
                     "without the wheel package)", "output": _run(build, tmp),
                     "expect": ["build-backend-too-old", "source-build-failed"]})
        setup = [py, "setup.py", "build_ext", "--inplace"]
        runs.append({"tool": "setuptools (distutils), gcc", "command": "python setup.py build_ext (#include "
                     "<glmcompat_absent.h>)", "output": _run(setup, src),
                     "expect": ["build-header-missing", "source-build-failed"]})
        runs.append({"tool": "setuptools (distutils)", "command": "CC=/opt/absent/gcc python setup.py build_ext",
                     "output": _run(setup, src, {"CC": "/opt/absent/gcc"}), "expect": ["build-tool-missing"]})
        # 6. uv and pip on releases no wheel of which fits, and on two pins of one package (a local --find-links
        # directory; the package is named like NVIDIA's libraries, which explain reads as the stack's)
        import shutil

        uv = shutil.which("uv")
        demo = "nvidia-glmcompat-demo"
        for sub, tag in (("impl", "cp27-cp27m-win32"), ("plat", "py3-none-win_amd64")):
            (tmp / sub).mkdir()
            _wheel(tmp / sub, demo, "1.0", tag)
        (tmp / "two").mkdir()
        for v in ("1.0", "2.0"):
            _wheel(tmp / "two", demo, v, "py3-none-any")
        if uv:
            uv_version = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.split()[1]
            uvpip = [uv, "pip", "install", "--no-cache", "--python", py, "--dry-run", "--no-index", "--find-links"]
            for sub, what in (("impl", "a cp27 win32 wheel"), ("plat", "a win_amd64 wheel")):
                runs.append({"tool": f"uv {uv_version}", "command": f"uv pip install --no-index --find-links {sub} {demo} "
                             f"(its only release: {what})", "output": _run([*uvpip, sub, demo], tmp, {"NO_COLOR": "1"}),
                             "expect": ["wheel-not-supported", "no-matching-distribution"]})
            runs.append({"tool": f"uv {uv_version}", "command": f"uv pip install --no-index --find-links two {demo}==1.0 "
                         f"{demo}==2.0", "output": _run([*uvpip, "two", f"{demo}==1.0", f"{demo}==2.0"], tmp,
                                                        {"NO_COLOR": "1"}),
                         "expect": ["pip-resolution-impossible"]})
        conflict = _run([py, "-m", "pip", "install", *quiet, "--dry-run", "--find-links", "two", f"{demo}==1.0",
                         f"{demo}==2.0"], tmp)
        runs.append({"tool": f"pip {pip_version}", "command": f"pip install --no-index --find-links two {demo}==1.0 "
                     f"{demo}==2.0", "output": conflict, "expect": ["pip-resolution-impossible"]})
        # the same report as users paste it: from "The conflict is caused by:" on, without pip's head line
        cut = conflict[conflict.index("The conflict is caused by:"):].split("\n\n", 1)[0] + "\n"
        runs.append({"tool": f"pip {pip_version}", "command": "the same, from \"The conflict is caused by:\" to its "
                     "blank line", "output": cut, "expect": ["pip-resolution-impossible"]})
        # 5. the distribution's own Python (PEP 668)
        if system:
            sv = subprocess.run([system, "-m", "pip", "--version"], capture_output=True, text=True).stdout.split()
            runs.append({"tool": f"pip {sv[1] if len(sv) > 1 else '?'} ({system})",
                         "command": f"{system} -m pip install --no-index glmcompat-demo",
                         "output": _run([system, "-m", "pip", "install", "--no-index", "glmcompat-demo"], tmp),
                         "expect": ["externally-managed-environment"]})
    lines = ["# What pip and the compilers on a machine really print when an install fails, recorded by",
             "# scripts/record_install_messages.py (each run builds its own small local package: no index, no network).",
             "# tests/decide/test_install_raise_sites.py asserts that explain names each run's `expect` in its output.",
             "schema = 1", ""]
    for r in runs:
        lines += ["[[run]]", f"tool = {json.dumps(r['tool'])}", f"command = {json.dumps(r['command'])}",
                  f"expect = {json.dumps(r['expect'])}", f"output = {json.dumps(r['output'], ensure_ascii=False)}", ""]
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(f"{OUT}: {len(runs)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
