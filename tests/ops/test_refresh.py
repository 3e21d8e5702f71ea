"""``matrix refresh`` / ``matrix audit`` offline: recorded index pages and METADATA, fake wheels.

tests/fixtures/refresh/ holds project pages (trimmed, every host replaced by index.invalid) and the
METADATA of the releases under test, recorded from the real index by
scripts/record_refresh_fixtures.py. The wheels are built here (g++): each carries the recorded
METADATA and small ELF modules (torch-shaped imports and exports, a fatbin section), and the page
entries are patched with their sizes and sha256. Every test works on a copy of glmcompat/matrix/data/ in tmp_path.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from packaging.specifiers import SpecifierSet

from glmcompat.edges.cache import Cache, NoCache
from glmcompat.edges.index import ACCEPT_JSON, IndexClient
from glmcompat.matrix.rows import Kernel
from glmcompat.matrix.schema import TABLES, Matrix, load_matrix
from glmcompat.matrix.store import default_matrix_dir
from glmcompat.ops import refresh as rf
from packaging.version import Version

from tests.matrixtrim import trim
from tests.abifakes import C10_OLD, CUDART, EXT, HAVE_GXX, fatbin_section, gxx, serve_range

FIX = Path(__file__).parents[1] / "fixtures" / "refresh"
FLOORS = Path(__file__).parents[1] / "fixtures" / "floors"
BASE = "https://index.invalid/simple"
KERNEL_SO = "sgl_kernel/sm100/common_ops.abi3.so"
FAKE_SASS = ["sm_80", "sm_90a", "sm_120a"]

pytestmark = pytest.mark.skipif(not HAVE_GXX, reason="needs g++ to build the fake wheels")


# ------------------------------------------------------------------------------------------------
# Fake wheels and the index that serves them
# ------------------------------------------------------------------------------------------------


def _zip(members: dict[str, bytes], metadata: str, dist: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            zf.writestr(n, d)
        zf.writestr(f"{dist}.dist-info/METADATA", metadata)
    return buf.getvalue()


def _metadata(filename: str) -> str:
    p = FIX / "metadata" / f"{filename}.METADATA"
    if p.exists():
        return p.read_text()
    name, version = filename.split("-")[:2]
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    tmp = tmp_path_factory.mktemp("libs")
    c10 = gxx(tmp, "c10", C10_OLD, "libc10.so")
    cudart = gxx(tmp, "cudart", CUDART, "libcudart.so.13")  # CUDA 13, as torch 2.14.1 (the pin of the fake kernels)
    (tmp / "link").mkdir()
    shutil.copy(c10, tmp / "link" / "libc10.so")
    shutil.copy(cudart, tmp / "link" / "libcudart.so")
    fat = "__attribute__((section(\".nv_fatbin\"), used)) const unsigned char fb[] = {" + \
        ",".join(str(b) for b in fatbin_section()) + "};\n"
    link = [f"-L{tmp / 'link'}", "-lc10", "-lcudart"]
    return {
        "c10": c10.read_bytes(),
        "kernel": gxx(tmp, "kernel", EXT + fat, "common_ops.abi3.so", *link).read_bytes(),  # needs torch, has SASS
        "ext": gxx(tmp, "ext", EXT, "_C.abi3.so", *link).read_bytes(),  # needs torch, no GPU code
        "torch_cuda": gxx(tmp, "tcuda", fat + 'extern "C" int torch_cuda_marker(void) { return 1; }\n',
                          "libtorch_cuda.so").read_bytes(),
    }


def _engine_excerpt(version: str) -> str:
    """The lines of sglang's engine.py that assert its floors, recorded from the wheel (tests/fixtures/floors,
    scripts/record_floor_fixtures.py)."""
    return next(c["text"] for c in json.loads((FLOORS / "engine.json").read_text()) if c["version"] == version)


def build_wheels(libs: dict[str, bytes], *, torch_metadata: str | None = None) -> dict[str, bytes]:
    """{filename: bytes} for every wheel the fixture pages name that a test reads."""
    out: dict[str, bytes] = {}
    for v in ("2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"):
        fn = f"torch-{v}-cp311-cp311-manylinux_2_28_x86_64.whl"
        md = torch_metadata if (torch_metadata is not None and v == "2.15.0") else _metadata(fn)
        out[fn] = _zip({"torch/__init__.py": b"", "torch/lib/libc10.so": libs["c10"],
                        "torch/lib/libtorch_cuda.so": libs["torch_cuda"]}, md, f"torch-{v}")
    for v in ("0.4.9", "0.4.10"):
        fn = f"sglang_kernel-{v}-cp310-abi3-manylinux2014_x86_64.whl"
        out[fn] = _zip({"sgl_kernel/__init__.py": b"", KERNEL_SO: libs["kernel"]}, _metadata(fn), f"sglang_kernel-{v}")
    fn = "torchao-0.18.0-cp310-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
    out[fn] = _zip({"torchao/__init__.py": b"", "torchao/_C.abi3.so": libs["ext"]}, _metadata(fn), "torchao-0.18.0")
    fn = "torchaudio-2.11.1-py3-none-manylinux_2_28_x86_64.whl"
    out[fn] = _zip({"torchaudio/lib/libtorchaudio.so": libs["kernel"]}, _metadata(fn), "torchaudio-2.11.1")
    fn = "flashinfer_python-0.7.4-py3-none-any.whl"
    out[fn] = _zip({"flashinfer/__init__.py": b"", "flashinfer/data/x.cubin": b"\x7fELF-not-a-module"},
                   _metadata(fn), "flashinfer_python-0.7.4")
    fn = "sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl"
    out[fn] = _zip({"sglang/__init__.py": b"", rf.ENGINE_FLOORS["sglang"]: _engine_excerpt("0.5.23").encode()},
                   _metadata(fn), "sglang-0.5.23")
    return out


class FakeIndex:
    """An httpx transport: the recorded pages (patched with the fake wheels' sizes and hashes) and the
    fake wheels, with byte ranges. ``broken[filename]``: "503" (the server fails), "garbage" (not a zip);
    ``yanked``: filenames marked yanked on the page; ``pep658``: filenames whose METADATA is served beside them."""

    def __init__(self, wheels: dict[str, bytes]) -> None:
        self.wheels = wheels
        self.broken: dict[str, str] = {}
        self.yanked: set[str] = set()
        self.pep658: set[str] = set()
        self.calls: list[str] = []
        self.offline = False

    def page(self, name: str) -> dict[str, Any] | None:
        p = FIX / "pages" / f"{name}.json"
        if not p.exists():
            return None
        data = json.loads(p.read_text())
        for f in data["files"]:
            body = self.body(f["filename"])
            if body is not None:
                f["size"] = len(body)
                f["hashes"] = {"sha256": hashlib.sha256(body).hexdigest()}
            if f["filename"] in self.yanked:
                f["yanked"] = True
            if f["filename"] in self.pep658:
                f["core-metadata"] = True
        return data

    def body(self, filename: str) -> bytes | None:
        if self.broken.get(filename) == "garbage":
            return b"this is not a zip archive, just bytes " * 100
        return self.wheels.get(filename)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.calls.append(url)
        if self.offline:
            raise httpx.ConnectError("offline", request=request)
        if url.startswith(BASE + "/"):
            page = self.page(url[len(BASE) + 1:].strip("/"))
            if page is None:
                return httpx.Response(404)
            return httpx.Response(200, content=json.dumps(page).encode(), headers={"content-type": ACCEPT_JSON})
        fn = url.rsplit("/", 1)[-1]
        if fn.endswith(".metadata"):
            whl = fn.removesuffix(".metadata")
            if whl in self.pep658:
                return httpx.Response(200, content=_metadata(whl).encode())
            return httpx.Response(404)
        if self.broken.get(fn) == "503":
            return httpx.Response(503)
        body = self.body(fn)
        if body is None:
            return httpx.Response(404)
        status, data, headers = serve_range(body, request.headers.get("range"))
        return httpx.Response(status, content=data, headers=headers)

    def index(self, cache: Cache) -> IndexClient:
        return IndexClient(BASE, client=httpx.Client(transport=httpx.MockTransport(self)), cache=cache, backoff=0.0)

    def wheel_calls(self, needle: str) -> list[str]:
        return [c for c in self.calls if needle in c and not c.startswith(BASE)]


# ------------------------------------------------------------------------------------------------
# A copy of the matrix with some releases taken out
# ------------------------------------------------------------------------------------------------


_VALID: set[tuple[tuple[str, str], ...]] = set()  # the trimmed copies validated in this process, by content


@pytest.fixture
def matrix(tmp_path: Path) -> Path:
    d = tmp_path / "matrices"
    shutil.copytree(default_matrix_dir(), d)
    trim(d, "sglang-kernel", {"0.4.9", "0.4.10"})
    texts = tuple(snapshot(d).items())
    if texts not in _VALID:  # the trimmed copy is a valid matrix (the same bytes every test: validated once)
        load_matrix([d])
        _VALID.add(texts)
    return d


def snapshot(d: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(d.glob("*.toml"))}


def added_lines(before: dict[str, str], after: dict[str, str]) -> dict[str, list[str]]:
    """{file: added lines}; fails if any line was removed or changed."""
    out = {}
    for name in sorted(set(before) | set(after)):
        diff = list(difflib.unified_diff(before.get(name, "").splitlines(), after.get(name, "").splitlines(),
                                         lineterm="", n=0))
        body = [d for d in diff if not d.startswith(("---", "+++", "@@"))]
        assert all(d.startswith("+") for d in body), (name, [d for d in body if not d.startswith("+")])
        if body:
            out[name] = [d[1:] for d in body]
    return out


def new_rows(before: Path | dict[str, str], after: Path) -> list[tuple[str, dict[str, Any]]]:
    """(table, row) of the rows in ``after`` that ``before`` does not hold."""
    import tomllib

    old = before if isinstance(before, dict) else snapshot(before)
    out = []
    for p in sorted(after.glob("*.toml")):
        text = p.read_text()
        if old.get(p.name) == text:
            continue  # the same text holds the same rows: none new (and the matrix takes seconds to parse whole)
        a = tomllib.loads(text)
        b = tomllib.loads(old.get(p.name, "schema = 1"))
        for table, rows in a.items():
            if isinstance(rows, list):
                out += [(table, r) for r in rows if r not in b.get(table, [])]
    return out


def run(fake: FakeIndex, d: Path, cache: Cache, packages: list[str], **kw: Any) -> rf.RefreshReport:
    with fake.index(cache) as index:
        return rf.refresh(index=index, cache=cache, matrix=d, packages=packages, jobs=kw.pop("jobs", 2),
                          progress=False, **kw)


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "cache")


@pytest.fixture
def fake(libs: dict[str, bytes]) -> FakeIndex:
    return FakeIndex(build_wheels(libs))


# ------------------------------------------------------------------------------------------------
# Listing
# ------------------------------------------------------------------------------------------------


def test_tracked_set_comes_from_the_tables() -> None:
    m = load_matrix()
    tracked = rf.tracked_packages(m)
    assert tracked["torch"] == "torch" and tracked["torchvision"] == "family" and tracked["sgl-kernel"] == "kernel"
    assert tracked["flashinfer-python"] == "jit" and tracked["sglang"] == "release"
    assert tracked["transformers"] == "model" and tracked["vllm"] == "kernel" and tracked["xformers"] == "kernel"
    # a package the tables track but the default list does not name is tracked too
    deep_gemm = Kernel(evidence="metadata", source="s", package="deep-gemm", versions=("1.0",), torch="2.9.1")
    tables = {t: getattr(m, t) for t in TABLES}
    assert rf.tracked_packages(Matrix(**{**tables, "kernel": (*m.kernel, deep_gemm)}))["deep-gemm"] == "kernel"


def test_dry_run_lists_exactly_the_missing_releases(fake: FakeIndex, matrix: Path, cache: Cache) -> None:
    before = snapshot(matrix)
    report = run(fake, matrix, cache, ["sglang-kernel"], dry_run=True)
    assert [(c.package, c.version) for c in report.lacking] == [("sglang-kernel", "0.4.9"), ("sglang-kernel", "0.4.10")]
    assert report.outcomes == [] and snapshot(matrix) == before
    assert not fake.wheel_calls(".whl")  # a dry run reads the pages only
    js = report.to_json()
    assert js["version"] == 1 and js["kind"] == "matrix-refresh" and js["dry_run"] is True
    assert [x["version"] for x in js["lacking"]] == ["0.4.9", "0.4.10"]
    assert js["lacking"][1]["uploaded"] == "2026-10-15T23:05:58Z" and js["lacking"][1]["table"] == "kernel"


@pytest.mark.slow
def test_since_and_yanked(fake: FakeIndex, matrix: Path, cache: Cache) -> None:
    from datetime import date

    report = run(fake, matrix, cache, ["sglang-kernel"], dry_run=True, since=date(2026, 10, 10))
    assert [c.version for c in report.lacking] == ["0.4.10"]
    fake.yanked.add("sglang_kernel-0.4.9-cp310-abi3-manylinux2014_x86_64.whl")
    report = run(fake, matrix, Cache(cache.root / "2"), ["sglang-kernel"], dry_run=True)
    assert [c.version for c in report.lacking] == ["0.4.10"]
    assert report.listings[0].skipped == [("0.4.9", "yanked (every file)")]


# ------------------------------------------------------------------------------------------------
# Refresh
# ------------------------------------------------------------------------------------------------


def test_refresh_adds_exactly_the_missing_rows_and_a_second_run_changes_nothing(
        fake: FakeIndex, matrix: Path, cache: Cache) -> None:
    before = snapshot(matrix)
    report = run(fake, matrix, cache, ["sglang-kernel"])
    assert [o.status for o in report.outcomes] == ["complete", "complete"]
    added = added_lines(before, snapshot(matrix))
    # each row goes to the file that already holds rows of its table for the package (kernel rows: kernels.toml)
    assert "[[kernel]]" in added["kernels.toml"] and all("[[kernel]]" not in v for k, v in added.items()
                                                         if k != "kernels.toml")
    rows = new_rows(before, matrix)
    kernels = [r for t, r in rows if t == "kernel"]
    assert [k["versions"] for k in kernels] == [["0.4.9"], ["0.4.10"]]
    assert all(k["torch"] == "2.14.1" and k["sass"] == FAKE_SASS and k["ptx"] == [] and k["evidence"] == "metadata"
               for k in kernels)
    assert "sglang_kernel-0.4.10-cp310-abi3-manylinux2014_x86_64.whl METADATA: Requires-Dist torch==2.14.1" \
        in kernels[1]["source"]
    # the CUDA runtime: the major its modules link, the minor of the torch it pins (its METADATA pins cuda-toolkit)
    assert all(k["cuda"] == "13.0" for k in kernels)
    assert "DT_NEEDED libcudart.so.13" in kernels[1]["source"] and "torch-2.14.1-cp311" in kernels[1]["source"]
    assert "glmcompat arch sglang-kernel==0.4.10" in kernels[1]["source"]
    abis = [r for t, r in rows if t == "abi_probe"]
    assert [(a["version"], a["torch"], a["compatible"], a["missing"]) for a in abis] == \
        [("0.4.9", "2.14.1", True, 0), ("0.4.10", "2.14.1", True, 0)]
    assert abis[0]["source"].startswith("glmcompat abi sglang-kernel==0.4.9 --torch 2.14.1: ")
    arch = [r for t, r in rows if t == "arch_probe"]
    assert [(a["version"], a["sass"]) for a in arch] == [("0.4.9", FAKE_SASS), ("0.4.10", FAKE_SASS)]
    assert len(rows) == 6
    m = load_matrix([matrix])
    assert m.built_for("sglang-kernel", "0.4.10") == "2.14.1"
    # a second run: nothing lacking, nothing written, the files byte for byte the same
    after = snapshot(matrix)
    again = run(fake, matrix, cache, ["sglang-kernel"])
    assert again.lacking == [] and again.written == {} and snapshot(matrix) == after


@pytest.mark.slow
def test_journal_lets_a_run_continue_without_refetching(fake: FakeIndex, matrix: Path, cache: Cache,
                                                         tmp_path: Path) -> None:
    run(fake, matrix, cache, ["sglang-kernel"])
    first = snapshot(matrix)
    # the same releases missing again (another copy), same cache: the journal answers, no wheel is read
    other = tmp_path / "other"
    shutil.copytree(default_matrix_dir(), other)
    trim(other, "sglang-kernel", {"0.4.9", "0.4.10"})
    fake.calls.clear()
    report = run(fake, other, cache, ["sglang-kernel"])
    assert all(o.journaled for o in report.outcomes)
    assert not fake.wheel_calls(".whl")
    assert snapshot(other)["kernels.toml"] == first["kernels.toml"]


@pytest.mark.slow
def test_interrupted_run_writes_nothing_half_and_continues(fake: FakeIndex, matrix: Path, cache: Cache) -> None:
    """The index fails in the middle of 0.4.10 (its METADATA came through, its wheel does not): 0.4.9 is
    written, nothing of 0.4.10; the next run adds 0.4.10 and leaves 0.4.9 alone."""
    w10 = "sglang_kernel-0.4.10-cp310-abi3-manylinux2014_x86_64.whl"
    fake.pep658.add(w10)
    fake.broken[w10] = "503"
    before = snapshot(matrix)
    report = run(fake, matrix, cache, ["sglang-kernel"])
    by = {o.version: o for o in report.outcomes}
    assert by["0.4.9"].status == "complete" and by["0.4.10"].status == "failed"
    assert "HTTP 503" in (by["0.4.10"].failed or "")
    rows = new_rows(before, matrix)
    assert {r.get("version") or r["versions"][0] for _, r in rows} == {"0.4.9"}
    assert len(rows) == 3
    mid = snapshot(matrix)
    del fake.broken[w10]
    report = run(fake, matrix, cache, ["sglang-kernel"])
    assert [(o.version, o.status) for o in report.outcomes] == [("0.4.10", "complete")]
    added_lines(mid, snapshot(matrix))
    assert {r.get("version") or r["versions"][0] for _, r in new_rows(mid, matrix)} == {"0.4.10"}


@pytest.mark.slow
def test_wheel_not_a_zip_records_nothing_for_that_release(fake: FakeIndex, matrix: Path, cache: Cache) -> None:
    fake.broken["sglang_kernel-0.4.9-cp310-abi3-manylinux2014_x86_64.whl"] = "garbage"
    before = snapshot(matrix)
    report = run(fake, matrix, cache, ["sglang-kernel"])
    by = {o.version: o for o in report.outcomes}
    assert by["0.4.9"].status == "nothing" and by["0.4.9"].rows == []
    assert any("not a zip" in u for u in by["0.4.9"].unproved)
    assert by["0.4.10"].status == "complete"
    assert {r.get("version") or r["versions"][0] for _, r in new_rows(before, matrix)} == {"0.4.10"}


@pytest.mark.slow
def test_no_torch_pin_records_probes_only_and_a_missing_wheel_nothing(fake: FakeIndex, tmp_path: Path,
                                                                      cache: Cache) -> None:
    """torchao 0.18.0's METADATA names no torch: ABI probes against the torch releases uploaded in the
    three months before it, no [[kernel]] row. torchao 0.17.0's wheel is gone from the index: nothing."""
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    trim(d, "torchao", {"0.17.0", "0.18.0"})
    before = snapshot(d)
    report = run(fake, d, cache, ["torchao"])
    by = {o.version: o for o in report.outcomes}
    assert by["0.17.0"].status == "nothing" and any("404" in u for u in by["0.17.0"].unproved)
    o = by["0.18.0"]
    assert o.status == "partial"
    assert any("no torch requirement" in u and "no [[kernel]] row" in u for u in o.unproved)
    assert "no GPU code in its main modules" in o.proved
    rows = new_rows(before, d)
    assert [t for t, _ in rows] == ["abi_probe"] * 3
    assert [r["torch"] for _, r in rows] == ["2.12.0", "2.12.1", "2.13.0"]  # uploaded 2026-05-13 .. 07-08
    added_lines(before, snapshot(d))
    again = snapshot(d)
    report = run(fake, d, cache, ["torchao"])
    assert snapshot(d) == again and [o.status for o in report.outcomes] == ["nothing", "partial"]


@pytest.mark.slow
def test_torch_release_with_and_without_a_cuda_pin(libs: dict[str, bytes], tmp_path: Path, cache: Cache) -> None:
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    trim(d, "torch", {"2.15.0"})
    md = _metadata("torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl")
    stripped = "\n".join(line for line in md.splitlines() if "cuda" not in line.lower()) + "\n"
    before = snapshot(d)
    bare = FakeIndex(build_wheels(libs, torch_metadata=stripped))
    report = run(bare, d, cache, ["torch"])
    o = report.outcomes[0]
    assert (o.version, o.status) == ("2.15.0", "nothing")
    assert any("no CUDA variant label" in u and "no [[torch]] row" in u for u in o.unproved)
    assert snapshot(d) == before
    full = FakeIndex(build_wheels(libs))
    report = run(full, d, Cache(tmp_path / "c2"), ["torch"])
    assert report.outcomes[0].status == "complete"
    added = added_lines(before, snapshot(d))
    assert list(added) == ["torch.toml"]
    (table, row), = new_rows(before, d)
    assert table == "torch" and row["versions"] == ["2.15.0"] and row["cuda"] == "13.2" and row["sass"] == FAKE_SASS
    assert "cuda-toolkit" in row["source"] and row["source"].startswith("glmcompat arch torch==2.15.0")
    assert load_matrix([d]).view().torch_build("2.15.0") is not None


@pytest.mark.slow
def test_family_jit_and_release_rows(fake: FakeIndex, tmp_path: Path, cache: Cache) -> None:
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    trim(d, "torchaudio", {"2.11.1"})
    trim(d, "flashinfer-python", {"0.7.4"})
    trim(d, "sglang", {"0.5.23"})
    original = next(r for r in load_matrix().release if r.version == "0.5.23")
    before = snapshot(d)
    report = run(fake, d, cache, ["torchaudio", "flashinfer-python", "sglang"])
    assert sorted((o.package, o.version, o.status) for o in report.outcomes) == [
        ("flashinfer-python", "0.7.4", "complete"), ("sglang", "0.5.23", "complete"),
        ("torchaudio", "2.11.1", "complete")]
    added_lines(before, snapshot(d))
    rows = new_rows(before, d)
    fam = [r for t, r in rows if t == "family"]
    assert len(fam) == 1 and fam[0]["pairs"] == {"2.11.1": ">=2.11"}
    assert fam[0]["failure"] == next(f.failure for f in load_matrix().family if f.package == "torchaudio")
    # its range torch>=2.11 is probed at the oldest admitted release on the page and the newest of each series
    assert sorted((r["torch"] for t, r in rows if t == "abi_probe" and r["package"] == "torchaudio"), key=Version) == \
        ["2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"]
    assert fam[0]["cudart"] == {"2.11.1": 13} and "DT_NEEDED libcudart.so.13" in fam[0]["source"]
    assert [r["sass"] for t, r in rows if t == "arch_probe"] == [FAKE_SASS]
    jit = [r for t, r in rows if t == "jit"]
    assert jit == [{"package": "flashinfer-python", "versions": "==0.7.4", "evidence": "metadata",
                    "source": jit[0]["source"]}] and "holds no shared object" in jit[0]["source"]
    rel = [r for t, r in rows if t == "release"]
    assert len(rel) == 1 and set(original.requires) <= set(rel[0]["requires"])
    assert "torchaudio==2.11.0" in rel[0]["requires"]
    m = load_matrix([d])
    assert m.view().family("torchaudio", "2.11.1") is not None and m.view().jit("flashinfer-python", "0.7.4")
    sglang = next(o for o in report.outcomes if o.package == "sglang")  # its floors: read, and already recorded
    assert "floors flashinfer-python>=0.7.2, sglang-kernel>=0.4.9 (sglang/srt/entrypoints/engine.py)" in sglang.proved
    assert not [r for t, r in rows if t == "requires"]


def test_engine_floors_from_the_recorded_engine_source() -> None:
    """The floors sglang's engine asserts, parsed from its recorded engine.py, are those the shipped rows hold."""
    from glmcompat.matrix.load import load_facts

    assert rf.engine_floors(_engine_excerpt("0.5.9")) == [
        ("flashinfer-python", "0.6.3", 'server_args.attention_backend == "flashinfer"', "flashinfer_python"),
        ("sgl-kernel", "0.3.21", "_is_cuda", "sgl-kernel")]
    new = rf.engine_floors(_engine_excerpt("0.5.23"))
    assert [(d, v) for d, v, _, _ in new] == [("flashinfer-python", "0.7.2"), ("sglang-kernel", "0.4.9")]
    assert [rf.floor_note(c) for _, _, c, _ in new] == [" (attention backend flashinfer)", " (on CUDA)"]
    shipped = load_facts().rows("requires")
    for version in ("0.5.9", "0.5.23"):
        for dist, floor, _, _ in rf.engine_floors(_engine_excerpt(version)):
            assert any(r.package == "sglang" and SpecifierSet(r.versions).contains(version)
                       and r.requires == f"{dist}>={floor}" for r in shipped), (version, dist, floor)


@pytest.mark.slow
def test_refresh_records_the_floors_a_new_engine_release_asserts(fake: FakeIndex, tmp_path: Path,
                                                                 cache: Cache) -> None:
    """sglang 0.5.23 without its [[release]] and [[requires]] rows: refresh reads its floors from the engine.py of
    its wheel and writes them with that source; check then refuses flashinfer 0.7.1 with it again."""
    import tomlkit

    from glmcompat.decide.rules import evaluate
    from glmcompat.matrix.load import load_facts

    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    trim(d, "sglang", {"0.5.23"})
    rules = d / "rules.toml"
    doc = tomlkit.parse(rules.read_text())
    doc["requires"] = [r for r in doc["requires"] if not (r["package"] == "sglang"
                                                          and SpecifierSet(str(r["versions"])).contains("0.5.23"))]
    rules.write_text(tomlkit.dumps(doc))
    pins = {"sglang": "0.5.23", "flashinfer-python": "0.7.1", "sglang-kernel": "0.4.9", "torch": "2.14.1"}

    def floors(facts: Any) -> list[str]:
        return sorted((f.rule, *f.packages) for f in evaluate(pins, target="sm90", matrix=facts, allow_unknown=True)
                      if f.severity == "error" and f.rule == "requires")

    assert floors(load_facts([d])) != floors(load_facts())
    before = snapshot(d)
    run(fake, d, cache, ["sglang"])
    rows = [r for t, r in new_rows(before, d) if t == "requires"]
    assert [(r["versions"], r["requires"]) for r in rows] == [("==0.5.23", "flashinfer-python>=0.7.2"),
                                                              ("==0.5.23", "sglang-kernel>=0.4.9")]
    assert rows[0]["source"] == ('sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl: sglang/srt/entrypoints/'
                                 'engine.py assert_pkg_version("flashinfer_python", "0.7.2") (attention backend '
                                 'flashinfer)')
    assert floors(load_facts([d])) == floors(load_facts()) != []


@pytest.mark.slow
def test_contradicting_probe_is_not_written(fake: FakeIndex, matrix: Path, cache: Cache) -> None:
    """A recorded [[abi_probe]] that says otherwise is left as it is, and the refresh says so."""
    from glmcompat.matrix.curate import Addition, add_rows, row_of

    add_rows(sorted(matrix.glob("*.toml")), [Addition(matrix / "kernels.toml", row_of("abi_probe", {
        "package": "sglang-kernel", "version": "0.4.9", "torch": "2.14.1", "compatible": False, "missing": 1,
        "evidence": "abi-probe", "source": "x"}))])
    before = snapshot(matrix)
    report = run(fake, matrix, cache, ["sglang-kernel"])
    o = next(o for o in report.outcomes if o.version == "0.4.9")
    assert any("contradicts the recorded one" in u for u in o.unproved)
    tables = [t for t, r in new_rows(before, matrix) if (r.get("version") or r["versions"][0]) == "0.4.9"]
    assert sorted(tables) == ["arch_probe", "kernel"]


def test_package_keys_are_copied(fake: FakeIndex, matrix: Path) -> None:
    from glmcompat.matrix.curate import plain_row, row_of

    rows = [row_of("kernel", {"package": "torchao", "versions": ["0.9.0"], "torch": "2.6.0", "on_mismatch": "warning",
                              "consequence": "c", "evidence": "metadata", "source": "s"})]
    row, also = rf.with_package_keys(row_of("kernel", {"package": "torchao", "versions": ["0.18.0"], "torch": "2.13.0",
                                                       "evidence": "metadata", "source": "s"}), rows)
    assert list(plain_row(row, also)) == ["package", "versions", "torch", "on_mismatch", "consequence", "evidence",
                                          "source"]
    # a key every row leaves at its default is written as the rows say it, once copied (on_mismatch = "error")
    rows = [row_of("kernel", {"package": "x", "versions": ["1"], "torch": "2.6.0", "evidence": "metadata",
                              "source": "s"})]
    row, also = rf.with_package_keys(row_of("kernel", {"package": "x", "versions": ["2"], "torch": "2.6.0",
                                                       "evidence": "metadata", "source": "s"}), rows)
    assert plain_row(row, also)["on_mismatch"] == "error" and "on_mismatch" not in plain_row(row)


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def cli(fake: FakeIndex, monkeypatch: pytest.MonkeyPatch) -> FakeIndex:
    monkeypatch.setattr(rf, "make_index", lambda url, jobs, cache: fake.index(cache))
    return fake


@pytest.mark.slow
def test_cli_dry_run_json_and_text(cli: FakeIndex, matrix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from glmcompat.cli import main

    args = ["matrix", "refresh", "--matrix", str(matrix), "--package", "sglang-kernel", "--dry-run"]
    assert main([*args, "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert [x["version"] for x in js["lacking"]] == ["0.4.9", "0.4.10"] and js["rows_written"] == 0
    assert main(["matrix", "refresh", "--matrix", str(matrix), "--package", "sglang-kernel", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "sglang-kernel: 2 release(s) lacking from [[kernel]]" in out and "0.4.10" in out
    assert "2 release(s) lacking; dry run" in out


@pytest.mark.slow
def test_cli_refresh_then_nothing(cli: FakeIndex, matrix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from glmcompat.cli import main

    assert main(["matrix", "refresh", "--matrix", str(matrix), "--package", "sglang-kernel"]) == 0
    out = capsys.readouterr().out
    assert "sglang-kernel 0.4.10 [[kernel]]: complete" in out and "wrote 6 row(s)" in out
    assert main(["matrix", "refresh", "--matrix", str(matrix), "--package", "sglang-kernel", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["lacking"] == [] and js["rows_written"] == 0


@pytest.mark.slow
def test_cli_index_failure_exits_3(cli: FakeIndex, matrix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from glmcompat.cli import main

    cli.broken["sglang_kernel-0.4.10-cp310-abi3-manylinux2014_x86_64.whl"] = "503"
    before = snapshot(matrix)
    assert main(["matrix", "refresh", "--matrix", str(matrix), "--package", "sglang-kernel"]) == 3
    err = capsys.readouterr().err
    assert "the index failed for 1 release(s)" in err and len(err.strip().splitlines()) == 1
    assert {r.get("version") or r["versions"][0] for _, r in new_rows(before, matrix)} == {"0.4.9"}
    cli.offline = True
    assert main(["matrix", "refresh", "--matrix", str(matrix), "--dry-run"]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "cannot connect" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("args,needle", [
    (["--since", "2026-13-01"], "invalid --since date"),
    (["--package", "left-pad"], "is not tracked by the matrix"),
    (["--jobs", "0"], "--jobs 0 is out of range"),
    (["--bogus"], "unexpected argument '--bogus'"),
])
@pytest.mark.slow
def test_cli_bad_arguments_exit_2(cli: FakeIndex, matrix: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                  needle: str) -> None:
    from glmcompat.cli import main

    with pytest.raises(SystemExit) if args == ["--bogus"] else _nothing():
        rc = main(["matrix", "refresh", "--matrix", str(matrix), "--dry-run", *args])
        assert rc == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


@pytest.mark.slow
def test_progress_only_on_a_tty(fake: FakeIndex, matrix: Path, cache: Cache, tmp_path: Path) -> None:
    """The refresh's progress is glmcompat.ops.progress's bar: drawn on a terminal, one item per release probed."""

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    again = shutil.copytree(matrix, tmp_path / "again")
    quiet = io.StringIO()
    with fake.index(cache) as index:
        report = rf.refresh(index=index, cache=cache, matrix=matrix, packages=["sglang-kernel"], stream=quiet,
                            models=False)
    assert quiet.getvalue() == "" and len(report.outcomes) == 2
    tty = Tty()
    with fake.index(cache) as index:
        rf.refresh(index=index, cache=NoCache(), matrix=again, packages=["sglang-kernel"], stream=tty, models=False)
    assert "refresh [" in tty.getvalue() and "1/2 release(s)" in tty.getvalue() \
        and "2/2 release(s)" in tty.getvalue() and "sglang-kernel 0.4.9" in tty.getvalue()


# ------------------------------------------------------------------------------------------------
# Pure helpers
# ------------------------------------------------------------------------------------------------


def test_metadata_helpers() -> None:
    md = ("Metadata-Version: 2.1\nName: x\nVersion: 1\nRequires-Dist: torch (>=2.14.0)\n"
          "Requires-Dist: torch>=2.12; extra == \"dev\"\n"
          "Requires-Dist: cuda-toolkit[cudart]==13.0.2; platform_system == \"Linux\"\n"
          "Requires-Dist: flashinfer_python[cu13]==0.7.2\nRequires-Dist: torchcodec==0.1; sys_platform == \"darwin\"\n")
    reqs = rf.requirements(md)
    tr = rf.torch_requirement(reqs)
    assert tr is not None and str(tr[0]) == ">=2.14.0" and rf.exact_pin(tr[0]) is None
    assert rf.cuda_of(reqs) == ("13.0", 'cuda-toolkit[cudart]==13.0.2; platform_system == "Linux"')
    assert rf.release_requires(reqs, ["torch", "flashinfer-python", "torchcodec"]) == \
        ["flashinfer-python==0.7.2", "torch>=2.14.0"]

    assert rf.exact_pin(SpecifierSet("==2.9.1")) == "2.9.1" and rf.exact_pin(SpecifierSet("==2.9.*")) is None
    assert rf.cuda_of(rf.requirements("Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90\n")) is not None
    assert rf.torch_requirement(rf.requirements("Name: x\n")) is None


# ------------------------------------------------------------------------------------------------
# Audit
# ------------------------------------------------------------------------------------------------

AUDIT_OK = """schema = 1

[[family]]
package = "torchaudio"
pairs = { "2.11.1" = ">=2.11" }
evidence = "metadata"
source = "s"

[[kernel]]
package = "sglang-kernel"
versions = ["0.4.9", "0.4.10"]
torch = "2.14.1"
evidence = "metadata"
source = "s"

[[torch]]
versions = ["2.15.0"]
cuda = "13.2"
sass = ["sm_80"]
evidence = "arch-probe"
source = "s"
"""


def _audit(fake: FakeIndex, d: Path, cache: Cache, **kw: Any) -> rf.AuditReport:
    with fake.index(cache) as index:
        return rf.audit(index=index, cache=cache, matrix=d, jobs=2, **kw)


def test_audit_finds_no_drift_in_true_rows_and_drift_in_false_ones(fake: FakeIndex, tmp_path: Path,
                                                                    cache: Cache) -> None:
    d = tmp_path / "audit"
    d.mkdir()
    (d / "m.toml").write_text(AUDIT_OK)
    report = _audit(fake, d, cache)
    assert [(c.table, c.version, c.status) for c in report.checks] == [
        ("family", "2.11.1", "ok"), ("kernel", "0.4.9", "ok"), ("kernel", "0.4.10", "ok"), ("torch", "2.15.0", "ok")]
    wrong = AUDIT_OK.replace('">=2.11"', '"==2.11.0"').replace('torch = "2.14.1"', 'torch = "2.14.0"') \
        .replace('cuda = "13.2"', 'cuda = "13.0"')
    (d / "m.toml").write_text(wrong)
    report = _audit(fake, d, cache)
    drift = [(c.table, c.version, c.claimed, c.found, c.line) for c in report.checks if c.status == "drift"]
    assert drift == [("family", "2.11.1", "==2.11.0", ">=2.11", 5), ("kernel", "0.4.9", "==2.14.0", "==2.14.1", 12),
                     ("kernel", "0.4.10", "==2.14.0", "==2.14.1", 12), ("torch", "2.15.0", "13.0", "13.2", 18)]
    js = report.to_json()
    assert js["kind"] == "matrix-audit" and js["summary"]["drift"] == 4 and len(js["drift"]) == 4
    report = _audit(fake, d, cache, sample=2, seed=1)
    assert len(report.checks) == 2 and report.total == 4


def test_audit_deep_reruns_the_probes(fake: FakeIndex, tmp_path: Path, cache: Cache) -> None:
    d = tmp_path / "audit"
    d.mkdir()
    (d / "m.toml").write_text(AUDIT_OK + """
[[abi_probe]]
package = "sglang-kernel"
version = "0.4.10"
torch = "2.14.1"
compatible = false
missing = 2
evidence = "abi-probe"
source = "s"

[[arch_probe]]
package = "sglang-kernel"
version = "0.4.10"
sass = ["sm_80", "sm_90a", "sm_120a"]
evidence = "arch-probe"
source = "s"
""")
    report = _audit(fake, d, cache, deep=True, packages=["sglang-kernel"])
    got = {(c.table, c.version): c.status for c in report.checks}
    assert got == {("kernel", "0.4.9"): "ok", ("kernel", "0.4.10"): "ok", ("abi_probe", "0.4.10"): "drift",
                   ("arch_probe", "0.4.10"): "ok"}


def test_cli_audit_exit_codes(cli: FakeIndex, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from glmcompat.cli import main

    d = tmp_path / "audit"
    d.mkdir()
    (d / "m.toml").write_text(AUDIT_OK)
    assert main(["matrix", "audit", "--matrix", str(d)]) == 0
    assert "4 claim(s) checked: 4 ok, 0 drift" in capsys.readouterr().out
    (d / "m.toml").write_text(AUDIT_OK.replace('">=2.11"', '"==2.11.0"'))
    assert main(["matrix", "audit", "--matrix", str(d), "--json"]) == 1
    js = json.loads(capsys.readouterr().out)
    assert js["drift"][0]["claimed"] == "==2.11.0" and js["drift"][0]["found"] == ">=2.11"
    assert main(["matrix", "audit", "--matrix", str(d)]) == 1
    out = capsys.readouterr().out
    assert "DRIFT " in out and "m.toml:5 [[family]] torchaudio 2.11.1 torch: claimed ==2.11.0, found >=2.11" in out
    assert main(["matrix", "audit", "--matrix", str(d), "--sample", "0"]) == 2


# ------------------------------------------------------------------------------------------------
# The real index
# ------------------------------------------------------------------------------------------------


@pytest.mark.network
def test_network_audit_sample_of_the_shipped_matrix() -> None:
    from tests.conftest import run_cli

    p = run_cli("matrix", "audit", "--sample", "4", "--seed", "7", "--json")
    assert p.returncode in (0, 1), p.stderr
    js = json.loads(p.stdout)
    assert js["kind"] == "matrix-audit" and len(js["checks"]) == 4
    assert all(c["status"] in ("ok", "drift", "unverifiable", "error") for c in js["checks"])
    assert (p.returncode == 1) == bool(js["drift"])


@pytest.mark.network
def test_network_dry_run_of_the_shipped_matrix_lists_only_what_it_lacks() -> None:
    from tests.conftest import run_cli

    p = run_cli("matrix", "refresh", "--dry-run", "--json", "--package", "torchvision", "--package", "sglang-kernel")
    assert p.returncode == 0, p.stderr
    js = json.loads(p.stdout)
    m = load_matrix()
    for c in js["lacking"]:
        if c["package"] == "torchvision":
            assert m.view().family("torchvision", c["version"]) is None
        else:
            assert m.kernel_for(c["package"], c["version"]) is None


# ------------------------------------------------------------------------------------------------
# The round trip: releases taken out of the matrix and refreshed back judge as the shipped matrix does
# ------------------------------------------------------------------------------------------------

RT = FIX / "roundtrip"

# (target, platform, packages): kernels on their torch and off it, a CUDA variant torch, a permissive
# METADATA range that probes contradict, a kernel with release pins, an engine's pins, aarch64 builds
ROUNDTRIP_CASES: list[tuple[str, str, dict[str, str]]] = [
    ("sm90", "x86_64", {"torch": "2.14.1", "sglang-kernel": "0.4.10"}),
    ("sm90", "x86_64", {"torch": "2.14.1+cu126", "sglang-kernel": "0.4.10"}),
    ("sm90", "x86_64", {"torch": "2.13.0", "sglang-kernel": "0.4.10"}),
    ("sm120", "x86_64", {"torch": "2.14.0", "sglang-kernel": "0.4.9"}),
    ("sm75", "x86_64", {"torch": "2.14.1", "sglang-kernel": "0.4.10"}),
    ("sm90", "x86_64", {"torch": "2.11.0", "torchaudio": "2.11.1"}),
    ("sm90", "x86_64", {"torch": "2.12.1", "torchaudio": "2.11.1"}),
    ("sm90", "x86_64", {"torch": "2.13.0", "torchaudio": "2.11.1"}),
    ("sm90", "x86_64", {"torch": "2.14.1", "torchaudio": "2.11.1"}),
    ("sm90", "x86_64", {"torch": "2.14.0", "vllm": "0.33.0", "torchvision": "0.29.0", "torchaudio": "2.11.0"}),
    ("sm90", "x86_64", {"torch": "2.14.1", "vllm": "0.33.0"}),
    ("sm90", "x86_64", {"torch": "2.13.0", "vllm": "0.33.0"}),
    ("sm120", "x86_64", {"sglang": "0.5.23", "torch": "2.14.1", "sglang-kernel": "0.4.10", "flashinfer-python": "0.7.2",
                         "torchaudio": "2.11.0", "transformers": "5.19.0"}),
    ("sm90", "x86_64", {"sglang": "0.5.23", "torch": "2.13.0", "sglang-kernel": "0.4.10"}),
    ("sm121", "aarch64", {"torch": "2.14.1", "sglang-kernel": "0.4.10"}),
    ("sm121", "aarch64", {"torch": "2.13.0", "sglang-kernel": "0.4.10"}),
    ("sm90", "aarch64", {"torch": "2.14.1", "sglang-kernel": "0.4.9"}),
    ("sm110", "aarch64", {"torch": "2.14.1", "sglang-kernel": "0.4.9"}),
]


class RecordedIndex:
    """An httpx transport serving the round trip's recorded pages and METADATA (PEP 658); it serves no wheel,
    so a probe the fixtures do not hold fails."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.calls.append(url)
        if url.startswith(BASE + "/"):
            p = RT / "pages" / f"{url[len(BASE) + 1:].strip('/')}.json"
            if not p.exists():
                return httpx.Response(404)
            page = json.loads(p.read_text())
            for f in page["files"]:
                f["core-metadata"] = (RT / "metadata" / f"{f['filename']}.METADATA").exists()
                f.pop("data-dist-info-metadata", None)
            return httpx.Response(200, content=json.dumps(page).encode(), headers={"content-type": ACCEPT_JSON})
        fn = url.rsplit("/", 1)[-1]
        md = RT / "metadata" / f"{fn.removesuffix('.metadata')}.METADATA"
        if fn.endswith(".metadata") and md.exists():
            return httpx.Response(200, content=md.read_bytes())
        return httpx.Response(404)


def _verdict(facts: Any, target: str, platform: str, packages: dict[str, str]) -> tuple[str, list[tuple[str, ...]]]:
    from glmcompat.decide.rules import evaluate

    found = evaluate(packages, target=target, matrix=facts.on(platform))
    errors = sorted({(f.rule, *f.packages) for f in found if f.severity == "error"})
    return ("unsafe" if errors else "safe"), errors


@pytest.mark.slow
def test_refresh_round_trip_gives_the_shipped_verdicts(tmp_path: Path) -> None:
    from glmcompat.matrix.load import load_facts
    from tests.matrixtrim import ROUNDTRIP

    d = tmp_path / "matrix"
    shutil.copytree(default_matrix_dir(), d)
    for name, versions in ROUNDTRIP.items():
        trim(d, name, versions)
    trimmed = load_facts([d])
    cache = Cache(tmp_path / "cache")
    for key, value in json.loads((RT / "probes.json").read_text()).items():
        cache.put_json(key, value)
    served = RecordedIndex()
    with IndexClient(BASE, client=httpx.Client(transport=httpx.MockTransport(served)), cache=cache,
                     backoff=0.0) as index:
        report = rf.refresh(index=index, cache=cache, matrix=d, packages=sorted(ROUNDTRIP), jobs=2, progress=False,
                            models=False)  # model rows: trimmed by no release here, tested in test_modelprobe
    got = {(o.package, o.version, o.kind, o.platform): o.status for o in report.outcomes}
    want = {(p, v, k, plat): "complete" for p, vs in ROUNDTRIP.items() for v in vs
            for k, plat in {"sglang-kernel": [("kernel", "x86_64"), ("kernel", "aarch64")],
                            "torchaudio": [("family", "x86_64")], "sglang": [("release", "x86_64")],
                            "vllm": [("kernel", "x86_64"), ("release", "x86_64")]}[p]}
    assert got == want, [o.to_output() for o in report.outcomes if o.status != "complete"]
    assert not [c for c in served.calls if c.endswith(".whl")], "a probe was not answered by the recorded results"
    # each row in the file of its platform: aarch64 rows in aarch64.toml only, x86_64 rows never there
    for o in report.outcomes:
        for table, file in o.written:
            assert (Path(file).name == "aarch64.toml") == (o.platform == "aarch64"), (o.package, o.platform, table, file)
    shipped = load_facts()
    refreshed = load_facts([d])
    differ = []
    trimmed_differ = 0
    for target, platform, packages in ROUNDTRIP_CASES:
        want_v = _verdict(shipped, target, platform, packages)
        if _verdict(refreshed, target, platform, packages) != want_v:
            differ.append((target, platform, packages, want_v, _verdict(refreshed, target, platform, packages)))
        trimmed_differ += _verdict(trimmed, target, platform, packages) != want_v
    assert not differ, differ
    assert trimmed_differ >= len(ROUNDTRIP_CASES) // 2  # the cases do depend on the rows taken out


@pytest.mark.slow
def test_audit_reads_each_row_against_the_wheels_of_its_platform(tmp_path: Path) -> None:
    """The rows the round trip writes, audited (--deep) against the recorded index: the aarch64 rows are read
    from the aarch64 wheels (their METADATA, their probes) and agree; none drifts."""
    from tests.matrixtrim import ROUNDTRIP

    d = tmp_path / "matrix"
    shutil.copytree(default_matrix_dir(), d)
    for name, versions in ROUNDTRIP.items():
        trim(d, name, versions)
    cache = Cache(tmp_path / "cache")
    for key, value in json.loads((RT / "probes.json").read_text()).items():
        cache.put_json(key, value)
    with IndexClient(BASE, client=httpx.Client(transport=httpx.MockTransport(RecordedIndex())), cache=cache,
                     backoff=0.0) as index:
        rf.refresh(index=index, cache=cache, matrix=d, packages=sorted(ROUNDTRIP), jobs=2, progress=False, models=False)
        m = load_matrix([d])
        patterns = {r.package: list(r.modules) for r in m.primary_modules}
        checks = [c for c in rf.audit_checks(sorted(d.glob("*.toml")), deep=True, packages=["sglang-kernel"])
                  if c.version in ROUNDTRIP["sglang-kernel"] and c.what != rf.CUBIN_CUDA]  # (cubins: a test below)
        auditor = rf.Auditor(index, cache, rf.tracked_packages(m), patterns)
        for c in checks:
            auditor.run(c)
    arm = [c for c in checks if c.platform == "aarch64"]
    assert {c.table for c in arm} == {"kernel", "abi_probe", "arch_probe"}
    assert all(c.status == "ok" for c in checks), [(c.table, c.version, c.platform, c.claimed, c.found, c.detail)
                                                    for c in checks if c.status != "ok"]
    assert all("aarch64" in c.detail for c in arm) and not any("aarch64" in c.detail for c in checks
                                                                  if c.platform == "x86_64")


def test_release_pins_under_the_engine_extra() -> None:
    """sglang up to 0.4.x keeps its core under the ``srt`` extra (``sglang[all]`` pulls it in), which itself requires
    ``sglang[runtime_common]``: a [[release]] row reads the pins there when the base requirements name none."""
    md = "\n".join([
        "Metadata-Version: 2.1", "Name: sglang", "Version: 0.4.7",
        "Requires-Dist: requests",
        'Requires-Dist: torchao==0.9.0; extra == "runtime-common"',
        'Requires-Dist: transformers==4.52.3; extra == "runtime-common"',
        'Requires-Dist: sglang[runtime_common]; extra == "srt"',
        'Requires-Dist: sgl-kernel==0.1.7; extra == "srt"',
        'Requires-Dist: torch==2.7.1; extra == "srt"',
        'Requires-Dist: torch==2.7.0; extra == "blackwell"', ""])
    keep = ["torch", "sgl-kernel", "torchao", "transformers"]
    assert rf.extra_closure(md, "sglang", "srt") == ["srt", "runtime_common"]
    assert rf.release_pins(md, "sglang", keep) == (
        ["sgl-kernel==0.1.7", "torch==2.7.1", "torchao==0.9.0", "transformers==4.52.3"], ["srt", "runtime_common"])
    # base requirements that name the core win (sglang 0.5.x), and other packages never read an extra
    base = md.replace('torch==2.7.1; extra == "srt"', "torch==2.7.1")
    assert rf.release_pins(base, "sglang", keep) == (["torch==2.7.1"], [])
    assert rf.release_pins(md, "vllm", keep) == ([], [])


@pytest.mark.slow
def test_audit_deep_reads_the_cuda_of_kernel_rows_from_their_cubins(tmp_path: Path,
                                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    """--deep audits a [[kernel]] row's ``cuda`` against the toolkit named in its wheel's cubin headers: a wheel
    served here holds a library nvcc built; a row naming nvcc's release agrees, one naming 12.4 drifts (the error of
    sgl-kernel 0.3.3's old row), a labelled variant is not audited; the default audit reads no wheel."""
    from tests.abifakes import BASE, Transport, wheel
    from tests.readers.test_fatbin import COMPRESS, UNITS, _built, _nvcc_release, _nvcc_units

    # the fatbin tests' library, built once per recipe and nvcc and kept (nvcc takes seconds)
    so = _built(tmp_path_factory, [UNITS, COMPRESS["none"]], "libunits-none.so", lambda t: _nvcc_units(t, "none"))
    release = _nvcc_release()
    files = {f"units-{v}-cp310-abi3-manylinux2014_x86_64.whl":
             wheel({"units/__init__.py": b"", "units/_C.so": so.read_bytes()}, "units", v) for v in ("1.0", "1.1")}
    d = tmp_path / "matrix"
    d.mkdir()
    (d / "m.toml").write_text(f"""schema = 1

[[kernel]]
package = "units"
versions = ["1.0"]
torch = "9.0.0"
cuda = "{release}"
evidence = "arch-probe"
source = "s"

[[kernel]]
package = "units"
versions = ["1.1"]
torch = "9.0.0"
cuda = "12.4"
evidence = "arch-probe"
source = "s"

[[kernel]]
package = "units"
versions = ["1.1"]
torch = "9.0.0"
cuda = "12.4"
variant = "cu124"
evidence = "arch-probe"
source = "s"
""")
    cache = Cache(tmp_path / "cache")
    transport = Transport(files)
    with IndexClient(BASE, client=transport.client(), cache=cache) as index:
        shallow = rf.audit(index=index, cache=cache, matrix=d, jobs=2)
        report = rf.audit(index=index, cache=cache, matrix=d, deep=True, jobs=2)
    assert shallow.checks == []  # arch-probe rows: nothing in METADATA to audit, and no cubin read
    got = [(c.version, c.what, c.claimed, c.found, c.status, c.line) for c in report.checks]
    assert got == [("1.0", rf.CUBIN_CUDA, release, [release], "ok", 7),
                   ("1.1", rf.CUBIN_CUDA, "12.4", [release], "drift", 15)]
    drift = report.checks[1]
    assert "units-1.1-cp310-abi3-manylinux2014_x86_64.whl" in drift.detail and "bytes read" in drift.detail
    assert "glmcompat arch units==1.1" in drift.detail
    out = io.StringIO()
    rf.render_audit(report, out)
    assert f"[[kernel]] units 1.1 cuda (cubins): claimed 12.4, found {release}" in out.getvalue()
    assert report.to_json()["summary"]["drift"] == 1


# ------------------------------------------------------------------------------------------------
# The package: one module per job, public names only, a light parser path
# ------------------------------------------------------------------------------------------------


def test_package_names_resolve_and_modules_share_only_public_names() -> None:
    """Every name the package's __init__ offers comes from the module it names; no module of the package imports a
    ``_private`` name of another module, and none imports inside a function."""
    import ast

    import glmcompat.ops.refresh as pkg

    assert sorted(pkg._WHERE) == sorted(pkg.__all__)
    for name in pkg.__all__:
        module = __import__(f"glmcompat.ops.refresh.{pkg._WHERE[name]}", fromlist=[name])
        assert getattr(pkg, name) is getattr(module, name)
    for path in sorted(Path(pkg.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("glmcompat"):
                assert not [a.name for a in node.names if a.name.startswith("_")], (path.name, node.module)
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            assert not [n for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)], (path.name, fn.name)


def test_the_command_line_parser_imports_no_probe() -> None:
    """``matrix refresh --help`` needs only the option defaults: the parser imports neither the probes nor pydantic."""
    import subprocess
    import sys

    code = ("import sys; from glmcompat.cli.commands.matrix import matrix_parser; matrix_parser(); "
            "print(sorted(m for m in ('pydantic', 'httpx', 'glmcompat.ops.refresh.probes', 'glmcompat.matrix.schema')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
