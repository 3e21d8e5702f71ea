"""Issue 12 (reliability and security): the error contract, regular files only, size caps, checked caches,
linear-time ``explain``, and the small items.

Each test names the failure it guards against; each fails on the code before the fix.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from glmcompat import cli
from glmcompat.model.errors import EXIT_INTERNAL, EnvironmentFailure, InputError, LockFormatError, classify

from tests.conftest import LINEAR, LOCKS, ROOT, growth, run_cli

UV = LOCKS / "glm5-torch-2.10.0" / "uv.lock"
PYLOCK = LOCKS / "glm5-torch-2.10.0" / "pylock.toml"


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    """The single ``error: ...`` line of a failed run (no traceback, nothing else on stderr)."""
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


# --- the top-level contract ----------------------------------------------------------------------------


def _raising(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    """Make `glmcompat boom` a command whose main raises ``exc``."""
    mod = types.ModuleType("glmcompat_test_boom")

    def main(name: str, argv: list[str]) -> int:
        raise exc

    mod.main = main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "glmcompat_test_boom", mod)
    monkeypatch.setitem(cli.COMMANDS, "boom", ("glmcompat_test_boom", "raises"))


def test_an_unexpected_exception_is_exit_4_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Tracebacks exited 1, the code for "unsafe"; now an internal error is exit 4 and one line asking for a report."""
    monkeypatch.delenv("GLMCOMPAT_DEBUG", raising=False)
    _raising(monkeypatch, RuntimeError("something\nunexpected"))
    assert cli.main(["boom"]) == EXIT_INTERNAL == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: internal error: RuntimeError: something unexpected (please report this at ")
    assert "rerun with GLMCOMPAT_DEBUG=1 for the traceback)" in err


def test_glmcompat_debug_prints_the_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GLMCOMPAT_DEBUG", "1")
    _raising(monkeypatch, KeyError("k"))
    assert cli.main(["boom"]) == 4
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and err.splitlines()[-1].startswith("error: internal error: KeyError")


def _httpx_errors() -> list[BaseException]:
    import httpx

    req = httpx.Request("GET", "https://user:secret@index.invalid/simple/x/")
    return [httpx.TooManyRedirects("Exceeded maximum allowed redirects.", request=req),
            httpx.RemoteProtocolError("peer closed connection", request=req),
            httpx.ReadTimeout("timed out", request=req), httpx.ConnectError("refused"), httpx.InvalidURL("bad")]


@pytest.mark.parametrize("exc", _httpx_errors(), ids=lambda e: type(e).__name__)
def test_every_httpx_error_is_exit_3_with_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                   exc: BaseException) -> None:
    _raising(monkeypatch, exc)
    assert cli.main(["boom"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: network: ") and type(exc).__name__ in err
    assert "secret" not in err  # credentials in a URL are never printed


@pytest.mark.parametrize(("exc", "code", "needle"), [
    (OSError(errno.EROFS, "Read-only file system", "/out/pyproject.toml"), 3, "/out/pyproject.toml: Read-only file system"),
    (OSError(errno.ENOSPC, "No space left on device"), 3, "No space left on device"),
    (PermissionError(errno.EACCES, "Permission denied", "/root/.cache/glmcompat/x"), 3, "Permission denied"),
    (NotADirectoryError(errno.ENOTDIR, "Not a directory", "/etc/passwd/out"), 3, "Not a directory"),
    (MemoryError(), 3, "out of memory"),
    (KeyboardInterrupt(), 130, "interrupted"),
    (InputError("bad", path="x.txt", line=3), 2, "x.txt:3: bad"),
    (EnvironmentFailure("uv failed"), 3, "uv failed"),
    (RecursionError("maximum recursion depth exceeded"), 4, "internal error: RecursionError"),
    (ValueError("Exceeds the limit (4300 digits) for integer string conversion"), 4, "internal error: ValueError"),
])
def test_classify(exc: BaseException, code: int, needle: str) -> None:
    got, line = classify(exc)
    assert got == code and needle in line and "\n" not in line


def test_a_crash_is_never_exit_1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for exc in (TypeError("x"), AttributeError("y"), AssertionError(), StopIteration(), ZeroDivisionError()):
        _raising(monkeypatch, exc)
        assert cli.main(["boom"]) == 4
    capsys.readouterr()


def test_a_damaged_verdict_cache_is_a_miss(tmp_path: Path) -> None:
    """Wrong-type JSON in the warm-check verdict cache crashed every later run; now the full path answers."""
    first = run_cli("check", str(UV), "--target", "sm120")
    assert first.returncode in (0, 1)
    cache = Path(os.environ["GLMCOMPAT_CACHE_DIR"]) / "verdicts"
    entries = list(cache.iterdir())
    assert entries
    for e in entries:
        e.write_text("[1, 2, 3]")
    again = run_cli("check", str(UV), "--target", "sm120")
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout), again.stderr


# --- readers: parse errors of any kind are exit 2, one line, naming the file and the line ---------------


def _uv_with(old: str, new: str, tmp_path: Path) -> Path:
    text = UV.read_text()
    assert old in text
    p = tmp_path / "uv.lock"
    p.write_text(text.replace(old, new, 1))
    return p


BIG = "1" * 5000  # more digits than int() converts: a ValueError wherever it was compared


@pytest.mark.parametrize(("name", "content", "where"), [
    ("requirements.txt", f"torch=={BIG}\n", "requirements.txt:1:"),
    ("requirements.txt", f"numpy==1.0\ntorch>={BIG}\n", "requirements.txt:2:"),
    ("requirements.txt", f'torch==2.9.1 ; python_version >= "{BIG}"\n', "requirements.txt:1:"),
    ("requirements.txt", "torch==2.9.1 ; python_version >= '3' and extra == \n", "requirements.txt:1:"),
    ("pylock.toml", 'lock-version = "1.0"\n[[packages]]\nname = "torch"\nversion = "2.9.1"\nmarker = 1\n', "pylock.toml"),
    ("pylock.toml", 'lock-version = "1.0"\n[[packages]]\nname = "torch"\nversion = "[pa0.3.21"\n', "pylock.toml:3:"),
    ("pylock.toml", 'lock-version = "1.0"\nrequires-python = 5\n[[packages]]\nname = "torch"\nversion = "2.9.1"\n',
     "pylock.toml:2:"),
    ("uv.lock", "version = 1\nx = " + "[" * 3000 + "]" * 3000 + "\n", "uv.lock"),
    ("uv.lock", f"version = 1\nrevision = {BIG}\n", "uv.lock:2:"),
    ("Pipfile.lock", '{"_meta": {"pipfile-spec": 6}, "default": ' + "[" * 5000 + "]" * 5000 + "}", "Pipfile.lock"),
    ("Pipfile.lock", '{"_meta": {"pipfile-spec": 6, "requires": {"python_full_version": "' + BIG + '"}}, '
                     '"default": {"torch": {"version": "==2.9.1"}}}', None),
])
def test_reader_failures_are_exit_2_naming_the_file(tmp_path: Path, name: str, content: str, where: str | None) -> None:
    p = tmp_path / name
    p.write_text(content)
    r = run_cli("check", str(p), "--target", "sm120")
    if where is None:  # an absurd requires-python is dropped, not a crash
        assert r.returncode in (0, 1, 2) and "Traceback" not in r.stderr and "internal error" not in r.stderr
        return
    assert r.returncode == 2
    line = one_error_line(r)
    assert f"{tmp_path / where}" in line or f"{p}" in line, line
    if where.endswith(":"):
        assert line.startswith(f"error: {tmp_path / where}"), line


@pytest.mark.parametrize(("old", "new", "needle"), [
    ('version = "2.10.0"', 'version = "2.10.0abc"', "invalid version '2.10.0abc'"),
    ('version = "2.10.0"', f'version = "2.{BIG}"', "invalid version"),
    ('requires-python = ">=3.11, <3.13"', 'requires-python = ">=3.11, <<3.13"', "invalid requires-python"),
    ('requires-python = ">=3.11, <3.13"', f'requires-python = ">={BIG}"', "invalid requires-python"),
    ('resolution-markers = [\n', 'resolution-markers = [1,\n', "resolution-markers must be a list of strings"),
])
def test_uv_lock_types_are_validated(tmp_path: Path, old: str, new: str, needle: str) -> None:
    """InvalidVersion and the integer digit limit crashed the rules; a non-string marker or requires-python
    was read as if it were none."""
    p = _uv_with(old, new, tmp_path)
    r = run_cli("check", str(p), "--target", "sm120")
    assert r.returncode == 2
    line = one_error_line(r)
    assert needle in line and line.startswith(f"error: {p}:"), line


def test_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    """pip reads a requirements file that starts with a UTF-8 byte-order mark, and so must every reader."""
    for src in (UV, PYLOCK, LOCKS / "glm5-torch-2.10.0" / "requirements.txt"):
        p = tmp_path / src.name
        p.write_bytes(b"\xef\xbb\xbf" + src.read_bytes())
        plain = run_cli("check", str(src), "--target", "sm120")
        r = run_cli("check", str(p), "--target", "sm120")
        assert r.returncode == plain.returncode, r.stderr
    m = tmp_path / "targets.toml"
    m.write_bytes(b"\xef\xbb\xbf" + (ROOT / "glmcompat" / "matrix" / "data" / "targets.toml").read_bytes())
    r = run_cli("matrix", "validate", str(m))
    assert r.returncode == 0, r.stderr


def _repo(tmp_path: Path, old: bytes, new: bytes) -> Path:
    d = tmp_path / "repo"
    d.mkdir()
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=d, check=True)
    (d / "requirements.txt").write_bytes(old)
    subprocess.run([*git, "add", "."], cwd=d, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=d, check=True)
    (d / "requirements.txt").write_bytes(new)
    return d / "requirements.txt"


def test_bump_mode_reads_an_undecodable_old_lock_as_exit_2(tmp_path: Path) -> None:
    """`check --against REV` decoded `git show` as UTF-8 in subprocess: UnicodeDecodeError, a traceback."""
    p = _repo(tmp_path, b"torch==2.9.1\n\xff\xfe junk\n", b"torch==2.9.1\n")
    r = run_cli("check", str(p), "--target", "sm120", "--against", "HEAD", cwd=p.parent)
    assert r.returncode == 2
    assert "HEAD:requirements.txt:2: not UTF-8 text" in one_error_line(r)


@pytest.mark.parametrize("settings", ["targets = 1", "targets = [1]", "target = {a = 1}", 'targets = "sm120"\nmodel = 3',
                                      'targets = "sm120"\nmodel = ["x"]', 'targets = ["sm120", {}]'])
def test_wrong_types_in_tool_glmcompat_are_exit_2_naming_the_file(tmp_path: Path, settings: str) -> None:
    (tmp_path / "uv.lock").write_bytes(UV.read_bytes())
    pp = tmp_path / "pyproject.toml"
    pp.write_text(f"[project]\nname = 'x'\n\n[tool.glmcompat]\n{settings}\n")
    r = run_cli("check", str(pp))
    assert r.returncode == 2
    line = one_error_line(r)
    assert str(pp) in line and "[tool.glmcompat]" in line, line


# --- only regular files; sizes capped ------------------------------------------------------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    p = tmp_path / "uv.lock"
    os.mkfifo(p)
    return p


# The commands of the special-file tests below run in one process (the CLI's main called for each in turn, as
# `python -m glmcompat` calls it, an uncaught exception printed as the interpreter prints it), killed after 120 s: a
# hang (the old behaviour on a FIFO) still fails them all instead of blocking, and one interpreter's start-up and
# matrix load serve all the commands (each process took 0.15-0.5 s of CPU, nearly all of it that).
_MANY = """\
import contextlib, io, json, sys, traceback
from glmcompat import cli
done = []
for args in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) or e.code is None else 1
        except BaseException:
            traceback.print_exc()
            code = 1
    done.append([int(code or 0), out.getvalue(), err.getvalue()])
print(json.dumps(done))
"""


def _quick_many(commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Each of ``commands`` as `glmcompat ARGS` would answer it (exit code, stdout, stderr), all in one process."""
    r = subprocess.run([sys.executable, "-c", _MANY, json.dumps(commands)], capture_output=True, text=True,
                       timeout=120, env=os.environ.copy())
    assert r.returncode == 0, r.stderr
    return [subprocess.CompletedProcess(["glmcompat", *c], rc, out, err)
            for c, (rc, out, err) in zip(commands, json.loads(r.stdout), strict=True)]


FIFO_COMMANDS = [
    ["check", "{fifo}", "--target", "sm120"],
    ["check", "{fifo}", "--target", "sm120", "--matrix", str(ROOT / "glmcompat" / "matrix" / "data")],
    ["matrix", "validate", "{fifo}"],
    ["check", str(UV), "--target", "sm120", "--matrix", "{fifo}"],
    ["lock", "--target", "sm120", "--matrix", "{fifo}", "--out", "{out}"],
    ["explain", "{fifo}"],
]
DEVICES = ["/dev/zero", "/dev/urandom"]
DEVICE_COMMANDS = [["check", "{device}", "--target", "sm120"], ["explain", "{device}"], ["matrix", "validate", "{device}"]]


@pytest.fixture(scope="module")
def special_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every special-file command below, run once in one process: (the FIFO, its folder's include case) and
    the answers keyed by the test's row."""
    tmp = tmp_path_factory.mktemp("special")
    fifo = tmp / "uv.lock"
    os.mkfifo(fifo)
    inc = tmp_path_factory.mktemp("fifo-include")
    os.mkfifo(inc / "core.txt")
    req = inc / "requirements.txt"
    req.write_text("numpy==2.0.0\n-r core.txt\n")
    big = tmp / "requirements.txt"
    with open(big, "wb") as f:  # sparse: 65 MiB that take no disk
        f.truncate(65 << 20)
    rows: dict[str, list[str]] = {}
    for i, command in enumerate(FIFO_COMMANDS):
        rows[f"fifo{i}"] = [a.format(fifo=fifo, out=tmp / "out") for a in command]
    for device in DEVICES:
        if os.path.exists(device):
            for j, command in enumerate(DEVICE_COMMANDS):
                rows[f"{device}{j}"] = [a.format(device=device) for a in command]
    rows["include"] = ["check", str(req), "--target", "sm120"]
    rows["big"] = ["check", str(big), "--target", "sm120"]
    return {"fifo": fifo, **dict(zip(rows, _quick_many(list(rows.values())), strict=True))}


@pytest.mark.parametrize("i", range(len(FIFO_COMMANDS)), ids=[f"command{i}" for i in range(len(FIFO_COMMANDS))])
def test_a_fifo_is_refused_at_once(special_runs: dict[str, Any], i: int) -> None:
    """A FIFO as any input file blocked forever (nothing writes to it)."""
    r, fifo = special_runs[f"fifo{i}"], special_runs["fifo"]
    assert r.returncode == 2, (r.args, r.stderr)
    line = one_error_line(r)
    assert str(fifo) in line and "FIFO" in line and "regular file" in line, line


def test_a_fifo_include_is_refused(special_runs: dict[str, Any]) -> None:
    r = special_runs["include"]
    assert r.returncode == 2
    line = one_error_line(r)
    assert "requirements.txt:2: -r 'core.txt'" in line and "FIFO" in line, line


@pytest.mark.parametrize("device", DEVICES)
def test_a_device_is_refused_at_once(special_runs: dict[str, Any], device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    for j in range(len(DEVICE_COMMANDS)):
        r = special_runs[f"{device}{j}"]
        assert r.returncode == 2 and "a device, not a regular file" in one_error_line(r), r.args


def test_an_oversized_input_is_refused_without_reading_it(special_runs: dict[str, Any]) -> None:
    r = special_runs["big"]
    assert r.returncode == 2 and "more than the 64 MiB" in one_error_line(r)


def test_read_input_refuses_special_files_in_process(fifo: Path) -> None:
    from glmcompat.matrix.store import read_input

    with pytest.raises(LockFormatError, match="is a FIFO"):
        read_input(fifo, LockFormatError, "a lock file")
    small = fifo.parent / "small.txt"
    small.write_bytes(b"x" * 100)
    with pytest.raises(LockFormatError, match="more than the 0 MiB"):
        read_input(small, LockFormatError, "a lock file", limit=10)
    assert read_input(small, LockFormatError, "a lock file") == b"x" * 100


# --- caches are checked ----------------------------------------------------------------------------------


def test_cache_entries_carry_a_digest_and_a_truncated_one_is_a_miss(tmp_path: Path) -> None:
    """A truncated cached torch export list gave a wrong "incompatible" (the missing names), cached for good."""
    from glmcompat.edges.cache import Cache

    c = Cache(tmp_path)
    names = b"\n".join(f"_ZN3c10{i}Ev".encode() for i in range(1000))
    c.put_bytes("torch-v1-" + "ab" * 32, names)
    assert c.get_bytes("torch-v1-" + "ab" * 32) == names
    path = tmp_path / "torch" / ("torch-v1-" + "ab" * 32)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])  # cut short (a full disk, a kill before the rename elsewhere)
    assert c.get_bytes("torch-v1-" + "ab" * 32) is None
    path.write_bytes(names)  # an entry without the digest line (written by hand, or by an older glmcompat)
    assert c.get_bytes("torch-v1-" + "ab" * 32) is None
    c.put_bytes("torch-v1-" + "ab" * 32, names)  # the miss is recomputed and replaced
    assert c.get_bytes("torch-v1-" + "ab" * 32) == names


@pytest.mark.parametrize(("key", "good", "bad"), [
    ("abi-v2-" + "a" * 32 + "-" + "b" * 32,
     {"package": "x", "package_version": "1", "torch": "2", "wheel": "w", "torch_wheel": "t", "modules": [],
      "torch_exports": 3, "torch_cuda_majors": [12], "bytes_total": 4}, {"package": "x", "modules": 5}),
    ("arch-v1-" + "ab" * 32, [{"member": "m", "sass": ["sm_90"], "ptx": [], "counts": {"sm_90": 1}}],
     [{"member": 1}]),
    ("ext-v2-" + "ab" * 32, {"m.so": {"needed": [], "undefined": [], "weak_undefined": [], "defined": []}},
     {"m.so": []}),
    ("torch-v1-" + "ab" * 32 + ".meta", {"needed": ["libc.so"], "libs": {"libc10.so": 3}}, {"needed": 1}),
    ("page-00000000-x", {"files": []}, {"files": {}}),
    ("requires-" + "ab" * 32, ["torch==2.9.1"], [1]),
])
def test_wrong_type_json_in_a_cache_is_a_miss(tmp_path: Path, key: str, good: object, bad: object) -> None:
    """Wrong-type JSON in any cache crashed every later run until deleted."""
    from glmcompat.edges.cache import Cache

    c = Cache(tmp_path)
    c.put_json(key, bad)
    assert c.get_json(key) is None
    c.put_json(key, good)
    assert c.get_json(key) == good


def test_a_damaged_lock_cache_is_a_miss_and_replaced(tmp_path: Path) -> None:
    from glmcompat.matrix.store import cache_dir
    from glmcompat.readers.formats import read_lock

    lock = read_lock(UV)
    entries = list((cache_dir() / "locks").iterdir())
    assert entries
    for bad in ("[1, 2]", '{"format": 3, "kind": 5, "entries": 1}', '{"format": 3, "kind": "uv.lock", "entries": '
                '[[1, 2]], "sets": [], "meta": {}}', '{"format": 3, "kind": "uv.lock", "entries": [], "sets": '
                '[{"name": "x", "packages": {"torch": 1}}], "meta": {}}'):
        for e in entries:
            e.write_text(bad)
        assert read_lock(UV) == lock
    from glmcompat.matrix.locations import unseal

    assert json.loads(unseal("lock", entries[0].name, entries[0].read_bytes()) or b"")["kind"] == "uv.lock"  # replaced


def test_the_matrix_cache_is_keyed_by_content(tmp_path: Path) -> None:
    """Keyed by size and mtime, a same-size edit with the mtime kept served stale facts."""
    from glmcompat.matrix.load import load_facts

    d = tmp_path / "m"
    d.mkdir()
    for f in (ROOT / "glmcompat" / "matrix" / "data").glob("*.toml"):
        (d / f.name).write_bytes(f.read_bytes())
    target = d / "targets.toml"
    before = load_facts([d]).target("sm120").smem_per_block_optin
    text = target.read_text()
    at = text.index(f"smem_per_block_optin = {before}", text.index('name = "sm120"'))
    edited = text[:at] + f"smem_per_block_optin = {before - 1}" + text[at + len(f"smem_per_block_optin = {before}"):]
    assert len(edited) == len(text)
    st = target.stat()
    target.write_text(edited)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert load_facts([d]).target("sm120").smem_per_block_optin == before - 1


def test_check_sees_a_same_size_matrix_edit_with_the_mtime_kept(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    for f in (ROOT / "glmcompat" / "matrix" / "data").glob("*.toml"):
        (d / f.name).write_bytes(f.read_bytes())
    first = run_cli("check", str(UV), "--target", "sm120", "--matrix", str(d))
    assert "(compute capability 12.0" in first.stdout
    target = d / "targets.toml"
    text, st = target.read_text(), target.stat()
    at = text.index('compute_capability = "12.0"', text.index('name = "sm120"'))
    target.write_text(text[:at] + 'compute_capability = "12.1"' + text[at + len('compute_capability = "12.0"'):])
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = run_cli("check", str(UV), "--target", "sm120", "--matrix", str(d))
    assert "(compute capability 12.1" in again.stdout, again.stdout


def test_a_damaged_matrix_cache_is_a_miss(tmp_path: Path) -> None:
    from glmcompat.matrix.load import load_facts
    from glmcompat.matrix.store import cache_dir

    facts = load_facts()
    for p in cache_dir().glob("matrix-*.json"):
        raw = p.read_bytes()
        p.write_bytes(raw[: len(raw) // 3])  # truncated
    assert load_facts().data == facts.data
    for p in cache_dir().glob("matrix-*.json"):
        p.write_text('{"target": 5}')  # wrong shape, no digest line
    assert load_facts().data == facts.data
    for p in cache_dir().glob("matrix-*.json"):
        body = b'{"target": [1]}'
        import hashlib

        p.write_bytes(hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b"\n" + body)  # right digest, wrong shape
    assert load_facts().data == facts.data


def test_index_sha256_values_are_validated_before_naming_a_cache_file() -> None:
    from glmcompat.edges.index import parse_project_page

    files = [{"filename": "x-1.0-py3-none-any.whl", "url": "x.whl", "hashes": {"sha256": h}}
             for h in ("../../../../etc/passwd", "ab" * 31, "AB" * 32, "zz" * 32, 5)]
    got = [f.sha256 for f in parse_project_page({"files": files}, "https://index.invalid/simple/x/").files]
    assert sorted(got, key=str) == sorted([None, None, "ab" * 32, None, None], key=str)


# --- explain: linear time, bounded chunks, UTF-16 ----------------------------------------------------------


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(\w+\s?)*x", r"(?:a|b+)*", r"(x|y)\1", r"cuInit.*(failed|error)",
                                     r"\S+$", r"a{1,5000}b"])
def test_the_validator_rejects_super_linear_signatures(tmp_path: Path, pattern: str) -> None:
    from glmcompat.matrix.schema import load_file
    from glmcompat.model.errors import MatrixError

    m = tmp_path / "sig.toml"
    m.write_text('schema = 1\n[[signature]]\nid = "x"\npattern = ' + json.dumps(pattern) +
                 '\ncause = "c"\nremedy = "r"\nevidence = "inferred"\nsource = "s"\n')
    with pytest.raises(MatrixError, match="not linear-time"):
        load_file(m)


def test_every_shipped_signature_is_linear_time() -> None:
    from glmcompat.matrix.load import load_facts
    from glmcompat.model.signatures import linear_time_problem

    for s in load_facts().rows("signature"):
        assert linear_time_problem(s.pattern) is None, s.id


def test_explain_is_linear_on_hostile_lines(tmp_path: Path) -> None:
    """`cuInit.*(failed|error)` cost 113 ms per 8 KB line: 5 MB of such lines took 69 s."""
    from glmcompat.matrix.load import load_facts
    from glmcompat.model.signatures import scan_lines

    sigs = load_facts().rows("signature")
    units = ["cuInit", "cuInit ", "CUDA initialization: ", "Could not load this library: ", "vllm/", "vllm/_",
             "'_OpNamespace' '_C' object has no attribute '", "operator _C::", "Required: 1", "libcudart.so."]

    def run(width: int) -> None:  # ~20 KB, then ~80 KB, of the worst lines we know: lines four times as long
        scan_lines([(u * (width // len(u) + 1))[:width] for u in units], sigs)

    ratio = growth(run, 2048)
    assert ratio < LINEAR, f"lines four times as long took {ratio:.1f} times as long (linear: 4)"


def test_log_lines_reads_in_bounded_chunks() -> None:
    """A log line of any length is cut at MAX_LINE characters while it streams; memory stays bounded."""
    from glmcompat.model.signatures import MAX_LINE, log_lines

    class Endless:
        def __init__(self) -> None:
            self.left = 64  # chunks of 1 MiB: a 64 MiB line, then a short one
            self.biggest = 0

        def read(self, n: int) -> bytes:
            self.biggest = max(self.biggest, n)
            if self.left == 0:
                return b"\nKeyError: 'glm_moe_dsa'\n" if self.left == 0 and not getattr(self, "done", False) \
                    and not setattr(self, "done", True) else b""
            self.left -= 1
            return b"x" * n

    src = Endless()
    got = list(log_lines(src, chunk=1 << 20))
    assert [len(x) for x in got] == [MAX_LINE, len("KeyError: 'glm_moe_dsa'")]
    assert src.biggest == 1 << 20


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
def test_explain_reads_utf16_logs(tmp_path: Path, codec: str) -> None:
    """UTF-16 logs (Windows tools, PowerShell redirection) matched nothing."""
    log = tmp_path / "server.log"
    text = "starting\r\nRuntimeError: operator torchvision::nms does not exist\r\nKeyError: 'glm_moe_dsa'\r\n"
    log.write_bytes(text.encode(codec))
    r = run_cli("explain", str(log), "--json")
    assert r.returncode == 1, r.stderr
    found = [(s["id"], s["line"]) for s in json.loads(r.stdout)["signatures"]]
    assert found == [("torchvision-nms-missing", 2), ("model-type-unknown", 3)]


# --- small items ----------------------------------------------------------------------------------------------


def test_matrix_probe_keeps_the_file_mode(tmp_path: Path) -> None:
    """`matrix probe` rewrote kernels.toml with mode 600 (its temporary file's)."""
    from glmcompat.matrix.curate import add_row
    from glmcompat.ops.refresh.probes import abi_row
    from glmcompat.ops.wheelprobe import AbiResult, MissingSymbol, ModuleAbi

    kernels = tmp_path / "kernels.toml"
    kernels.write_bytes((ROOT / "glmcompat" / "matrix" / "data" / "kernels.toml").read_bytes())
    os.chmod(kernels, 0o644)
    link = tmp_path / "link.toml"
    link.symlink_to(kernels)
    mod = ModuleAbi("pkg/_C.so", ["libc10.so"], [12], 10, [MissingSymbol("_ZN3c101xEv", "_ZN3c101xEv")])
    res = AbiResult("sgl-kernel", "0.0.1", "2.10.0", "w.whl", "t.whl", [mod], 100, [12],
                    bytes_fetched=1, bytes_total=2, seconds=0.1, cached=False)
    assert add_row(link, "abi_probe", abi_row(res)) is not None
    assert stat.S_IMODE(kernels.stat().st_mode) == 0o644
    assert link.is_symlink() and 'version = "0.0.1"' in kernels.read_text()


def test_error_verdicts_are_never_cached(tmp_path: Path) -> None:
    """Only a verdict (exit 0 or 1) is stored for the warm path; a failure is reported afresh every time."""
    bad = tmp_path / "requirements.txt"
    bad.write_text(f"torch=={BIG}\n")
    for _ in range(2):
        r = run_cli("check", str(bad), "--target", "sm120")
        assert r.returncode == 2 and "invalid requirement" in one_error_line(r)
    verdicts = Path(os.environ["GLMCOMPAT_CACHE_DIR"]) / "verdicts"
    assert not verdicts.exists() or not any(verdicts.iterdir())
