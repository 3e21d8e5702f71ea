"""A refined cause names its family (issue 38, one vocabulary): a [[signature]] row's ``family`` is the more general cause
it is always a case of (torch-arch-unsupported is a no-kernel-image), and explain's text and JSON name it beside the id.

The loader refuses a family that is no signature's id, the signature itself, a cycle, two families for one id, or a
family without its ``family_why``, each in one line naming the file and the value. Every refined id with a family is
read as itself from its raise-site tables (tests/fixtures/raise_sites/) and explain names the family there; a real log
(tests/fixtures/explain/) read as torch-arch-unsupported says "(a no-kernel-image)" in its text and "family" in JSON."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from glmcompat.cli import main
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.schema import _check_families, load_matrix
from glmcompat.model.causes import CAUSE_OF, cause_name
from glmcompat.model.errors import MatrixError
from tests.conftest import toml_file
from tests.decide.explaining import RAISE_SITES, each_row, explain, message_id, read_as_tabled, row_id, table

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "glmcompat" / "matrix" / "data"
LOGS = ROOT / "tests" / "fixtures" / "explain"
SIGS = load_facts().rows("signature")
FAMILY = {s.id: s.family for s in SIGS if s.family}
# the families declared (refined -> family); each row's family_why says why the is-a holds for every log it reads
DECLARED = {
    "torch-arch-unsupported": "no-kernel-image",
    "cudart-missing": "cuda-lib-missing",
    "nvrtc-missing": "cuda-lib-missing",
    "vllm-undefined-symbol": "undefined-symbol",
    "build-isolation-no-torch": "source-build-failed",
    "conda-cuda-too-old": "conda-unsatisfiable",
    "conda-glibc-too-old": "conda-unsatisfiable",
    "nvcc-missing": "cuda-toolkit-not-found",  # fix-x: torch's _join_cuda_home raises it for a build and a JIT load alike
}


def test_the_declared_families_are_the_data() -> None:
    assert FAMILY == DECLARED
    assert all(s.family_why for s in SIGS if s.family)


def test_a_family_is_in_the_same_cause_area() -> None:
    """The family is an id with its own signature and raise-site messages, and where the check reports both ids (CAUSE_OF)
    it reports them as one rule: a case of a cause is the same break."""
    ids = {s.id for s in SIGS}
    expected = {str(m["expect"]) for f in RAISE_SITES.glob("*.toml")
                for m in toml_file(f).get("message", [])}
    for sid, fam in FAMILY.items():
        assert fam in ids and fam in expected, (sid, fam)
        if sid in CAUSE_OF and fam in CAUSE_OF:
            assert CAUSE_OF[sid] == CAUSE_OF[fam], (sid, fam)


def _tabled(sid: str) -> list[dict[str, object]]:
    return [m for f in sorted(RAISE_SITES.glob("*.toml"))
            for m in toml_file(f).get("message", []) if m["expect"] == sid]


@pytest.mark.parametrize("sid", sorted(DECLARED))
def test_explain_names_the_family_where_it_reads_the_refined_id(sid, tmp_path, capsys) -> None:
    messages = _tabled(sid)
    assert messages, f"no raise-site message is read as {sid}"
    for m in messages[:3]:
        code, out = explain(str(m["text"]), tmp_path, capsys)
        assert code == 1 and re.search(rf"^line \d+: {re.escape(cause_name(sid, FAMILY[sid]))}", out, re.M), out


def test_the_formatter_words_the_family() -> None:
    assert cause_name("torch-arch-unsupported", "no-kernel-image") == "torch-arch-unsupported (a no-kernel-image)"
    assert cause_name("vllm-undefined-symbol", "undefined-symbol") == "vllm-undefined-symbol (an undefined-symbol)"
    assert cause_name("no-kernel-image", "") == "no-kernel-image"


def _arch_case() -> dict[str, object]:
    cases = [c for f in sorted(LOGS.glob("*.toml")) for c in toml_file(f).get("case", [])]
    return next(c for c in cases if c.get("id") == "torch-arch-unsupported" and "known_miss" not in c)


def test_a_real_log_read_as_torch_arch_unsupported_names_its_family(capsys) -> None:
    log = str(LOGS / "logs" / str(_arch_case()["log"]))
    assert main(["explain", "--color", "never", log]) == 1
    assert re.search(r"^line \d+: torch-arch-unsupported \(a no-kernel-image\)", capsys.readouterr().out, re.M)
    assert main(["explain", "--json", log]) == 1
    hits = json.loads(capsys.readouterr().out)["signatures"]
    assert {h["family"] for h in hits if h["id"] == "torch-arch-unsupported"} == {"no-kernel-image"}
    assert all(h["family"] is None for h in hits if h["id"] not in FAMILY)


MESSAGES = table("vllmabi-signatures.toml")


def test_vllm_abi_messages_are_read_as_tabled(tmp_path, capsys) -> None:
    assert {m["expect"] for m in MESSAGES} == {"vllm-undefined-symbol", "nccl-undefined-symbol", "driver-too-old", ""}
    ids = [message_id(m) for m in MESSAGES]
    each_row([(row_id(m) if ids.count(message_id(m)) > 1 else message_id(m), m) for m in MESSAGES],
             lambda m: read_as_tabled(m, tmp_path, capsys))


# --- the loader refuses bad families: one line, the file and the value --------------------------------------------

KERNEL_ROW = 'id = "no-kernel-image"\n'
BAD = [
    # (file, old, new, the message's words, the text of the line it points at)
    ("signatures.toml", 'family = "no-kernel-image"', 'family = "no-kernel-imag"',
     "signature 'torch-arch-unsupported' names unknown family 'no-kernel-imag'", 'family = "no-kernel-imag"'),
    ("signatures.toml", 'family = "no-kernel-image"', 'family = "torch-arch-unsupported"',
     "is the signature itself", "[[signature]]"),
    ("signatures.toml", 'id = "cuda-lib-missing"\n', 'id = "cuda-lib-missing"\nfamily = "cudart-missing"\nfamily_why = "x"\n',
     "family cycle cuda-lib-missing -> cudart-missing -> cuda-lib-missing", 'family = "cudart-missing"'),
    ("vllm-signatures.toml", 'family = "cuda-lib-missing"\n', 'family = "cuda-lib-missing"\nfamily_wy = "x"\n',
     "unknown key 'signature.", 'family_wy = "x"'),
    ("vllm-signatures.toml", KERNEL_ROW, 'id = "no-kernel-image"\nfamily_why = "x"\n', "family and family_why go together",
     "[[signature]]"),
    ("vllm-signatures.toml", KERNEL_ROW, 'id = "no-kernel-image"\nfamily = "cudart-missing"\n', "family and family_why go together",
     "[[signature]]"),
]


@pytest.mark.parametrize("file,old,new,words,at", BAD, ids=[b[3][:40] for b in BAD])
def test_the_loader_refuses_a_bad_family(tmp_path, file, old, new, words, at) -> None:
    d = tmp_path / "data"
    shutil.copytree(DATA, d)
    text = (d / file).read_text(encoding="utf-8")
    assert old in text
    (d / file).write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(MatrixError) as e:
        load_matrix([d])
    msg = str(e.value)
    assert "\n" not in msg and words in msg, msg
    where = re.match(r"^(.+?):(\d+): ", msg)
    assert where and Path(where.group(1)).name == file, msg
    assert at in (d / file).read_text(encoding="utf-8").splitlines()[int(where.group(2)) - 1], msg


def test_one_family_per_id() -> None:
    """Rows sharing an id (the loader refuses that first today) must agree on its family: the check stands alone."""
    sigs = {s.id: s for s in SIGS}
    a, b = sigs["torch-arch-unsupported"], sigs["cudart-missing"]
    rows = [(a, "a.toml", "", 0), (type(a)(**{**{k: getattr(b, k) for k in b.__dataclass_fields__}, "id": a.id}),
                                   "b.toml", "", 1)]
    said: list[str] = []

    def fail(msg: str, table: str, item: object, key: str | None = None) -> None:
        said.append(msg)
        raise MatrixError(msg)

    with pytest.raises(MatrixError):
        _check_families(rows, {a.id, b.id, "no-kernel-image", "cuda-lib-missing"}, fail)
    assert said == ["signature 'torch-arch-unsupported' has two families: 'no-kernel-image' and 'cuda-lib-missing'"]
