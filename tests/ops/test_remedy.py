"""The one remedy of an unsafe file (issue 37), end to end and offline: ``check --json``'s ``safe_set``, written into
the file exactly as printed, makes ``check`` pass; every pin is on the (recorded) index for the target's machine; the
hint names the file each pin lives in; the command never writes over its own input. The index the search reads is
recorded by scripts/record_remedy_index.py (tests/fixtures/remedy/index-*.json); ``-m network`` also compiles each
remedied file with the real uv against the live index."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from glmcompat.cli import main
from glmcompat.cli.commands import check as check_cmd
from glmcompat.edges.sources import RecordedSource
from glmcompat.ops.remedy import _command
from tests.conftest import FIXTURES

HERE = FIXTURES / "remedy"
CASES = tomllib.loads((HERE / "cases.toml").read_text())["case"]


def _recorded(args: Any) -> Any:
    sources = {m: RecordedSource(HERE / f"index-{m}.json") for m in ("x86_64", "aarch64")}
    return sources.__getitem__


def write_case(case: dict[str, Any], d: Path) -> Path:
    top = d / "requirements.txt"
    top.write_text(case["file"])
    if case.get("include"):
        (d / case["include"][0]).write_text(case["include"][1])
    return top


def apply(safe: dict[str, str | None], d: Path, top: Path, drop: tuple[str, ...] = ()) -> None:
    """Write ``safe`` into the case's files as a user would: each pin replaced where it lives, removed for null, a new
    name added to the top file; the index lines the remedy says to take out (``drop``) removed."""
    left = dict(safe)
    for f in sorted(d.glob("*.txt")):
        out = []
        for line in f.read_text().splitlines():
            if any(u in line.split() for u in drop):
                continue
            m = re.match(r"([A-Za-z0-9._-]+)==", line)
            name = m.group(1).lower().replace("_", "-") if m else None
            if name in left:
                v = left.pop(name)
                if v is not None:
                    out.append(f"{name}=={v}")
                continue
            out.append(line)
        f.write_text("\n".join(out) + "\n")
    top.write_text(top.read_text() + "".join(f"{n}=={v}\n" for n, v in left.items() if v is not None))


def check_json(capsys: Any, top: Path, target: str) -> tuple[int, dict[str, Any]]:
    rc = main(["check", str(top), "--target", target, "--json"])
    return rc, json.loads(capsys.readouterr().out)


SLOW = {"sglang-0.5.10-flashinfer-0.6.3"}  # 45 resolutions: two seconds
PARAMS = [pytest.param(c, id=c["id"], marks=[pytest.mark.slow] if c["id"] in SLOW else []) for c in CASES]


@pytest.mark.parametrize("case", PARAMS)
def test_the_remedy_applied_as_printed_makes_check_pass(case, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(check_cmd, "remedy_sources", _recorded)
    top = write_case(case, tmp_path)
    rc, doc = check_json(capsys, top, case["target"])
    assert rc == 1, doc
    (entry,) = doc["checked"]
    safe = entry["safe_set"]
    assert safe, f"no remedy for {case['id']}: {doc}"
    machine = "aarch64" if case["target"] == "sm121" else "x86_64"
    src = RecordedSource(HERE / f"index-{machine}.json")
    for name, v in safe.items():  # each pin exists on the index for the target's machine (a variant: its release)
        assert v is None or v.split("+")[0] in src.versions(name), (name, v)
        if v and "+" in v:  # a CUDA variant stays in its family and names the index the file gives for it
            assert entry["safe_set_indexes"][name] == "https://index.invalid/whl/cu128"
    assert entry["remedy"] and all(h["reason"] for h in entry["remedy"])
    # a label outranks no label: pip installs the +cpu build while its index stays, so the remedy says to take it out
    drop = tuple(m.group(1) for h in entry["remedy"] if (m := re.search(r"take out (\S+) too", h["reason"])))
    apply(safe, tmp_path, top, drop)
    rc, after = check_json(capsys, top, case["target"])
    assert rc == 0, after["findings"]


@pytest.mark.slow
def test_one_remedy_per_run_and_no_contradicting_hints(tmp_path, capsys, monkeypatch):
    """sglang 0.5.10 with flashinfer 0.6.3: one set (python and cubin together, at sglang's own pin), not "pin cubin
    0.6.3" next to "pin python>=0.6.7.post2"."""
    monkeypatch.setattr(check_cmd, "remedy_sources", _recorded)
    top = write_case(CASES[0], tmp_path)
    assert main(["check", str(top), "--target", "sm120", "--color", "never"]) == 1
    out = capsys.readouterr().out
    assert out.count("the nearest safe set") == 1
    assert "flashinfer-cubin==0.6.7.post2 flashinfer-python==0.6.7.post2" in out
    assert "sglang 0.5.10 requires flashinfer_python==0.6.7.post2" in out
    assert "pin flashinfer-python>=0.6.7.post2" not in out  # the per-finding hint gives way to the one remedy


def test_torch_on_sm70_moves_to_a_torch_with_sm70_code_and_its_family(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(check_cmd, "remedy_sources", _recorded)
    top = write_case(next(c for c in CASES if c["id"] == "torch-2.11.0-sm70"), tmp_path)
    _, doc = check_json(capsys, top, "sm70")
    safe = doc["checked"][0]["safe_set"]
    assert safe["torch"] != "2.11.0" and safe["torchvision"] != "0.26.0"
    from glmcompat.matrix.load import load_facts

    build = load_facts().torch_build(safe["torch"])
    assert build is not None and "sm_70" in build.sass


def test_a_renamed_kernel_is_null_in_safe_set(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(check_cmd, "remedy_sources", _recorded)
    top = write_case(next(c for c in CASES if c["target"] == "sm121"), tmp_path)
    _, doc = check_json(capsys, top, "sm121")
    entry = doc["checked"][0]
    assert entry["safe_set"]["sgl-kernel"] is None and entry["safe_set"]["sglang-kernel"]
    (rep,) = [h for h in entry["remedy"] if h["kind"] == "replace"]
    assert rep["package"] == "sgl-kernel" and rep["replaced_by"] == "sglang-kernel"


def test_the_hint_names_the_include_where_the_pin_lives(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(check_cmd, "remedy_sources", _recorded)
    top = write_case(next(c for c in CASES if c.get("include")), tmp_path)
    assert main(["check", str(top), "--target", "sm120", "--color", "never"]) == 1
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if "torch 2.10.0 -> 2.9.1" in ln]
    assert "[in gpu.txt:1]" in line


def test_the_command_never_writes_over_its_input(tmp_path):
    (tmp_path / "requirements.in").write_text("torch\n")
    (tmp_path / "requirements.txt").write_text("torch==2.10.0\n")
    cmd = _command("requirements.txt", tmp_path / "requirements.txt", ["sm120"])
    assert "glmcompat lock requirements.in -o requirements.txt" in cmd
    assert _command("requirements.txt", tmp_path / "requirements.in", ["sm120"]) == ""  # the input itself: edit it


def test_the_index_unreachable_is_a_warning_not_a_made_up_remedy(tmp_path, capsys, monkeypatch):
    from glmcompat.model.errors import EnvironmentFailure

    def unreachable(args: Any) -> Any:
        def source_for(machine: str) -> Any:
            raise EnvironmentFailure("index.invalid: connection refused")
        return source_for

    monkeypatch.setattr(check_cmd, "remedy_sources", unreachable)
    top = write_case(CASES[1], tmp_path)
    assert main(["check", str(top), "--target", "sm70", "--color", "never"]) == 1
    out = capsys.readouterr().out
    assert "warning: no remedy computed: the package index could not be read" in out and "nearest safe set" not in out


PLATFORM = {"x86_64": "x86_64-manylinux_2_28", "aarch64": "aarch64-manylinux_2_28"}
NETWORK = [c for c in CASES if c.get("network", True)]


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("case", NETWORK, ids=[c["id"] for c in NETWORK])
def test_the_remedied_file_compiles_with_uv(case, tmp_path, capsys, monkeypatch):
    """The safe set installs: ``uv pip compile`` for the target's machine resolves the remedied file."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    monkeypatch.setattr(check_cmd, "remedy_sources", _recorded)
    top = write_case(case, tmp_path)
    _, doc = check_json(capsys, top, case["target"])
    apply(doc["checked"][0]["safe_set"], tmp_path, top)
    machine = "aarch64" if case["target"] == "sm121" else "x86_64"
    r = subprocess.run([uv, "pip", "compile", str(top), "--python-version", "3.11", "--python-platform",
                        PLATFORM[machine], "--no-header", "-q"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_a_hint_that_overrides_an_engines_pin_says_so():
    """torchao 0.15.0 for sglang 0.5.10 (which pins torchao==0.9.0): the hint says it overrides the engine's pin; a hint
    that agrees with the pins, or a set without the engine, is left as it is."""
    from glmcompat.matrix.load import load_facts
    from glmcompat.ops.remedy import engine_override_note

    facts = load_facts()
    hint = "nothing blocks the stack; to keep torchao's compiled ops, install torchao==0.15.0"
    assert engine_override_note(hint, {"sglang": "0.5.10", "torchao": "0.9.0"}, facts) == \
        hint + " (overrides sglang 0.5.10's pin torchao==0.9.0)"
    assert engine_override_note("install torchao==0.9.0", {"sglang": "0.5.10"}, facts) == "install torchao==0.9.0"
    assert engine_override_note(hint, {"torchao": "0.9.0"}, facts) == hint
    vllm = engine_override_note("pin torch==2.13.0", {"vllm": "0.33.0"}, facts)
    assert vllm == "pin torch==2.13.0 (overrides vllm 0.33.0's pin torch==2.14.0)"


def test_a_cpu_build_moves_to_the_default_cuda_build(tmp_path, capsys, monkeypatch):
    """A +cpu torch keeps no label it cannot run with: the remedy is the default (CUDA) build of the same release, said
    as its own change, and no +cpu index is named for it."""
    monkeypatch.setattr(check_cmd, "remedy_sources", _recorded)
    top = write_case(next(c for c in CASES if c["id"] == "cpu-build-moves-to-the-cuda-build"), tmp_path)
    _, doc = check_json(capsys, top, "sm90")
    entry = doc["checked"][0]
    assert entry["safe_set"]["torch"] == "2.9.1" and not entry.get("safe_set_indexes")
    (h,) = [h for h in entry["remedy"] if h["package"] == "torch"]
    assert (h["from"], h["to"]) == ("2.9.1+cpu", "2.9.1") and "+cpu build cannot run on sm90" in h["reason"]
