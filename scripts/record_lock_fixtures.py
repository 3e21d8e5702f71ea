"""Record real uv locks for the offline tests (run by hand; needs the package index).

For each scenario it writes a pyproject.toml, runs the real `uv lock` (exclude-newer pinned for
reproducibility), exports requirements.txt and pylock.toml, and rewrites every index host to the
placeholder `index.invalid` so that no package-index host name is committed.

    python scripts/record_lock_fixtures.py [tests/fixtures/locks]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXCLUDE_NEWER = "2026-11-29T00:00:00Z"
ENV = "sys_platform == 'linux' and platform_machine == 'x86_64'"

SCENARIOS = {
    # The stack that served GLM-5: sglang 0.5.9 with transformers 5.2.0 overriding its 4.57.1 pin.
    "glm5-sglang-0.5.9": (["sglang==0.5.9"], ["transformers==5.2.0"]),
    # The same with torch bumped to 2.10.0 (what the unpinned torchvision install did).
    "glm5-torch-2.10.0": (["sglang==0.5.9"], ["transformers==5.2.0", "torch==2.10.0", "torchvision==0.25.0", "torchaudio==2.10.0"]),
    # what uv locks today for a hand-pinned stack: torch 2.15.0 next to sgl-kernel 0.3.21.
    "unpinned-torch": (["torch>=2.9.1", "torchvision", "sgl-kernel==0.3.21", "flashinfer-python==0.6.3", "transformers>=5.2.0"], []),
}


def _scrub(text: str) -> str:
    return re.sub(r"https?://[A-Za-z0-9.-]+(:\d+)?/", "https://index.invalid/", text)


def record(out: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    for name, (deps, overrides) in SCENARIOS.items():
        with tempfile.TemporaryDirectory() as d:
            proj = Path(d)
            deps_toml = ", ".join(f'"{x}"' for x in deps)
            ov = ", ".join(f'"{x}"' for x in overrides)
            (proj / "pyproject.toml").write_text(
                f'[project]\nname = "{name}"\nversion = "0"\nrequires-python = ">=3.11,<3.13"\n'
                f"dependencies = [{deps_toml}]\n\n[tool.uv]\noverride-dependencies = [{ov}]\n"
                f'environments = ["{ENV}"]\nexclude-newer = "{EXCLUDE_NEWER}"\n'
            )
            subprocess.run([uv, "lock", "-q"], cwd=proj, env=env, check=True)
            subprocess.run([uv, "export", "-q", "--format", "requirements.txt", "--no-emit-project", "-o", "requirements.txt"],
                           cwd=proj, env=env, check=True)
            subprocess.run([uv, "export", "-q", "--format", "pylock.toml", "--no-emit-project", "-o", "pylock.toml"],
                           cwd=proj, env=env, check=True)
            dest = out / name
            dest.mkdir(parents=True, exist_ok=True)
            for f in ("pyproject.toml", "uv.lock", "requirements.txt", "pylock.toml"):
                (dest / f).write_text(_scrub((proj / f).read_text()))
            print(f"recorded {name}")


if __name__ == "__main__":
    record(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/locks"))
