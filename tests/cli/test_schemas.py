"""Every ``--json`` output is versioned and has a shipped JSON Schema (draft 2020-12) in glmcompat/cli/schemas/.

Each test runs the real command (in process, or as a process where that is how it runs) on real inputs: the
committed locks and the lock fixtures, the shipped matrix, fake wheels built with g++ and served with range
requests, the recorded index pages. The output must validate against the schema of its command, and every
schema is strict (``additionalProperties: false``, every field required unless it is optional by design), so a
``--json`` output that changes shape fails here until its schema (and, for an incompatible change, its
``version``) changes with it.

The schemas are generated (:mod:`glmcompat.cli.schemagen`) from the output records of :mod:`glmcompat.model.outputs`
and, for ``matrix show``, from the matrix's own models; regenerate them with ``python -m glmcompat.cli.schemagen``
after a change to either (a test here fails with that command while a shipped file is stale).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import asdict
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from glmcompat.ops.projectlock import ProjectLockResult
from glmcompat.cli import COMMANDS, jsonerrors, main, schemagen

from tests.conftest import FIXTURES, LOCKS, ROOT, json_dicts, run_cli

SCHEMAS = files("glmcompat.cli").joinpath("schemas")
# command (as `glmcompat COMMAND [ACTION]` names it) -> schema name; the test below keeps this complete
JSON_OUTPUTS = dict(jsonerrors.JSON_OUTPUTS)
MATRIX_ACTIONS = ("validate", "show", "schema", "probe", "refresh", "audit")
PIP_ACTIONS = ("install", "constraints")


def schema(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SCHEMAS.joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))
    return doc


@functools.cache
def _validator(name: str) -> Draft202012Validator:
    """The validator of the shipped schema ``name``, made once: it keeps the $refs it resolved (each output's
    validation otherwise read the file and resolved every reference again)."""
    return Draft202012Validator(schema(name))


@functools.cache
def generated(name: str) -> str:
    """:func:`glmcompat.cli.schemagen.text` of ``name``, made once in this process (the schema is a function of the code
    alone; each generation builds every record's pydantic adapter and reads their sources for the descriptions)."""
    return schemagen.text(name)


def validate(name: str, text: str) -> dict[str, Any]:
    """``text`` parsed as JSON and validated against the schema ``name`` (every error listed on failure)."""
    doc = json.loads(text)
    errors = sorted(_validator(name).iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, f"{name}: the output does not match {name}.schema.json:\n" + "\n".join(
        f"  at /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:20])
    assert isinstance(doc, dict) and isinstance(doc["version"], int)
    return doc


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``glmcompat ARGV`` in process: (exit code, stdout, stderr)."""
    try:
        rc = main(list(argv))
    except SystemExit as e:
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


# ------------------------------------------------------------------------------------------------
# The schemas themselves
# ------------------------------------------------------------------------------------------------


def shipped() -> list[str]:
    return sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.iterdir() if p.name.endswith(".schema.json"))


def test_one_schema_per_json_output_and_no_other() -> None:
    assert shipped() == sorted(JSON_OUTPUTS.values())


@pytest.mark.parametrize("name", sorted(JSON_OUTPUTS.values()))
def test_schema_is_draft_2020_12_strict_and_versioned(name: str) -> None:
    s = schema(name)
    Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["type"] == "object" and s["additionalProperties"] is False
    assert "version" in s["required"] and isinstance(s["properties"]["version"]["const"], int)

    objects = (o for o in json_dicts(s) if o.get("type") == "object" and "properties" in o)
    for o in objects:  # every object with named fields says what else it may hold: nothing
        assert o.get("additionalProperties") is False, f"{name}: an object allows unknown fields: {sorted(o['properties'])}"


def _help(*argv: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return buf.getvalue()


def test_every_command_with_json_has_a_schema() -> None:
    """--help of every command and matrix action: those offering --json are exactly those with a schema."""
    with_json = set()
    for name in COMMANDS:
        actions: tuple[str, ...] = MATRIX_ACTIONS if name == "matrix" else PIP_ACTIONS if name == "pip" else ("",)
        for action in actions:
            argv = (name, action) if action else (name,)
            if re.search(r"(^|\s)--json\b", _help(*argv)):
                with_json.add(argv)
    assert with_json == set(JSON_OUTPUTS)


@pytest.mark.parametrize("name", schemagen.names())
def test_every_generated_schema_is_current(name: str) -> None:
    """The shipped file is what ``python -m glmcompat.cli.schemagen`` writes now from the output records (and
    matrix show's from the matrix models)."""
    assert SCHEMAS.joinpath(f"{name}.schema.json").read_text(encoding="utf-8") == generated(name), (
        f"glmcompat/cli/schemas/{name}.schema.json is stale: run `python -m glmcompat.cli.schemagen`")


def test_every_shipped_schema_is_generated() -> None:
    assert schemagen.names() == shipped()


@pytest.mark.slow
def test_schemagen_check_names_a_stale_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``--check`` exits 1 naming each stale file and the command that rewrites it; the rewrite makes it current."""
    for p in SCHEMAS.iterdir():
        if p.name.endswith(".schema.json"):
            (tmp_path / p.name).write_text(p.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(schemagen, "SCHEMAS", tmp_path)
    monkeypatch.setattr(schemagen, "text", generated)  # what --check compares and the rewrite writes: generated once
    assert schemagen.main(["--check"]) == 0
    doc = json.loads((tmp_path / "check.schema.json").read_text(encoding="utf-8"))
    doc["properties"]["checked"]["description"] = "edited by hand"
    (tmp_path / "check.schema.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    assert schemagen.main(["--check"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "glmcompat/cli/schemas/check.schema.json is stale: run `python -m glmcompat.cli.schemagen`"]
    assert schemagen.main([]) == 0 and schemagen.main(["--check"]) == 0


def test_descriptions_come_from_the_record_docs() -> None:
    """A field's docstring is its description, a record's docstring its object's; the document's own docstring
    heads the schema with its version."""
    s = schema("check")
    assert s["$defs"]["CheckedDoc"]["properties"]["environments"]["description"] == (
        "how many installable environments the file has (each judged on its own)")
    assert s["$defs"]["CheckedDoc"]["description"] == "One (lock, target) verdict."
    assert s["description"].startswith("The offline verdict on one or more locks for one or more GPU targets (version 1).")


# ------------------------------------------------------------------------------------------------
# check: every committed lock and every lock fixture
# ------------------------------------------------------------------------------------------------


def _committed() -> list[tuple[str, str]]:
    out = []
    for d in sorted((ROOT / "locks").glob("*/*")):
        target = d.name.split("-")[0]
        out.append((str(d / "requirements.txt"), target))
        if (d / "uv.lock").exists():
            out.append((str(d / "uv.lock"), target))
    return out


@pytest.mark.parametrize(("path", "target"), _committed() + [
    (str(LOCKS / "unpinned-torch" / "uv.lock"), "sm120"),  # errors, with evidence and remedies
    (str(LOCKS / "glm5-torch-2.10.0" / "requirements.txt"), "sm120"),
    (str(LOCKS / "glm5-sglang-0.5.9" / "pylock.toml"), "sm90"),
])
def test_check_json(capsys: pytest.CaptureFixture[str], path: str, target: str) -> None:
    rc, out, err = call(capsys, "check", path, "--target", target, "--json")
    assert rc in (0, 1), err
    doc = validate("check", out)
    assert doc["ok"] is (rc == 0) and doc["checked"][0]["target"] == target


def test_check_json_several_locks_targets_and_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    locks = [str(LOCKS / n / "uv.lock") for n in ("glm5-sglang-0.5.9", "unpinned-torch", "glm5-torch-2.10.0")]
    rc, out, err = call(capsys, "check", *locks, "--target", "sm120", "--target", "sm90", "--model", "glm_moe_dsa",
                        "--allow-unknown", "--json")
    assert rc == 1, err
    doc = validate("check", out)
    assert len(doc["checked"]) == 6 and doc["findings"] and all(c["model"] == "glm_moe_dsa" for c in doc["checked"])


def test_check_json_of_the_format_fixtures(capsys: pytest.CaptureFixture[str]) -> None:
    """Other formats (poetry, pdm, Pipfile, conda, requirements with includes) carry notes and environments."""
    seen = 0
    for d in sorted((FIXTURES / "formats").iterdir()):
        lock = next((d / n for n in ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "requirements.txt",
                                     "environment.yml", "pylock.toml") if (d / n).exists()), None)
        if lock is None:
            continue
        rc, out, err = call(capsys, "check", str(lock), "--target", "sm120", "--allow-unknown", "--json")
        if rc == 2:  # a fixture that is bad input on purpose: one line, and the error document
            assert len(err.strip().splitlines()) == 1
            assert validate("check", out)["error"]["code"] == 2
            continue
        assert rc in (0, 1), err
        validate("check", out)
        seen += 1
    assert seen >= 5


# ------------------------------------------------------------------------------------------------
# targets, matrix show, explain, verify
# ------------------------------------------------------------------------------------------------


def test_targets_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = call(capsys, "targets", "--json")
    doc = validate("targets", out)
    assert rc == 0 and doc["version"] == 1 and {t["name"] for t in doc["targets"]} >= {"sm90", "sm120", "sm121"}


def test_matrix_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = call(capsys, "matrix", "show", "--json")
    doc = validate("matrix-show", out)
    assert rc == 0 and doc["kernel"] and doc["stack"]


def test_explain_json(tmp_path: Path) -> None:
    from tests.decide.test_explain import LOG

    log = tmp_path / "server.log"
    log.write_text(LOG)
    r = run_cli("explain", str(log), "--json")
    assert r.returncode == 1, r.stderr
    assert validate("explain", r.stdout)["found"] is True
    log.write_text("INFO all good\n")
    r = run_cli("explain", str(log), "--json")
    assert r.returncode == 0 and validate("explain", r.stdout)["signatures"] == []


def test_verify_json_without_a_gpu() -> None:
    """The real probes on this machine (no GPU, perhaps no torch): every probe's record, findings, counts."""
    r = run_cli("verify", "--no-gpu", "--json", "--timeout", "60")
    assert r.returncode in (0, 1), r.stderr
    doc = validate("verify", r.stdout)
    assert sum(doc["counts"].values()) == len(doc["probes"]) > 0


# ------------------------------------------------------------------------------------------------
# abi and arch: fake wheels over HTTP with range requests
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.abifakes import HAVE_GXX, LocalServer, build_fakes

    if not HAVE_GXX:
        pytest.skip("needs g++ to build the fake wheels")
    with LocalServer(build_fakes(tmp_path_factory.mktemp("fakes"))) as srv:
        yield srv


@pytest.mark.parametrize("args", [
    ("abi", "ext==1.0", "--torch", "9.0.0"),  # compatible
    ("abi", "ext==1.0", "--torch", "9.1.0"),  # a missing symbol
    ("abi", "ext==1.0", "--torch", "9.1.0", "--python", "3.11", "--all"),  # from the cache this time
    ("arch", "ext==1.0"),
    ("arch", "ext==1.0", "--target", "sm120"),
    ("arch", "ext==1.0", "--target", "sm121"),  # the x86_64 wheel for an aarch64-only target: a note
    ("arch", "ext==1.0", "--target", "sm90", "--module", "ext/*"),
])
def test_abi_and_arch_json(capsys: pytest.CaptureFixture[str], wheel_server: Any, args: tuple[str, ...]) -> None:
    rc, out, err = call(capsys, *args, "--index-url", wheel_server.base, "--json")
    assert rc in (0, 1), err
    doc = validate(args[0], out)
    assert doc["kind"] == args[0] and doc["ok"] is (rc == 0)


# ------------------------------------------------------------------------------------------------
# upgrade: the recorded index
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def recorded_index() -> Iterator[list[str]]:
    """The recorded index served on a local port: ``--index-url`` and its URL."""
    from tests.decide.test_resolver import HERE
    from tests.localindex import serve_recorded

    with serve_recorded(json.loads((HERE / "pages.json").read_text())) as url:
        yield ["--index-url", url]


@pytest.mark.parametrize("args", [
    ("--target", "sm120"),
    ("--target", "sm121"),  # aarch64, other kernel code
    ("--target", "sm120", "--with", "sglang==0.5.9", "--limit", "1"),
    ("--target", "sm120", "--engine", "vllm"),
])
def test_upgrade_json(capsys: pytest.CaptureFixture[str], recorded_index: list[str], args: tuple[str, ...]) -> None:
    from tests.decide.test_resolver import CUTOFF

    rc, out, err = call(capsys, "upgrade", *recorded_index, *args, "--exclude-newer", CUTOFF, "--json", "-q")
    assert rc == 0, err
    doc = validate("upgrade", out)
    assert doc["pins"] and doc["exclude_newer"] == f"{CUTOFF}T00:00:00Z"


# ------------------------------------------------------------------------------------------------
# matrix refresh and audit: recorded pages and fake wheels (the fixtures of tests/ops/test_refresh.py)
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def refresh_index(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Any:
    from tests.ops import test_refresh as tr

    if not tr.HAVE_GXX:
        pytest.skip("needs g++ to build the fake wheels")
    fake = tr.FakeIndex(tr.build_wheels(_refresh_libs(tmp_path_factory)))
    monkeypatch.setattr(tr.rf, "make_index", lambda url, jobs, cache: fake.index(cache))
    return fake


_LIBS: dict[str, bytes] = {}


def _refresh_libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The shared objects of tests/ops/test_refresh.py's fake wheels, built once."""
    from tests.ops import test_refresh as tr

    if not _LIBS:
        tmp = tmp_path_factory.mktemp("libs")
        c10 = tr.gxx(tmp, "c10", tr.C10_OLD, "libc10.so")
        cudart = tr.gxx(tmp, "cudart", tr.CUDART, "libcudart.so.12")
        (tmp / "link").mkdir()
        shutil.copy(c10, tmp / "link" / "libc10.so")
        shutil.copy(cudart, tmp / "link" / "libcudart.so")
        fat = "__attribute__((section(\".nv_fatbin\"), used)) const unsigned char fb[] = {" + \
            ",".join(str(b) for b in tr.fatbin_section()) + "};\n"
        link = [f"-L{tmp / 'link'}", "-lc10", "-lcudart"]
        _LIBS.update({
            "c10": c10.read_bytes(),
            "kernel": tr.gxx(tmp, "kernel", tr.EXT + fat, "common_ops.abi3.so", *link).read_bytes(),
            "ext": tr.gxx(tmp, "ext", tr.EXT, "_C.abi3.so", *link).read_bytes(),
            "torch_cuda": tr.gxx(tmp, "tcuda", fat + 'extern "C" int torch_cuda_marker(void) { return 1; }\n',
                                 "libtorch_cuda.so").read_bytes(),
        })
    return _LIBS


def _matrix_copy(tmp_path: Path) -> Path:
    from glmcompat.matrix.store import default_matrix_dir

    from tests.ops import test_refresh as tr

    d = tmp_path / "matrices"
    shutil.copytree(default_matrix_dir(), d)
    tr.trim(d, "sglang-kernel", {"0.4.9", "0.4.10"})
    tr.trim(d, "torchaudio", {"2.11.1"})
    return d


def test_matrix_refresh_json(capsys: pytest.CaptureFixture[str], refresh_index: Any, tmp_path: Path) -> None:
    d = _matrix_copy(tmp_path)
    base = ["matrix", "refresh", "--matrix", str(d), "--package", "sglang-kernel", "--package", "torchaudio"]
    rc, out, err = call(capsys, *base, "--dry-run", "--json")
    assert rc == 0, err
    assert validate("matrix-refresh", out)["lacking"]
    rc, out, err = call(capsys, *base, "--json", "-q")
    assert rc == 0, err
    doc = validate("matrix-refresh", out)
    assert doc["rows_written"] > 0 and {r["status"] for r in doc["releases"]} <= {"complete", "partial", "nothing"}


def test_matrix_audit_json(capsys: pytest.CaptureFixture[str], refresh_index: Any, tmp_path: Path) -> None:
    from tests.ops.test_refresh import AUDIT_OK

    d = tmp_path / "audit"
    d.mkdir()
    (d / "m.toml").write_text(AUDIT_OK)
    rc, out, err = call(capsys, "matrix", "audit", "--matrix", str(d), "--json")
    assert rc == 0, err
    assert validate("matrix-audit", out)["summary"]["ok"] == 4
    (d / "m.toml").write_text(AUDIT_OK.replace('">=2.11"', '"==2.11.0"'))
    rc, out, err = call(capsys, "matrix", "audit", "--matrix", str(d), "--deep", "--json")
    assert rc == 1, err
    assert validate("matrix-audit", out)["drift"]


# ------------------------------------------------------------------------------------------------
# A changed shape fails
# ------------------------------------------------------------------------------------------------


def test_a_changed_shape_fails_validation(capsys: pytest.CaptureFixture[str]) -> None:
    """The schemas are strict: an added field, a dropped one, a renamed one or a bare list all fail."""
    _, out, _ = call(capsys, "targets", "--json")
    doc = json.loads(out)
    v = Draft202012Validator(schema("targets"))
    assert v.is_valid(doc)
    assert not v.is_valid(doc["targets"])  # the bare list `targets --json` printed before it was versioned
    assert not v.is_valid({**doc, "extra": 1})
    assert not v.is_valid({k: x for k, x in doc.items() if k != "version"})
    assert not v.is_valid({**doc, "version": 2})
    first = dict(doc["targets"][0])
    first["smem"] = first.pop("smem_per_block_optin")
    assert not v.is_valid({**doc, "targets": [first]})
    _, out, _ = call(capsys, "check", str(LOCKS / "unpinned-torch" / "uv.lock"), "--target", "sm120", "--json")
    doc = json.loads(out)
    f = dict(doc["findings"][0])
    f["evidence"] = [[e["kind"], e["source"]] for e in f["evidence"]]
    assert not Draft202012Validator(schema("check")).is_valid({**doc, "findings": [f]})


# ------------------------------------------------------------------------------------------------
# Errors under --json: one versioned document on stdout, the same exit codes
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("words", sorted(JSON_OUTPUTS))
def test_a_usage_error_under_json_is_the_error_document(capsys: pytest.CaptureFixture[str], words: tuple[str, ...]) -> None:
    rc, out, err = call(capsys, *words, "--json", "--no-such-option")
    assert rc == 2
    doc = validate(JSON_OUTPUTS[words], out)
    assert set(doc) == {"version", "error"} and doc["error"]["code"] == 2
    assert "'--no-such-option'" in doc["error"]["message"] and doc["error"]["file"] is None
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    rc, out, err = call(capsys, *words, "--no-such-option")
    assert rc == 2 and out == ""  # without --json: the line on stderr only


def test_a_bad_file_under_json_names_the_file_and_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "requirements.txt"
    bad.write_text("torch==2.9.1\nsgl-kernel==banana!\n")
    rc, out, err = call(capsys, "check", str(bad), "--target", "sm120", "--json")
    assert rc == 2, err
    e = validate("check", out)["error"]
    assert e["code"] == 2 and e["file"] == str(bad) and e["line"] == 2 and "banana" in e["message"]
    assert not e["message"].startswith(str(bad))  # the place is in file/line, not repeated in the message


def test_an_unknown_target_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    for words in (("check", str(LOCKS / "glm5-sglang-0.5.9" / "uv.lock")), ("upgrade",), ("targets",)):
        extra = ["--target", "sm999"] if words[0] != "targets" else []
        rc, out, _ = call(capsys, *words, *extra, "--json", *(["--platform", "sparc"] if words[0] == "targets" else []))
        assert rc == 2
        doc = validate(jsonerrors.schema_name(words) or "", out)
        assert doc["error"]["code"] == 2 and doc["version"] == schema(jsonerrors.schema_name(words) or "")["properties"]["version"]["const"]


@pytest.mark.slow
def test_an_environment_failure_under_json_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = call(capsys, "upgrade", "--target", "sm120", "--json", "--no-cache",
                        "--index-url", "http://127.0.0.1:9/simple")
    assert rc == 3, err
    assert validate("upgrade", out)["error"]["code"] == 3


def test_the_error_form_is_strict() -> None:
    for name in shipped():
        good = {"version": schema(name)["properties"]["version"]["const"],
                "error": {"code": 2, "message": "m", "file": None, "line": None}}
        assert not list(Draft202012Validator(schema(name)).iter_errors(good)), name
        for bad in ({**good, "extra": 1}, {"version": good["version"], "error": {**good["error"], "why": 1}},
                    {"version": good["version"], "error": {"code": 2}}, {"error": good["error"]},
                    {"version": good["version"], "error": {**good["error"], "line": 0}}):
            assert list(Draft202012Validator(schema(name)).iter_errors(bad)), (name, bad)


def test_the_lock_document_is_the_project_lock_result() -> None:
    """``lock --json`` prints the record of the outcome: every field of :class:`ProjectLockResult`, the same values."""
    r = ProjectLockResult("project", "/p/pyproject.toml", ["sm120", "sm90"], "aarch64", {"torch": "2.9.1"},
                          overrides={"flashinfer-python": "0.5.3"}, override_reasons={"flashinfer-python": "why"},
                          written=["pyproject.toml", "uv.lock"], warnings=["w"], verdicts={"sm120": "safe"},
                          diff="--- a\n+++ b\n", problems=["p"], error="Because ...",
                          evidence=[{"kind": "abi-probe", "source": "glmcompat abi x==1 --torch 2.9.1"}])
    doc = r.to_output().to_json()
    assert doc == r.to_json() == {**asdict(r), "version": 1}
    assert ProjectLockResult.from_json(doc) == r
    assert validate("lock", json.dumps(doc)) == doc
