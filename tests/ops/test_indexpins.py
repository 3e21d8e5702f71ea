"""What an installer adds to a requirements file beyond the matrix's rows (glmcompat/ops/indexpins.py): a compiled
package's own METADATA pin of torch, read from the index, decides the torch the set installs and its bytes are
compared with -- gcc-built wheels served on 127.0.0.1, one whose METADATA says ``Requires-Dist: torch ==9.0.0``."""

from __future__ import annotations

import io
import zipfile

import pytest

from glmcompat import api
from glmcompat.decide.rules.implied import resolve_named
from glmcompat.matrix.load import load_facts
from glmcompat.ops.artifacts import PROBE_ENV
from glmcompat.ops.indexpins import installed_view, wanted, with_index_pins
from glmcompat.readers.formats import read_lock
from tests.abifakes import HAVE_GXX, LocalServer, build_fakes
from tests.conftest import run_cli

STABLE = "stableext-1.0-cp310-abi3-manylinux2014_x86_64.whl"


def _repin(data: bytes, old: str, new: str, torch: str) -> bytes:
    """The wheel ``data`` of ``old`` renamed ``new``, its METADATA pinning ``torch==torch`` exactly."""
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            if not info.filename.endswith(".dist-info/METADATA"):
                out.writestr(info.filename.replace(f"{old}/", f"{new}/"), src.read(info))
        out.writestr(f"{new}-1.0.dist-info/METADATA",
                     f"Metadata-Version: 2.1\nName: {new}\nVersion: 1.0\nRequires-Dist: torch =={torch}\n"
                     "Requires-Dist: numpy\n")
    return buf.getvalue()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if not HAVE_GXX:
        pytest.skip("g++ builds the fake wheels")
    files = build_fakes(tmp_path_factory.mktemp("fakes"))
    # stableext needs a symbol only torch 9.1.0 exports: pinned to 9.0.0 by its METADATA it cannot load, to 9.1.0 it can
    files["oldpin-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = _repin(files[STABLE], "stableext", "oldpin", "9.0.0")
    files["newpin-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = _repin(files[STABLE], "stableext", "newpin", "9.1.0")
    with LocalServer(files) as server:
        yield server


def test_an_index_pin_is_followed_like_a_rows():
    facts = load_facts()
    implied, left = resolve_named({"oldpin": "1.0"}, {}, facts, {"oldpin==1.0": ["torch==9.0.0"]})
    assert implied["torch"][0] == "9.0.0" and "oldpin 1.0 pins torch==9.0.0 exactly" == implied["torch"][1]
    assert "METADATA" in implied["torch"][2][0][1]
    # what the file asks of torch must admit the pin (else the installer fails and nothing installs)
    implied, left = resolve_named({"oldpin": "1.0"}, {"torch": ">=9.1"}, facts, {"oldpin==1.0": ["torch==9.0.0"]})
    assert "torch" not in implied and left == {"torch": ">=9.1"}
    assert resolve_named({"oldpin": "1.0"}, {}, facts)[0] == {}  # without the index's pins: nothing is implied


@pytest.mark.parametrize(("pkg", "breaks"), [("oldpin", True), ("newpin", False)])
def test_a_requirements_file_without_torch_is_judged_with_the_torch_its_package_pins(served, tmp_path, monkeypatch,
                                                                                     pkg, breaks):
    monkeypatch.delenv(PROBE_ENV, raising=False)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "requirements.txt"
    p.write_text(f"--index-url {served.base}\n{pkg}==1.0\n")
    facts = load_facts()
    lock = read_lock(p)
    assert wanted(lock, facts) and "torch" not in lock.sets[0].packages
    pinned = with_index_pins(lock, facts)
    torch = "9.0.0" if pkg == "oldpin" else "9.1.0"
    assert pinned.meta["index_pins"] == {f"{pkg}==1.0": [f"torch=={torch}"]}
    assert installed_view(pinned, facts).sets[0].packages["torch"] == torch
    result = api.check(p, "sm90", allow_unknown=True, platforms=["x86_64"])
    abi = [f for v in result.verdicts for f in v.findings if f.rule == "abi" and f.severity == "error"]
    assert bool(abi) is breaks, [f.message for v in result.verdicts for f in v.findings]
    if breaks:
        assert "torch 9.0.0" in abi[0].message and "torch_new_stable_ivalue" in abi[0].message
    r = run_cli("check", str(p), "--target", "sm90", "--allow-unknown", "--platform", "x86_64",
                env={PROBE_ENV: "", "GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == (1 if breaks else 0), r.stdout + r.stderr
    assert f"{pkg} 1.0 pins torch=={torch} exactly" in r.stdout + r.stderr or not breaks


def test_a_package_whose_metadata_contradicts_the_file_s_torch_makes_it_uninstallable(served, tmp_path, monkeypatch):
    """The file pins torch 9.1.0 and oldpin 1.0, whose METADATA pins torch==9.0.0: pip's resolver stops ("conflicting
    dependencies"), so nothing installs -- an error, read from the index like the pins of a file without torch
    (torchtext 0.16.0 pins torch==2.1.0: next to torch==2.1.2 nothing installs). newpin (torch==9.1.0) agrees."""
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(PROBE_ENV, raising=False)
    facts = load_facts()
    p = tmp_path / "requirements.txt"
    for pkg, code in (("oldpin", 1), ("newpin", 0)):
        p.write_text(f"--index-url {served.base}\ntorch==9.1.0\n{pkg}==1.0\n")
        lock = read_lock(p)
        assert {w[:2] for w in wanted(lock, facts)} == {(pkg, "1.0")}
        torch = "9.0.0" if pkg == "oldpin" else "9.1.0"
        assert with_index_pins(lock, facts).meta["index_pins"] == {f"{pkg}==1.0": [f"torch=={torch}"]}
        result = api.check(p, "sm90", allow_unknown=True, platforms=["x86_64"])
        req = [f for v in result.verdicts for f in v.findings if f.rule == "requires" and f.severity == "error"]
        assert len(req) == code, [f.message for v in result.verdicts for f in v.findings]
        if req:
            assert "oldpin 1.0 pins torch==9.0.0 exactly" in req[0].message and "torch 9.1.0" in req[0].message


def test_the_answer_is_stored_and_nothing_is_read_where_reading_is_off(served, tmp_path, monkeypatch):
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    facts = load_facts()
    p = tmp_path / "requirements.txt"
    p.write_text(f"--index-url {served.base}\noldpin==1.0\n")
    monkeypatch.delenv(PROBE_ENV, raising=False)
    lock = read_lock(p)
    first = with_index_pins(lock, facts).meta["index_pins"]
    monkeypatch.setattr("glmcompat.ops.indexpins.read_pins", lambda *a, **k: pytest.fail("read again"))
    assert with_index_pins(lock, facts).meta["index_pins"] == first  # stored: not read again
    p.write_text(f"--index-url {served.base}\ntorch==9.1.0\n")  # torch alone: nothing to read
    assert wanted(read_lock(p), facts) == []
    p.write_text(f"--index-url {served.base}\noldpin==1.0\n")
    monkeypatch.setenv(PROBE_ENV, "1")
    lock = read_lock(p)
    assert with_index_pins(lock, facts) is lock
