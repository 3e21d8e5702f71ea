"""One Finding type (glmcompat.model.findings) for the rules, `check` and `verify`; one structured cause type on
UnsafeError. The JSON form round-trips, and no module builds a finding-shaped dict of its own."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from glmcompat.model.errors import UnsafeError, classify
from glmcompat.model.findings import Cause, Finding

ROOT = Path(__file__).resolve().parent.parent


def test_finding_json_round_trips() -> None:
    f = Finding("abi", "error", ("sgl-kernel==0.3.21", "torch==2.10.0"), "built against torch 2.9.1",
                (("abi-probe", "installed files: sgl_kernel/sm100/common_ops.abi3.so"),), "pin torch==2.9.1",
                ("Linux x86_64",))
    assert Finding.from_json(f.to_json()) == f
    # verify's probe processes hand findings over as JSON; a record without the optional keys reads back
    bare = {"rule": "installation", "severity": "warning", "packages": [], "message": "m"}
    assert Finding.from_json(bare) == Finding("installation", "warning", (), "m")
    assert dataclasses.replace(f, remedy="r").remedy == "r" and dataclasses.replace(f, remedy="r") != f


def test_one_finding_class_and_no_finding_dicts() -> None:
    """The "three Finding builders" of issue #13 are one: the class is defined once, and neither verify module
    writes a finding as a dict literal (they build Finding and call to_json)."""
    defined = [p for p in (ROOT / "glmcompat").rglob("*.py") if re.search(r"^class Finding\b", p.read_text(), re.M)]
    assert [p.relative_to(ROOT).as_posix() for p in defined] == ["glmcompat/model/findings.py"]
    for name in ("core.py", "static.py"):
        text = (ROOT / "glmcompat" / "ops" / "verify" / name).read_text()
        assert '"severity":' not in text and "def _f(" not in text and "def _finding(" not in text, name


def test_unsafe_error_carries_causes_and_keeps_its_line() -> None:
    cause = Cause("root", "torch", ("you require torch==9",), "no safe set of the core exists for sm120", "relax it")
    e = UnsafeError("Because you require torch==9, we can conclude that ...", causes=(cause,))
    assert e.exit_code == 1 and e.causes == (cause,)
    assert classify(e) == (1, "Because you require torch==9, we can conclude that ...")
    assert cause.as_json() == {"kind": "root", "subject": "torch", "because": ["you require torch==9"],
                               "conclusion": "no safe set of the core exists for sm120", "remedy": "relax it"}
    assert UnsafeError("plain").causes == ()
