"""What a lock needs of the machine (:mod:`glmcompat.ops.machinelock`): uv's platform for the machine's glibc, the
floors a requirements output states, and glmcompat's explanation of a release with no wheel for that glibc."""

from __future__ import annotations

import pytest

from glmcompat.matrix.load import load_facts
from glmcompat.model.errors import InputError
from glmcompat.model.machine import Machine, Provenance
from glmcompat.ops import machinelock as ml

# uv 0.13.9's stderr for `uv pip compile` of sglang==0.5.23 with --python-platform x86_64-manylinux_2_28 (this
# machine, 2026-12-06): sglang 0.5.23 publishes manylinux_2_34 wheels only
UV_SGLANG = ("error: No solution found when resolving dependencies:\n  ╰─▶ Because sglang==0.5.23 has no wheels with a "
             "matching platform tag (e.g., `manylinux_2_28_x86_64`) and you require sglang==0.5.23, we can conclude that "
             "your requirements are unsatisfiable.\n\n      hint: Wheels are available for `sglang` (v0.5.23) on the "
             "following platforms: `manylinux_2_34_aarch64`, `manylinux_2_34_x86_64`\n")


def machine(glibc: str | None) -> Machine:
    return Machine(glibc=glibc, glibc_from=Provenance("flag", "--glibc"))


def test_uv_platform_of_the_machines_glibc() -> None:
    assert ml.python_platform("x86_64", machine("2.36")) == "x86_64-manylinux_2_36"
    assert ml.python_platform("aarch64", None) == "aarch64-manylinux_2_28"
    assert ml.python_platform("x86_64", machine("2.41")) == "x86_64-manylinux_2_40"  # the newest uv names
    with pytest.raises(InputError, match="older than 2.17"):
        ml.python_platform("x86_64", machine("2.12"))


def test_a_release_without_a_wheel_for_the_glibc_is_explained() -> None:
    because, hint = ml.glibc_cause(UV_SGLANG, "x86_64", machine("2.28")) or ("", "")
    assert because.startswith("Because sglang 0.5.23 publishes Linux x86_64 wheels for manylinux_2_34 and newer only "
                              "(glibc >= 2.34) and the machine's glibc is 2.28 (--glibc)")
    assert "`--glibc 2.34`" in hint
    assert ml.glibc_cause(UV_SGLANG, "x86_64", machine("2.36")) is None  # not why a 2.36 compile would fail
    assert ml.glibc_cause("error: something else", "x86_64", machine("2.28")) is None


def test_the_header_states_the_floors() -> None:
    facts = load_facts()
    head = ml.header(facts, {"torch": "2.10.0", "numpy": "2.3.0"}, machine("2.34"))
    assert head.splitlines() == [
        "# needs: NVIDIA driver >= 525.60.13 (the lowest every CUDA build here runs on; torch 2.10.0 (CUDA 12.8))",
        "# needs: glibc 2.34 (manylinux_2_34 wheels chosen, --glibc; an older glibc may lack some)"]
    out = ml.with_header(b"# uv\n#    glmcompat lock x.in\nnumpy==2.3.0\n", head).decode()
    assert out.startswith("# uv\n#    glmcompat lock x.in\n# needs: NVIDIA") and out.endswith("some)\nnumpy==2.3.0\n")
