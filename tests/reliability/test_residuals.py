"""Issue 41: the residuals of an attack run on every input glmcompat reads. Each case was an exit 4, a silent
acceptance or an unbounded run; each is now one line (exit 2 or 3) or a bounded answer. The expensive cases (a 3 GB
sparse member over HTTP, a full TMPDIR, the stack lock's JSON over the network) are in scripts/attack_reliability.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.hostile import elf_with_fatbin, wheel

D5000 = "9" * 5000
INDEX = ["--index-url", "http://127.0.0.1:9/simple/"]  # never reached: each case fails before any request


def _one_line(r: subprocess.CompletedProcess[str], rc: int, needle: str) -> None:
    assert r.returncode == rc, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and needle in r.stderr, r.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (["arch", "x==1.0", "--target", f"sm{D5000}", *INDEX], "--target: "),
    (["arch", "x==1.0", "--target", f"{D5000}.0", *INDEX], "--target: "),
    (["abi", "x==1.0", "--torch", f"2.{D5000}", *INDEX], "5000 digits"),
    (["abi", "x==1.0", "--torch", "2.9.1", "--platform", f"manylinux_2_{D5000}_x86_64", *INDEX], "5000 digits"),
    (["abi", "x==1.0", "--torch", "2.9.1", "--platform", "manylinux_2_99999_x86_64", *INDEX], "glibc 2.99999"),
    (["arch", f"x==1.{D5000}", "--target", "sm90", *INDEX], "5000 digits"),
    (["lock", "--stack", "glm5-sglang-0.5.9", "--target", "sm120", "--with", f"torch==2.{D5000}", *INDEX], "--with: "),
    (["lock", "--stack", "glm5-sglang-0.5.9", "--target", "sm120", "--with", f"torch>=2.{D5000}", *INDEX], "--with: "),
])
def test_a_number_past_the_digit_limit_is_exit_2(args: list[str], needle: str, tmp_path: Path) -> None:
    """Each was exit 4: int() refuses more than 4,300 digits with a ValueError (packaging's Version calls it)."""
    if args[0] == "lock":
        args = [*args, "--out", str(tmp_path / "out")]
    _one_line(run_cli(*args, cwd=tmp_path), 2, needle)


def test_a_socks_proxy_without_socksio_is_a_configuration_error() -> None:
    pytest.importorskip("httpx")
    try:
        import socksio  # noqa: F401
        pytest.skip("socksio is installed: httpx speaks SOCKS here")
    except ImportError:
        pass
    r = run_cli("arch", "x==1.0", "--target", "sm90", *INDEX, env={"ALL_PROXY": "socks5://user:secret@127.0.0.1:9"})
    _one_line(r, 2, "ALL_PROXY=socks5://***@127.0.0.1:9: a SOCKS proxy needs the socksio package")
    assert "secret" not in r.stderr


@pytest.mark.parametrize(("text", "needle"), [
    ("x@@@@\n", "req.txt:1: invalid requirement 'x@@@@'"),
    ("torch==2.9.1\n--index-url 'unterminated\n", "req.txt:2: options"),
    ("torch==2.9.1 --hash='sha256:ab\n", "req.txt:1: options"),
])
def test_a_line_that_is_no_requirement_is_exit_2(tmp_path: Path, text: str, needle: str) -> None:
    """Both were read as nothing at all, and the file judged safe (exit 0)."""
    (tmp_path / "req.txt").write_text(text)
    _one_line(run_cli("check", "req.txt", "--target", "sm120", cwd=tmp_path), 2, needle)


def test_name_at_a_path_is_still_a_requirement(tmp_path: Path) -> None:
    from glmcompat.readers.formats.requirements import parse_requirements

    lock = parse_requirements(tmp_path / "r.txt", "x @ ./vendor/x\ny @ file:///opt/y\n")
    assert [e.name for e in lock.entries] == ["x", "y"]


def test_a_fatbin_of_empty_entries_is_refused_by_the_bytes_present() -> None:
    """A fatbin of a billion 64-byte headers deflates to a few MB; its entries grew to 0.8 GB before the deadline.
    The entries a section may hold are capped by the bytes the wheel holds for it."""
    from glmcompat.ops.wheelprobe import elf_members, read_gpu_code_member
    from glmcompat.readers.fatbin import FatbinError
    from glmcompat.readers.wheelzip import BytesSource, RemoteZip

    zf = RemoteZip(BytesSource(wheel(elf_with_fatbin(400_000)), "f.whl"))
    (m,) = elf_members(zf)
    with pytest.raises(FatbinError, match=r"x/_C.so: .nv_fatbin: more than \d+ fatbin entries, the cap"):
        read_gpu_code_member(zf, m, payloads=True)
    small = RemoteZip(BytesSource(wheel(elf_with_fatbin(3)), "s.whl"))
    assert read_gpu_code_member(small, elf_members(small)[0]).counts == {"sm_90": 3}


@pytest.mark.slow
def test_a_sparse_member_is_an_error_naming_the_member_and_the_cap(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A member declaring 1.5 GB that deflates to 1.5 MB (its ELF headers at its end): the tail search and the full
    inflation it falls back to count against the probe's cap, in windows; the error names the member and the cap,
    not the server."""
    from glmcompat.model.errors import WheelError
    from glmcompat.ops.wheelprobe import elf_members, read_elf_member
    from glmcompat.readers.wheelzip import INFLATE_FLOOR, BytesSource, RemoteZip
    from tests.hostile import sparse_wheel

    import glmcompat.readers.wheelzip as wheelzip

    floor = INFLATE_FLOOR >> 4  # the same walk as at the shipped 1 GiB, at a sixteenth of the CPU
    monkeypatch.setattr(wheelzip, "INFLATE_FLOOR", floor)
    path = tmp_path / "sparse.whl"
    sparse_wheel(path, floor + (floor >> 1), level=1)
    zf = RemoteZip(BytesSource(path.read_bytes(), "sparse.whl"))
    (m,) = elf_members(zf)
    with pytest.raises(WheelError, match=r"sparse.whl: x/_C.so: inflating it passes the 64 MiB one probe may inflate"):
        read_elf_member(zf, m)
    assert zf.held == 0  # what the member kept was dropped


def test_a_deadline_passed_while_inflating_does_not_blame_the_server() -> None:
    """The deadline covers inflating and parsing too; when it passes there, the message says so instead of naming "a
    server that trickles or stalls"."""
    from glmcompat.edges.http import Deadline
    from glmcompat.model.errors import EnvironmentFailure
    from glmcompat.ops.wheelprobe import elf_members, read_elf_member
    from glmcompat.readers.wheelzip import BytesSource, RemoteZip
    from tests.hostile import elf_with_symbols

    src = BytesSource(wheel(elf_with_symbols(10, 8, gap=32 << 20)), "b.whl")
    deadline = Deadline("b.whl: download", 0.001)
    src.deadline, src.check = deadline, deadline.check  # type: ignore[attr-defined]
    zf = RemoteZip(src)
    with pytest.raises(EnvironmentFailure, match=r"^b.whl: not read within 0.001 s: fetching it and inflating") as e:
        read_elf_member(zf, elf_members(zf)[0])
    assert "trickles" not in str(e.value)
