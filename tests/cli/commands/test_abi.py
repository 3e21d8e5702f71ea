"""``glmcompat abi`` / ``glmcompat arch`` end to end against a real local HTTP server, good and bad wheels.

Bad input must give exit 2 (or 3 for the network), one line on stderr naming the wheel and the member,
no traceback, bounded memory, no hang.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from glmcompat.cli import main
from tests.abifakes import HAVE_GXX, LocalServer, build_fakes, wheel

pytestmark = pytest.mark.skipif(not HAVE_GXX, reason="needs g++")

TORCH_OK = "torch-9.0.0-cp311-cp311-manylinux_2_28_x86_64.whl"


def _bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bomb/_C.so", b"\x7fELF" + bytes(1000))
    data = bytearray(buf.getvalue())
    pos = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, pos + 24, 0xFFFFFFF0)  # declared uncompressed size: 4 GB from ~30 bytes
    return bytes(data)


def _bad_elf() -> bytes:
    elf = bytearray(b"\x7fELF\x02\x01\x01" + bytes(57))
    struct.pack_into("<Q", elf, 40, 10_000_000)  # section headers far past the end
    struct.pack_into("<HHH", elf, 58, 64, 30, 1)
    return wheel({"badelf/_C.so": bytes(elf)}, "badelf", "1.0")


def _bad_fatbin(fakes: dict[str, bytes]) -> bytes:
    data = fakes["ext-1.0-cp310-abi3-manylinux2014_x86_64.whl"]
    zf = zipfile.ZipFile(io.BytesIO(data))
    so = bytearray(zf.read("ext/_kernels.so"))
    i = so.find(struct.pack("<I", 0xBA55ED50))
    struct.pack_into("<Q", so, i + 8, 1 << 40)  # container size far beyond the section
    return wheel({"badfat/_kernels.so": bytes(so)}, "badfat", "1.0")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    fakes = build_fakes(tmp_path_factory.mktemp("fakes"))
    files = dict(fakes)
    files["notzip-1.0-py3-none-any.whl"] = b"this is not a zip archive\n" * 100
    files["bomb-1.0-py3-none-any.whl"] = _bomb()
    files["badelf-1.0-py3-none-any.whl"] = _bad_elf()
    files["badfat-1.0-py3-none-any.whl"] = _bad_fatbin(fakes)
    ext = fakes["ext-1.0-cp310-abi3-manylinux2014_x86_64.whl"]
    files["short-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = ext
    files["norange-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = ext
    with LocalServer(files) as srv:
        srv.modes["short-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = "short"
        srv.modes["norange-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = "ignore-range"
        yield srv


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        rc = main(list(args))
    except SystemExit as e:  # argparse usage errors
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.slow
def test_abi_ok_and_not(server: LocalServer, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "abi", "ext==1.0", "--torch", "9.0.0", "--index-url", server.base)
    assert rc == 0 and "compatible" in out
    rc, out, _ = run(capsys, "abi", "ext==1.0", "--torch", "9.1.0", "--index-url", server.base, "--json")
    assert rc == 1
    d = json.loads(out)
    assert d["version"] == 1 and d["ok"] is False
    assert [m["symbol"] for m in d["missing"]] == ["_ZN3c1013MessageLoggerC1EPKcii"]
    assert 0 < d["bytes_fetched"] < d["bytes_total"]


def test_arch_cli(server: LocalServer, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "arch", "ext==1.0", "--target", "sm120", "--index-url", server.base)
    assert rc == 0 and "sm_120a" in out and "runs on sm120" in out
    rc, out, _ = run(capsys, "arch", "ext==1.0", "--target", "sm121", "--index-url", server.base, "--json")
    assert rc == 1 and json.loads(out)["missing"] == ["ext/_kernels.so"]


@pytest.mark.parametrize("name", ["short", "norange"])
def test_misbehaving_servers_still_give_the_answer(server: LocalServer, capsys: pytest.CaptureFixture[str],
                                                   name: str) -> None:
    rc, out, err = run(capsys, "abi", f"{name}==1.0", "--torch", "9.1.0", "--index-url", server.base, "--json",
                       "--no-cache")
    assert rc == 1, err
    assert [m["symbol"] for m in json.loads(out)["missing"]] == ["_ZN3c1013MessageLoggerC1EPKcii"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["abi", "notzip==1.0", "--torch", "9.0.0"], 2, "notzip-1.0-py3-none-any.whl: not a zip archive"),
        (["abi", "bomb==1.0", "--torch", "9.0.0"], 2, "bomb-1.0-py3-none-any.whl: bomb/_C.so: declared size"),
        (["abi", "badelf==1.0", "--torch", "9.0.0"], 2, "badelf-1.0-py3-none-any.whl: badelf/_C.so: "),
        (["arch", "badfat==1.0"], 2, "badfat-1.0-py3-none-any.whl: badfat/_kernels.so: .nv_fatbin: "),
        (["abi", "nosuch==1.0", "--torch", "9.0.0"], 2, "no project 'nosuch'"),
        (["abi", "ext==7.0", "--torch", "9.0.0"], 2, "ext==7.0 is not on the index"),
        (["abi", "ext", "--torch", "9.0.0"], 2, "expected NAME==VERSION"),
        (["abi", "ext==1.0", "--torch", "x.y"], 2, "invalid version"),
        (["arch", "ext==1.0", "--target", "volta"], 2, "invalid target"),
    ],
)
def test_bad_input(server: LocalServer, capsys: pytest.CaptureFixture[str], args: list[str], code: int,
                   message: str) -> None:
    rc, out, err = run(capsys, *args, "--index-url", server.base, "--no-cache")
    assert rc == code, err
    assert err.startswith("error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run(capsys, "abi", "ext==1.0")
    assert rc == 2 and "--torch" in err


def test_unreachable_index(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import glmcompat.edges.http as index

    monkeypatch.setattr(index.time, "sleep", lambda s: None)
    rc, _, err = run(capsys, "abi", "ext==1.0", "--torch", "9.0.0", "--index-url", "http://127.0.0.1:9/simple",
                     "--no-cache")
    assert rc == 3 and "cannot connect" in err and err.count("\n") == 1


def test_warm_repeat_offline(server: LocalServer, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "c"))
    assert run(capsys, "abi", "ext==1.0", "--torch", "9.1.0", "--index-url", server.base)[0] == 1
    before = server.requests
    rc, out, _ = run(capsys, "abi", "ext==1.0", "--torch", "9.1.0", "--index-url", server.base)
    assert rc == 1 and "cached" in out
    assert server.requests == before


@pytest.mark.parametrize("args", [("abi", "ext==1.0", "--torch", "9.1.0"), ("abi", "ext==1.0", "--torch", "9.0.0"),
                                  ("arch", "ext==1.0", "--target", "sm90"), ("arch", "ext==1.0", "--target", "sm121")])
def test_a_cached_answer_is_the_same_document(server: LocalServer, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    """The typed records read back from the cache (each one's from_json) give the document the probe gave: only how it
    was got (seconds, bytes fetched, cached) differs."""
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "c"))
    docs = []
    for _ in range(2):
        rc, out, err = run(capsys, *args, "--index-url", server.base, "--json")
        assert rc in (0, 1), err
        docs.append((rc, json.loads(out)))
    (rc1, cold), (rc2, warm) = docs
    assert rc1 == rc2 and not cold["cached"] and warm["cached"] and cold["bytes_fetched"] > 0
    how = {"seconds", "bytes_fetched", "cached"}
    assert {k: v for k, v in cold.items() if k not in how} == {k: v for k, v in warm.items() if k not in how}
