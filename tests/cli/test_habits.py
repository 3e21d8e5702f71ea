"""The habits every command shares, as uv and pre-commit have them: ``--color {auto,always,never}`` (the flag
beats NO_COLOR / FORCE_COLOR / TERM=dumb), ``-q`` / ``-v``, one ``--python`` (``3.11`` or ``cp311``), one
``--index-url`` / ``--no-cache``, and progress for the wheel probes on stderr.

Real processes where a terminal matters (a pseudo-terminal stands in for one), in-process calls elsewhere;
fake wheels built with g++ and served over HTTP with range requests; the real uv on a local index.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from glmcompat.cli import COMMANDS, main
from glmcompat.cli.commands._common import (
    Output,
    paint_line,
    python_minor,
    python_tag,
    use_color,
)
from glmcompat.model.errors import InputError

from tests.cli import test_schemas as _js
from tests.conftest import FIXTURES, LOCKS, ROOT, run_cli

refresh_index = _js.refresh_index  # a fixture: the fake index of tests/ops/test_refresh.py as make_index's

ANSI = "\033["
MATRIX_ACTIONS = ("validate", "show", "schema", "probe", "refresh", "audit")
EVERY = [(n, a) if a else (n,) for n in COMMANDS for a in (MATRIX_ACTIONS if n == "matrix" else ("",))]
READS_INDEX = [("abi",), ("arch",), ("upgrade",), ("lock",), ("matrix", "probe"), ("matrix", "refresh"),
               ("matrix", "audit")]
LOCK = str(LOCKS / "unpinned-torch" / "uv.lock")  # an unsafe lock: errors, evidence, hints


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def _help(*argv: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return buf.getvalue()


def _env(**extra: str) -> dict[str, str]:
    """The environment without the colour variables of the developer's shell, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    return {**env, **extra}


def run_on_tty(*args: str, stream: str = "stdout", env: dict[str, str] | None = None,
               timeout: float = 120) -> tuple[int, str, str]:
    """``python -m glmcompat ARGS`` with ``stream`` (stdout or stderr) on a pseudo-terminal and the other on a
    pipe: (exit code, what the terminal showed, what the pipe got)."""
    master, slave = pty.openpty()
    other = subprocess.PIPE
    p = subprocess.Popen([sys.executable, "-m", "glmcompat", *args], stdin=subprocess.DEVNULL,
                         stdout=slave if stream == "stdout" else other, stderr=slave if stream == "stderr" else other,
                         env=env if env is not None else os.environ.copy())
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    piped = (p.stderr if stream == "stdout" else p.stdout)
    assert piped is not None
    rest = piped.read().decode()
    rc = p.wait(timeout=timeout)
    t.join(timeout=10)
    os.close(master)
    return rc, b"".join(chunks).decode().replace("\r\n", "\n"), rest


# ------------------------------------------------------------------------------------------------
# Every command takes the same options
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", EVERY, ids=" ".join)
def test_every_command_takes_color_quiet_and_verbose(argv: tuple[str, ...]) -> None:
    text = _help(*argv)
    assert "--color WHEN" in text and "-q, --quiet" in text and "-v, --verbose" in text, text


@pytest.mark.parametrize("argv", READS_INDEX, ids=" ".join)
def test_every_command_that_reads_the_index_takes_the_index_options(argv: tuple[str, ...]) -> None:
    text = _help(*argv)
    assert "--index-url URL" in text and "--no-cache" in text, text
    assert text.count("--index-url URL") == 2  # once in usage, once in the options: one definition, not two


def test_the_python_option_means_one_thing_everywhere() -> None:
    """Every --python (and abi's --torch-python) takes X.Y and names the target CPython minor."""
    seen = 0
    for argv in EVERY:
        text = _help(*argv)
        for m in re.finditer(r"^\s+(--(?:torch-)?python) (\S+)\s+(.*)$", text, re.M):
            assert m.group(2) == "X.Y" and "3.11 or cp311" in text, (argv, m.group(0))
            seen += 1
    assert seen >= 6  # abi (2), arch, lock, upgrade, matrix probe


@pytest.mark.parametrize("argv", [("check", LOCK, "--target", "sm120"), ("targets",), ("matrix", "validate"),
                                  ("abi", "x==1", "--torch", "2.9.1"), ("lock", "--target", "sm120")])
def test_quiet_and_verbose_together_is_a_usage_error(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    rc, out, err = call(capsys, *argv, "-q", "-v")
    assert rc == 2 and out == "" and err.startswith("error: glmcompat ") and "not allowed with" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("argv", [("check", LOCK, "--target", "sm120"), ("targets",), ("verify",),
                                  ("explain", "-")])
def test_a_bad_color_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    rc, out, err = call(capsys, *argv, "--color", "sometimes")
    assert rc == 2 and out == "" and "'sometimes'" in err and "auto" in err and err.count("\n") == 1


# ------------------------------------------------------------------------------------------------
# --color: one decision, the flag beats the environment
# ------------------------------------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("mode", "env", "tty", "expected"), [
    ("auto", {}, False, False),
    ("auto", {}, True, True),
    ("auto", {"TERM": "dumb"}, True, False),
    ("auto", {"NO_COLOR": "1"}, True, False),
    ("auto", {"FORCE_COLOR": "1"}, False, True),
    ("auto", {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),
    ("auto", {"NO_COLOR": ""}, True, True),  # an empty NO_COLOR is unset (no-color.org)
    ("always", {"NO_COLOR": "1", "TERM": "dumb"}, False, True),
    ("never", {"FORCE_COLOR": "1"}, True, False),
])
def test_use_color(monkeypatch: pytest.MonkeyPatch, mode: str, env: dict[str, str], tty: bool, expected: bool) -> None:
    for k in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    stream = _Tty() if tty else io.StringIO()
    assert use_color(mode, stream) is expected


def test_check_colour_flag_beats_the_environment(tmp_path: Path) -> None:
    """On a pipe: --color always colours even with NO_COLOR, --color never does not even with FORCE_COLOR, and
    without the flag the bytes are those the check has always printed (its verdict cache keeps each apart)."""
    env = _env(GLMCOMPAT_CACHE_DIR=str(tmp_path / "cache"))
    args = ("check", LOCK, "--target", "sm120")
    plain = run_cli(*args, env=env)
    forced = run_cli(*args, env={**env, "FORCE_COLOR": "1"})
    always = run_cli(*args, "--color", "always", env={**env, "NO_COLOR": "1"})
    never = run_cli(*args, "--color", "never", env={**env, "FORCE_COLOR": "1"})
    assert {plain.returncode, forced.returncode, always.returncode, never.returncode} == {1}
    assert ANSI not in plain.stdout and ANSI in forced.stdout
    assert always.stdout == forced.stdout and never.stdout == plain.stdout
    assert re.sub(r"\033\[[0-9;]*m", "", always.stdout) == plain.stdout  # colour is all it adds


@pytest.mark.slow
def test_check_on_a_terminal_colours_unless_term_is_dumb_or_never(tmp_path: Path) -> None:
    env = _env(GLMCOMPAT_CACHE_DIR=str(tmp_path / "cache"), TERM="xterm")
    args = ("check", LOCK, "--target", "sm120")
    rc, shown, _ = run_on_tty(*args, env=env)
    assert rc == 1 and ANSI + "1;31merror" in shown
    rc, dumb, _ = run_on_tty(*args, env={**env, "TERM": "dumb"})
    assert rc == 1 and ANSI not in dumb and dumb.startswith("error: ")
    rc, never, _ = run_on_tty(*args, "--color", "never", env=env)
    assert rc == 1 and never == dumb


def test_colour_in_the_other_commands(tmp_path: Path) -> None:
    """The labels uv colours (error, warning, hint, ok) are coloured the same way in every command's text."""
    log = tmp_path / "server.log"
    log.write_text("RuntimeError: operator torchvision::nms does not exist\n")
    r = run_cli("explain", str(log), "--color", "always", env=_env())
    assert r.returncode == 1 and f"{ANSI}1;36mhint{ANSI}0m:" in r.stdout
    r = run_cli("explain", str(log), env=_env())
    assert ANSI not in r.stdout and "  hint:    " in r.stdout
    r = run_cli("matrix", "validate", "--color", "always", env=_env())
    assert r.returncode == 0 and r.stdout.startswith(f"{ANSI}1;32mok{ANSI}0m: ")


def test_paint_line_colours_only_a_leading_label() -> None:
    assert paint_line("  hint: pin torch", True) == f"  {ANSI}1;36mhint{ANSI}0m: pin torch"
    assert paint_line("error[abi] [torch]: x", True).startswith(f"{ANSI}1;31merror{ANSI}0m[abi]")
    assert paint_line("errors: 3", True) == "errors: 3" and paint_line("  sm_90 ok", True) == "  sm_90 ok"
    assert paint_line("hint: x", False) == "hint: x"


# ------------------------------------------------------------------------------------------------
# -q and -v
# ------------------------------------------------------------------------------------------------


def test_check_quiet_keeps_the_verdict_findings_and_hints_and_drops_the_notes(capsys: pytest.CaptureFixture[str]) -> None:
    rc, full, _ = call(capsys, "check", LOCK, "--target", "sm120")
    rcq, quiet, errq = call(capsys, "check", LOCK, "--target", "sm120", "-q")
    assert rc == rcq == 1 and errq == ""
    assert "evidence (" in full and "evidence (" not in quiet
    kept = [line for line in full.splitlines() if not line.lstrip().startswith(("evidence (", "evidence: ", "note: "))]
    assert quiet.splitlines() == kept and quiet.startswith("error: ") and "hint: " in quiet
    rc, js, _ = call(capsys, "check", LOCK, "--target", "sm120", "--json")
    rcq, jsq, _ = call(capsys, "check", LOCK, "--target", "sm120", "--json", "-q")
    assert jsq == js  # -q never changes JSON


def test_check_verbose_adds_detail_on_stderr_and_the_full_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = call(capsys, "check", LOCK, "--target", "sm120")
    rcv, outv, errv = call(capsys, "check", LOCK, "--target", "sm120", "-v")
    assert rc == rcv == 1 and err == ""

    def bare(text: str) -> list[str]:  # the verdict without its evidence lines
        return [ln for ln in text.splitlines() if not ln.lstrip().startswith(("evidence", "reproduce: "))]

    assert bare(out) == bare(outv) and len(outv) > len(out)  # -v: the same verdict, every evidence source in full
    assert re.fullmatch(r"checked \S+uv\.lock \(uv\.lock, \d+ environment\(s\)\) for sm120 in \d+\.\d{3} s\n", errv), errv


def test_targets_quiet_drops_the_footnote(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = call(capsys, "targets")
    _, quiet, _ = call(capsys, "targets", "-q")
    assert "SASS sm_XY runs" in out and "SASS sm_XY runs" not in quiet and quiet.splitlines() == out.splitlines()[:len(quiet.splitlines())]


def test_output_progress_rules() -> None:
    assert Output(quiet=0, verbose=0, err=_Tty()).progress
    assert not Output(quiet=0, verbose=0, err=io.StringIO()).progress
    assert Output(quiet=0, verbose=1, err=io.StringIO()).progress
    assert not Output(quiet=1, verbose=0, err=_Tty()).progress
    err = io.StringIO()
    o = Output(verbose=1, err=err)
    o.detail("a")
    Output(err=err).detail("b")
    assert err.getvalue() == "a\n"


@pytest.mark.slow
def test_refresh_progress_on_a_terminal_and_never_with_quiet(capsys: pytest.CaptureFixture[str], refresh_index: Any,
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for quiet in (False, True):
        d = _js._matrix_copy(tmp_path / str(quiet))
        tty = _Tty()
        monkeypatch.setattr(sys, "stderr", tty)
        rc = main(["matrix", "refresh", "--matrix", str(d), "--package", "sglang-kernel", *(["-q"] if quiet else [])])
        assert rc == 0
        assert ("refresh [" in tty.getvalue()) is not quiet, tty.getvalue()
        assert "sglang-kernel: " in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------
# --python: 3.11 and cp311 are one thing
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "minor"), [
    ("3.11", "3.11"), ("cp311", "3.11"), ("cp3.11", "3.11"), ("py311", "3.11"), ("python3.12", "3.12"),
    ("cpython3.13", "3.13"), ("cpython@3.10", "3.10"), ("CP312", "3.12"), (" 3.9 ", "3.9"), ("310", "3.10"),
    ("3.0", "3.0"),
])
def test_python_minor(value: str, minor: str) -> None:
    assert python_minor(value) == minor
    assert python_tag(minor) == "cp" + minor.replace(".", "")


@pytest.mark.parametrize("value", ["", "3", "3.11.4", "cp27", "2.7", "cp3", "pypy3.11", "3.x", "cp3111", "3.011",
                                   "cp311-abi3", "py3", "latest", "3.١١"])
def test_python_minor_refuses(value: str) -> None:
    with pytest.raises(InputError, match=re.escape(repr(value))):
        python_minor(value)


@pytest.mark.parametrize("argv", [
    ("abi", "x==1", "--torch", "2.9.1"), ("arch", "x==1"), ("lock", "--target", "sm120"),
    ("upgrade", "--target", "sm120"), ("matrix", "probe", "x==1", "--arch"),
])
def test_a_bad_python_is_one_line_naming_the_value(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    rc, out, err = call(capsys, *argv, "--python", "2.7")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: glmcompat {' '.join(argv[:2]) if argv[0] == 'matrix' else argv[0]}: argument --python: ")
    assert "'2.7'" in err and "3.11 or cp311" in err


# ------------------------------------------------------------------------------------------------
# The wheel probes: --python, -q, progress, --no-cache (fake wheels over HTTP)
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.abifakes import HAVE_GXX, LocalServer, build_fakes

    if not HAVE_GXX:
        pytest.skip("needs g++ to build the fake wheels")
    with LocalServer(build_fakes(tmp_path_factory.mktemp("fakes"))) as srv:
        yield srv


def _stable(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in ("seconds", "cached", "bytes_fetched")}


def test_probe_python_spellings_are_one(capsys: pytest.CaptureFixture[str], wheels: Any) -> None:
    runs = [call(capsys, "abi", "ext==1.0", "--torch", "9.1.0", "--index-url", wheels.base, "--json", "--no-cache", *py)
            for py in ((), ("--python", "3.11"), ("--python", "cp311"), ("--python", "cp311", "--torch-python", "3.11"))]
    assert {rc for rc, _, _ in runs} == {1}
    docs = [_stable(json.loads(out)) for _, out, _ in runs]
    assert all(d == docs[0] for d in docs) and docs[0]["torch_wheel"].endswith("-cp311-cp311-manylinux_2_28_x86_64.whl")
    rc, _, err = call(capsys, "abi", "ext==1.0", "--torch", "9.1.0", "--index-url", wheels.base, "--no-cache",
                      "--torch-python", "cp312")
    assert rc == 2 and "torch==9.1.0 has no wheel for cp312 on manylinux_x86_64" in err, err  # 3.12 means cp312


def test_probe_quiet_drops_the_bytes_line_not_the_verdict(capsys: pytest.CaptureFixture[str], wheels: Any) -> None:
    base = ("abi", "ext==1.0", "--torch", "9.1.0", "--index-url", wheels.base)
    rc, out, _ = call(capsys, *base)
    rcq, quiet, errq = call(capsys, *base, "-q")
    assert rc == rcq == 1 and errq == ""
    assert re.search(r"^(cached|fetched .*), \d+\.\d\d s$", out, re.M)
    assert not re.search(r"^(cached|fetched .*), \d+\.\d\d s$", quiet, re.M)
    assert "INCOMPATIBLE: torch 9.1.0 does not export 1 symbol" in quiet and "hint: pin torch" in quiet


def test_probe_progress_on_stderr_with_verbose_naming_the_wheels_and_bytes(capsys: pytest.CaptureFixture[str],
                                                                           wheels: Any) -> None:
    base = ("arch", "ext==1.0", "--target", "sm120", "--index-url", wheels.base, "--no-cache")
    rc, out, err = call(capsys, *base)
    assert rc == 0 and err == ""  # not a terminal, no -v: no progress
    rcv, outv, errv = call(capsys, *base, "-v")
    assert rcv == 0 and re.sub(r"\d+\.\d\d s", "", outv) == re.sub(r"\d+\.\d\d s", "", out)
    lines = errv.splitlines()
    assert lines[0] == f"reading ext 1.0 (cp311) for Linux x86_64 from {wheels.base}"
    m = re.fullmatch(r"read ext-1\.0-cp310-abi3-manylinux2014_x86_64\.whl: fetched \d+\.\d kB of \d+\.\d kB "
                     r"\((\d+\.\d)%\) \(\d+\.\d\d s\)", lines[1])
    assert m and float(m.group(1)) <= 100.0, lines
    rc, js, errj = call(capsys, *base, "-v", "--json")
    assert json.loads(js)["ok"] is True and errj.count("\n") == 2  # progress never mixes with JSON on stdout


@pytest.mark.slow
def test_probe_progress_on_a_terminal_and_never_with_quiet(wheels: Any, tmp_path: Path) -> None:
    env = _env(GLMCOMPAT_CACHE_DIR=str(tmp_path / "c"))
    base = ("abi", "ext==1.0", "--torch", "9.0.0", "--index-url", wheels.base)
    rc, shown, out = run_on_tty(*base, stream="stderr", env=env)
    # what the terminal shows: a progress bar rewrites its line in place (\r, erase line) and is cleared at the end
    shown = "\n".join(line.split("\r")[-1].replace("\x1b[2K", "") for line in shown.split("\n"))
    assert rc == 0 and "compatible: every torch symbol" in out
    assert shown.startswith("reading ext 1.0 (cp311) and torch 9.0.0 (cp311) for Linux x86_64 from ")
    assert re.search(r"^read ext-1\.0-\S+\.whl and torch-9\.0\.0-\S+\.whl: fetched \d+\.\d [kM]B of ", shown, re.M)
    rc, shown, _ = run_on_tty(*base, stream="stderr", env=env)  # again: from the cache (no bar: nothing is read)
    assert rc == 0 and re.search(r"^read .*: cached, nothing fetched", shown, re.M) and "\r" not in shown
    rc, shown, out = run_on_tty(*base, "-q", stream="stderr", env=env)
    assert rc == 0 and shown == "" and "compatible: every torch symbol" in out


def test_no_cache_neither_reads_nor_writes(capsys: pytest.CaptureFixture[str], wheels: Any, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "c"
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(cache))
    base = ("arch", "ext==1.0", "--index-url", wheels.base, "--json")
    assert json.loads(call(capsys, *base, "--no-cache")[1])["cached"] is False
    assert not cache.exists() or not any(cache.rglob("arch-*"))
    assert json.loads(call(capsys, *base)[1])["cached"] is False
    assert json.loads(call(capsys, *base)[1])["cached"] is True
    before = wheels.requests
    assert json.loads(call(capsys, *base, "--no-cache")[1])["cached"] is False and wheels.requests > before


# ------------------------------------------------------------------------------------------------
# --index-url and --no-cache
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [("abi", "x==1", "--torch", "2.9.1"), ("arch", "x==1"), ("lock", "--target", "sm120"),
                                  ("upgrade", "--target", "sm120"), ("matrix", "probe", "x==1", "--arch"),
                                  ("matrix", "refresh", "--dry-run"), ("matrix", "audit")])
@pytest.mark.parametrize("url", ["index.invalid/simple", "ftp://index.invalid/simple", "https://", "file:///tmp/x"])
def test_a_bad_index_url_is_one_line(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], url: str) -> None:
    rc, out, err = call(capsys, *argv, "--index-url", url)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "argument --index-url" in err and repr(url) in err


@pytest.mark.parametrize("argv", [("upgrade", "--target", "sm120", "--exclude-newer", "2026-11-29"),
                                  ("matrix", "refresh", "--dry-run", "--package", "torchvision")])
def test_the_index_url_reaches_the_index(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                         argv: tuple[str, ...]) -> None:
    """An index that refuses connections: exit 3, one line naming it (so the flag, not the default, was read)."""
    import glmcompat.edges.http as http

    monkeypatch.setattr(http.time, "sleep", lambda s: None)
    rc, out, err = call(capsys, *argv, "--index-url", "http://127.0.0.1:9/simple", "-q")
    assert rc == 3, err
    assert "127.0.0.1:9" in err and err.count("\n") == 1


def test_index_options_reach_uv_explicitly(monkeypatch: pytest.MonkeyPatch) -> None:
    """--index-url and --no-cache are handed on as IndexOptions: uv's environment gets them, the process's does not
    change, and no module of glmcompat rewrites os.environ to pass an option."""
    from glmcompat.edges.index import IndexOptions
    from glmcompat.edges.uv import uv_env

    monkeypatch.setenv("UV_INDEX_URL", "https://legacy.invalid/simple")
    before = dict(os.environ)
    env = uv_env(None, IndexOptions("https://a.invalid/simple", True).uv_env())
    assert env["UV_DEFAULT_INDEX"] == "https://a.invalid/simple" and env["UV_NO_CACHE"] == "1"
    assert "UV_INDEX_URL" not in env and dict(os.environ) == before
    assert IndexOptions().uv_env() == {} and uv_env(None)["UV_INDEX_URL"] == "https://legacy.invalid/simple"
    assert type(IndexOptions(no_cache=True).cache()).__name__ == "NoCache"
    rewrites = re.compile(r"os\.environ\[[^]]+\] = |os\.environ\.(pop|update|setdefault)\(|os\.putenv\(")
    for path in (ROOT / "glmcompat").rglob("*.py"):
        if "verify" in path.parts:  # the probe processes inside the serving container set their own variables
            continue
        assert not rewrites.search(path.read_text()), path

def test_lock_index_url_and_python_reach_uv(tmp_path: Path) -> None:
    """`glmcompat lock --index-url URL --python cp311` as a process: the real uv locks against that index (no
    UV_DEFAULT_INDEX in the environment), and cp311 is the minor 3.11 (requires-python, the header)."""
    from glmcompat.edges.sources import RecordedSource
    from glmcompat.matrix.load import load_facts
    from glmcompat.ops.lockgen import memoize, resolve_core
    from glmcompat.readers.formats import read_lock

    from tests.localindex import serve_wheels
    from tests.cli.commands.test_lock import VLLM, VSTACK, stack_request

    matrix = tmp_path / "matrices"
    import shutil

    shutil.copytree(ROOT / "glmcompat" / "matrix" / "data", matrix)
    facts = load_facts([matrix])
    req = stack_request(facts, VSTACK, "sm120", "glm_moe_dsa", "3.11")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_INDEX", "UV_DEFAULT_INDEX", "PIP_INDEX"))}
    env["UV_CACHE_DIR"] = str(tmp_path / "uv-cache")
    with serve_wheels(VLLM) as url:
        # the recorded resolution, seeded in the memo under the key of a lock against this index
        saved = os.environ.get("UV_DEFAULT_INDEX")
        os.environ["UV_DEFAULT_INDEX"] = url
        src = RecordedSource(FIXTURES / "resolver" / "index.json")
        res = resolve_core(facts, req, source=src)
        try:
            memoize(facts, req, res)
        finally:
            if saved is None:
                del os.environ["UV_DEFAULT_INDEX"]
            else:
                os.environ["UV_DEFAULT_INDEX"] = saved
        r = subprocess.run([sys.executable, "-m", "glmcompat", "lock", "--target", "sm120", "--engine", "vllm",
                            "--matrix", str(matrix), "--out", str(out), "--python", "cp311", "--index-url", url, "-v"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"Locked {VSTACK} for sm120 on Linux x86_64 in {out} (wrote ")
    assert f"lock: index {url}" in r.stderr
    pyproject = (out / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.11,<3.12"' in pyproject and "--python 3.11" in pyproject and "cp311" not in pyproject
    assert "127.0.0.1" not in (out / "requirements.txt").read_text()
    lock = read_lock(out / "requirements.txt")
    assert all({k: e.packages[k] for k in VLLM} == VLLM for e in lock.sets)


# ------------------------------------------------------------------------------------------------
# The shared options before the command (uv: `uv -q lock`); -q on a safe check; -qq
# ------------------------------------------------------------------------------------------------

SAFE = str(ROOT / "locks" / "glm5-sglang-0.5.9" / "sm120" / "requirements.txt")  # safe, with two warnings


@pytest.mark.parametrize("lead", [["-q"], ["-qq"], ["-v"], ["--color", "always"], ["--color=never", "-q"]],
                         ids=" ".join)
@pytest.mark.parametrize("argv", [("check", LOCK, "--target", "sm120"), ("check", SAFE, "--target", "sm120"),
                                  ("targets",), ("matrix", "validate")], ids=lambda a: " ".join(a[:2]))
def test_a_shared_option_before_the_command_is_the_same_after_it(capsys: pytest.CaptureFixture[str], lead: list[str],
                                                                 argv: tuple[str, ...]) -> None:
    def timeless(r: tuple[int, str, str]) -> tuple[int, str, str]:  # -v prints the time taken
        return r[0], r[1], re.sub(r"in \d+\.\d+ s", "in T s", r[2])

    before = timeless(call(capsys, *lead, *argv))
    after = timeless(call(capsys, *argv, *lead))
    assert before == after and before[0] in (0, 1)
    if lead == ["-q"] and argv[0] == "check":
        assert before != call(capsys, *argv)  # and it did reach the command


def test_shared_options_move_after_the_command_s_arguments() -> None:
    from glmcompat.cli import _hoist

    assert _hoist(["-q", "--color", "never", "check", "x.lock"]) == (["check", "x.lock", "-q", "--color", "never"], None)
    assert _hoist(["--index-url=https://index.invalid/simple", "--no-cache", "--python", "3.12", "abi", "x==1"]) == (
        ["abi", "x==1", "--index-url=https://index.invalid/simple", "--no-cache", "--python", "3.12"], None)
    assert _hoist(["-vv", "pip", "install", "x", "--", "y"]) == (["pip", "install", "x", "-vv", "--", "y"], None)
    assert _hoist(["check", "x", "-q"]) == (["check", "x", "-q"], None)  # after the command: untouched
    assert _hoist(["-q", "--help"]) == (["--help"], None)
    assert _hoist(["--color"])[1] == "--color expects a value"


@pytest.mark.parametrize("argv,message", [
    (("--target", "sm120", "check", LOCK), "error: unexpected argument '--target' before the command; see 'glmcompat --help'\n"),
    (("--quite", "targets"), "error: unexpected argument '--quite' before the command (did you mean '--quiet'?)\n"),
    (("-q",), None),
])
def test_before_the_command_only_the_shared_options(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                                    message: str | None) -> None:
    rc, out, err = call(capsys, *argv)
    assert (rc, out) == (2, "")
    assert err == message if message else err.startswith("usage: glmcompat [OPTIONS] COMMAND")


def test_an_option_the_command_does_not_take_is_refused_as_after_it(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = call(capsys, "--index-url", "https://index.invalid/simple", "targets")
    assert (rc, out) == (2, "") and "unexpected argument '--index-url'" in err


def test_quiet_on_a_safe_check_is_the_verdict_line_alone(capsys: pytest.CaptureFixture[str]) -> None:
    rc, full, _ = call(capsys, "check", SAFE, "--target", "sm120")
    assert rc == 0 and "⚠" in full and "hint:" in full  # the warnings, shown without -q
    rc, quiet, err = call(capsys, "-q", "check", SAFE, "--target", "sm120")
    assert (rc, err) == (0, "") and quiet == full.splitlines()[0] + "\n"
    assert quiet.startswith("ok: ") and "the stack is safe (2 warning(s))" in quiet


@pytest.mark.parametrize("argv,code", [(("check", SAFE, "--target", "sm120"), 0),
                                       (("check", LOCK, "--target", "sm120"), 1),
                                       (("check", SAFE, "--target", "sm120", "--json"), 0),
                                       (("targets",), 0)])
def test_qq_is_silent(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], code: int) -> None:
    for qq in (["-qq"], ["-q", "-q"], ["--quiet", "--quiet"]):
        assert call(capsys, *argv, *qq) == (code, "", "")
        assert call(capsys, *qq, *argv) == (code, "", "")


def test_qq_keeps_errors_on_stderr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, err = call(capsys, "-qq", "check", str(tmp_path / "missing.txt"), "--target", "sm120")
    assert (rc, out) == (2, "") and err.startswith("error: ") and "no such file" in err
    rc, out, err = call(capsys, "check", SAFE, "--target", "sm999", "-qq")
    assert (rc, out) == (2, "") and "unknown target 'sm999'" in err


def test_qq_and_the_shared_options_first_through_the_warm_check(tmp_path: Path) -> None:
    """Real processes on one verdict cache: the start-up fast path answers `glmcompat -qq check ...` and
    `glmcompat --color never -q check ...` exactly as the full path does."""
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path)}
    for lead in (["-qq"], ["--color", "never", "-q"]):
        runs = [run_cli(*lead, "check", SAFE, "--target", "sm120", env=env) for _ in range(2)]
        assert {(r.returncode, r.stdout, r.stderr) for r in runs} == {
            (0, "" if lead == ["-qq"] else runs[0].stdout, "")}
        assert len(list(tmp_path.glob("verdicts/*"))) >= 1
    assert runs[0].stdout.startswith("ok: ") and runs[0].stdout.count("\n") == 1

