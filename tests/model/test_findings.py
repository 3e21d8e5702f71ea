"""One Finding type (glmcompat.model.findings) for the rules, `check` and `verify`; one structured cause type on
UnsafeError. The JSON form round-trips, and no module builds a finding-shaped dict of its own."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from glmcompat.model.errors import UnsafeError, classify
from glmcompat.model.findings import Cause, Finding, cite

from tests.conftest import FIXTURES, run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_finding_json_round_trips() -> None:
    f = Finding(rule="abi", severity="error", packages=(("sgl-kernel", "0.3.21"), ("torch", "2.10.0")),
                message="built against torch 2.9.1",
                evidence=(("abi-probe", "installed files: sgl_kernel/sm100/common_ops.abi3.so"),), remedy="pin torch==2.9.1",
                environments=("Linux x86_64",))
    assert Finding.from_json(f.to_json()) == f
    # the JSON form writes the packages as pins, a bare name where the finding names no version
    assert f.to_json()["packages"] == ["sgl-kernel==0.3.21", "torch==2.10.0"]
    unpinned = Finding(rule="unpinned", severity="warning", packages=(("torch", ""),), message="m")
    assert unpinned.to_json()["packages"] == ["torch"] and Finding.from_json(unpinned.to_json()) == unpinned
    assert f.pins == ("sgl-kernel==0.3.21", "torch==2.10.0") and f.names == ("sgl-kernel", "torch")
    with pytest.raises(TypeError):
        Finding("abi", "error", (), "positional")  # type: ignore[misc]  # keywords only
    # verify's probe processes hand findings over as JSON; a record without the optional keys reads back
    bare = {"rule": "installation", "severity": "warning", "packages": [], "message": "m"}
    assert Finding.from_json(bare) == Finding(rule="installation", severity="warning", packages=(), message="m")
    assert dataclasses.replace(f, remedy="r").remedy == "r" and dataclasses.replace(f, remedy="r") != f


def test_one_finding_class_and_no_finding_dicts() -> None:
    """The "three Finding builders" of issue #13 are one: the class is defined once, and neither verify module
    writes a finding as a dict literal (they build Finding and call to_json)."""
    defined = [p for p in (ROOT / "glmcompat").rglob("*.py") if re.search(r"^class Finding\b", p.read_text(), re.M)]
    assert [p.relative_to(ROOT).as_posix() for p in defined] == ["glmcompat/model/findings.py"]
    for path in sorted((ROOT / "glmcompat" / "ops" / "verify").glob("*.py")):
        text = path.read_text()
        assert '"severity":' not in text and "def _f(" not in text and "def _finding(" not in text, path.name


def test_unsafe_error_carries_causes_and_keeps_its_line() -> None:
    cause = Cause("root", "torch", ("you require torch==9",), "no safe set of the core exists for sm120", "relax it")
    e = UnsafeError("Because you require torch==9, we can conclude that ...", causes=(cause,))
    assert e.exit_code == 1 and e.causes == (cause,)
    assert classify(e) == (1, "Because you require torch==9, we can conclude that ...")
    assert cause.as_json() == {"kind": "root", "subject": "torch", "because": ["you require torch==9"],
                               "conclusion": "no safe set of the core exists for sm120", "remedy": "relax it",
                               "reason": cause.because()}
    assert UnsafeError("plain").causes == ()


# --- readable verdicts (issue #21): one short evidence line by default, everything with -v and in --json ---------

def _check(tmp_path: Path, lines: str, *extra: str) -> tuple[int, str]:
    req = tmp_path / "requirements.txt"
    req.write_text(lines)
    p = run_cli("check", "requirements.txt", "--target", "sm120", *extra, cwd=tmp_path)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, p.stdout


def _findings(text: str) -> list[list[str]]:
    """Each finding of a text verdict with the lines under it (its evidence, hint)."""
    out: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith(("  × ", "  ⚠ ")):
            out.append([line])
        elif line.startswith("      ") and out:
            out[-1].append(line.strip())
    return out


def test_check_prints_one_short_evidence_line_per_finding_and_says_a_repeat_once(tmp_path: Path) -> None:
    """torch 2.15.0 next to sgl-kernel 0.3.21: two errors citing one ~950-character source. By default each
    finding carries exactly one evidence line, the probe that reproduces it, and the second says "as above"
    (2,444 characters before, 660 now)."""
    rc, out = _check(tmp_path, "torch==2.15.0\nsgl-kernel==0.3.21\n")
    assert rc == 1
    found = _findings(out)
    assert [f[0].split()[1:3] for f in found] == [["sgl-kernel", "0.3.21"], ["sgl-kernel", "0.3.21"]]
    assert [[ln for ln in f[1:] if ln.startswith("evidence")] for f in found] == [
        ["evidence (abi-probe): glmcompat abi sgl-kernel==0.3.21 --torch 2.15.0"], ["evidence: as above"]]
    assert len(out) < 800 and max(map(len, out.splitlines())) < 240
    # -v: the same verdict with every source in full, each printed once; --json: all of it, and the probe
    rcv, full = _check(tmp_path, "torch==2.15.0\nsgl-kernel==0.3.21\n", "-v")
    rcj, js = _check(tmp_path, "torch==2.15.0\nsgl-kernel==0.3.21\n", "--json")
    doc = json.loads(js)
    assert rcv == rcj == 1
    sources = {e["source"] for f in doc["findings"] for e in f["evidence"]}
    assert sources and all(full.count(s) == 1 for s in sources)
    assert [f["probe"] for f in doc["findings"]] == ["glmcompat abi sgl-kernel==0.3.21 --torch 2.15.0"] * 2
    assert "reproduce: glmcompat abi sgl-kernel==0.3.21 --torch 2.15.0" in full


def test_no_template_text_reaches_a_user(tmp_path: Path) -> None:
    """Placeholders (`torchvision==X`, `torchaudio-X-cp311`, `REQUIREMENTS_IN`, `--torch VER`) are rendered
    with real values: the unpinned remedy names the release built for the set's torch, a [[family]] row's
    evidence names its pair, the hint names the file's own .in."""
    rc, out = _check(tmp_path, "torch==2.9.1\ntorchvision\ntorchaudio==2.10.0\nsgl-kernel==0.3.21\n", "-v")
    assert rc == 1
    assert "pin torchvision==0.24.1 (the release built for torch 2.9.1)" in out
    assert "torchaudio 2.10.0: torch==2.10.0; METADATA Requires-Dist on torch" in out
    assert "no remedy computed" in out  # offline: the remedy (tests/ops/test_remedy.py) is not made up without the index
    placeholder = re.compile(r"==X\b|-X-|\bVER\b|\bVERSION\b|REQUIREMENTS_IN|'X\+|\(==Y\)|==\)")
    assert not placeholder.search(out), placeholder.search(out)
    # nor in any source of the shipped matrix a finding can cite
    import tomllib

    for path in sorted((ROOT / "glmcompat" / "matrix" / "data").glob("*.toml")):
        for table in tomllib.loads(path.read_text()).values():
            for row in table if isinstance(table, list) else ():
                for key in ("source", "remedy", "cause"):  # what a finding or `explain` shows
                    text = row.get(key, "") if isinstance(row, dict) else ""
                    assert not re.search(r"-X-|==X\b|==Y\b|'X\+|libcudart\.so\.N\b|\bVER\b|cuXX", text), (path.name, text[:120])


def test_cite_is_the_reproducing_command_or_the_url() -> None:
    assert cite("glmcompat abi sgl-kernel==0.3.21 --torch 2.9.0 and --torch 2.9.1: 0 missing") == \
        "glmcompat abi sgl-kernel==0.3.21 --torch 2.9.0"
    assert cite("`glmcompat arch torch==2.15.0 --platform aarch64 --module torch/lib/libtorch_cuda.so` on x.whl") == \
        "glmcompat arch torch==2.15.0 --platform aarch64 --module torch/lib/libtorch_cuda.so"
    assert cite("sm120 fix (sgl-project/sglang#14311, https://github.com/sgl-project/sglang/pull/14311).") == \
        "https://github.com/sgl-project/sglang/pull/14311"
    long = "word " * 60
    assert len(cite(long)) <= 120 and cite(long).endswith("…")


def test_lock_failure_cites_the_probe_and_keeps_the_evidence_in_its_cause() -> None:
    """`lock --with torch==2.10.0` on the GLM-5 stack: the derivation cites `glmcompat abi sgl-kernel==0.3.21
    --torch 2.10.0` (1,326 characters before, 457 now); the cause carries the source in full (--json, -v)."""
    from glmcompat.decide.explain import resolve
    from glmcompat.decide.resolver import Request
    from glmcompat.edges.sources import RecordedSource
    from glmcompat.matrix.load import load_facts

    facts = load_facts()
    try:
        resolve(facts, RecordedSource(FIXTURES / "resolver" / "index.json"),
                Request("glm5-sglang-0.5.9", facts.target("sm120"), "glm_moe_dsa", ("torch==2.10.0",)))
    except UnsafeError as e:
        text, causes = str(e), e.causes
    else:
        raise AssertionError("torch==2.10.0 next to sgl-kernel 0.3.21 resolved")
    assert "(evidence abi-probe: `glmcompat abi sgl-kernel==0.3.21 --torch 2.10.0`)" in text
    assert len(classify(UnsafeError(text))[1]) < 500
    row = facts.kernel("sgl-kernel", "0.3.21")
    assert row is not None and causes[0].evidence == (("abi-probe", row.source),)
    assert causes[0].as_json()["evidence"] == [{"kind": "abi-probe", "source": row.source}]
