"""The warm `check` fast path (glmcompat.cli.fastpath): a cached verdict is exactly what the full path prints
and exits with, on every fixture; it is never used once anything the verdict read has changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import LOCKS, run_cli

FIX = Path(__file__).parents[1] / "fixtures"
CASES = [
    (LOCKS / "glm5-sglang-0.5.9" / "uv.lock", ["--target", "sm120", "--model", "glm_moe_dsa"]),
    (LOCKS / "glm5-sglang-0.5.9" / "requirements.txt", ["--target", "sm103", "--json"]),
    (LOCKS / "glm5-torch-2.10.0" / "pylock.toml", ["--target", "sm90"]),
    (FIX / "formats" / "s1" / "requirements.txt", ["--target", "sm90"]),
    (FIX / "formats" / "mistral-poetry" / "poetry.lock", ["--target", "sm120", "--json"]),
    (FIX / "formats" / "vllm-cuda" / "cuda.txt", ["--target", "sm90", "--allow-unknown"]),
]


@pytest.mark.parametrize("path,args", CASES, ids=[f"{p.parent.name}/{p.name}" for p, _ in CASES])
def test_cached_verdict_is_the_full_verdict(tmp_path, path, args):
    if not path.exists():
        pytest.skip(f"fixture {path} not present")
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    full = run_cli("check", str(path), *args, env=env)
    assert not list((tmp_path / "cache").glob("verdicts/*")) or full.returncode in (0, 1)
    fast = run_cli("check", str(path), *args, env=env)
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.returncode, full.stdout, full.stderr)
    if full.returncode in (0, 1):
        assert list((tmp_path / "cache").glob("verdicts/*")), "the full path stored its verdict"
    # and the cold full path again, in a fresh cache, agrees too
    cold = run_cli("check", str(path), *args, env={"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cold")})
    assert (cold.returncode, cold.stdout) == (full.returncode, full.stdout)


def test_an_edited_include_invalidates_the_cached_verdict(tmp_path):
    d = tmp_path / "proj"
    shutil.copytree(FIX / "formats" / "s1", d)
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    first = run_cli("check", "requirements.txt", "--target", "sm90", cwd=d, env=env)
    assert first.returncode == 1  # -r base.txt brings sgl-kernel 0.3.21 next to torch 2.10.0
    again = run_cli("check", "requirements.txt", "--target", "sm90", cwd=d, env=env)
    assert again.returncode == 1 and again.stdout == first.stdout
    (d / "base.txt").write_text("sgl-kernel==0.3.21\ntorch==2.9.1\n")
    (d / "requirements.txt").write_text((d / "requirements.txt").read_text().replace("torch==2.10.0", ""))
    fixed = run_cli("check", "requirements.txt", "--target", "sm90", cwd=d, env=env)
    assert fixed.returncode == 0, fixed.stdout
    (d / "base.txt").write_text("sgl-kernel==0.3.21\ntorch==2.10.0\n")  # only the include changes
    broken = run_cli("check", "requirements.txt", "--target", "sm90", cwd=d, env=env)
    assert broken.returncode == 1, broken.stdout


def test_the_pyproject_beside_the_lock_is_part_of_the_verdict(tmp_path):
    """Without --target, the targets come from [tool.glmcompat] in the pyproject.toml beside the lock."""
    d = tmp_path / "proj"
    d.mkdir()
    shutil.copy(LOCKS / "glm5-sglang-0.5.9" / "requirements.txt", d / "requirements.txt")
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    (d / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n[tool.glmcompat]\ntargets = ["sm103"]\n')
    assert run_cli("check", "requirements.txt", cwd=d, env=env).returncode == 1  # no sm_103 code in sgl-kernel
    assert run_cli("check", "requirements.txt", cwd=d, env=env).returncode == 1
    (d / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n[tool.glmcompat]\ntargets = ["sm90"]\n')
    assert run_cli("check", "requirements.txt", cwd=d, env=env).returncode == 0


def test_colour_follows_no_color_and_force_color(tmp_path):
    """FORCE_COLOR colours even a pipe, NO_COLOR wins over it; the cached verdict keeps each apart."""
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    lock = str(LOCKS / "glm5-sglang-0.5.9" / "requirements.txt")
    plain = run_cli("check", lock, "--target", "sm90", env=env)
    forced = run_cli("check", lock, "--target", "sm90", env={**env, "FORCE_COLOR": "1"})
    off = run_cli("check", lock, "--target", "sm90", env={**env, "FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\033[" not in plain.stdout and "\033[" in forced.stdout and off.stdout == plain.stdout
    again = run_cli("check", lock, "--target", "sm90", env={**env, "FORCE_COLOR": "1"})
    assert again.stdout == forced.stdout


REALWORLD = FIX / "realworld"
RW_ROWS = [line.split("\t") for line in (REALWORLD / "expected.tsv").read_text().splitlines()
           if line.strip() and not line.startswith("#")]
FORMAT_FILES = sorted(p for p in (FIX / "formats").rglob("*") if p.is_file() and not p.name.startswith(("README", "SOURCE")))


@pytest.mark.parametrize("case,file,target,want,args,why", RW_ROWS, ids=[f"{r[0]}-{r[2]}" for r in RW_ROWS])
def test_cached_verdict_is_the_full_verdict_on_real_files(tmp_path, case, file, target, want, args, why):
    """Every real-world check fixture: the second run (answered from the verdict cache) prints the same bytes
    and exits with the same code as the first (the full path)."""
    extra = [] if args == "-" else args.split()
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    full = run_cli("check", file, "--target", target, *extra, cwd=REALWORLD / case, env=env)
    fast = run_cli("check", file, "--target", target, *extra, cwd=REALWORLD / case, env=env)
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.returncode, full.stdout, full.stderr)
    assert full.returncode == int(want)
    if full.returncode in (0, 1):
        assert list((tmp_path / "cache").glob("verdicts/*")), "the full path stored its verdict"


@pytest.mark.parametrize("path", FORMAT_FILES, ids=[f"{p.parent.name}/{p.name}" for p in FORMAT_FILES])
def test_cached_verdict_is_the_full_verdict_on_every_format_fixture(tmp_path, path):
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    full = run_cli("check", str(path), "--target", "sm120", "--json", env=env)
    fast = run_cli("check", str(path), "--target", "sm120", "--json", env=env)
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.returncode, full.stdout, full.stderr)


@pytest.mark.parametrize("flags", [["--color", "always"], ["--color", "never"], ["-q"], ["--quiet", "--color", "always"]])
def test_color_and_quiet_flags_are_answered_and_kept_apart(tmp_path, flags):
    """`--color` and `-q` change the bytes printed: each combination has its own cached verdict, equal to the
    full path's, and the fast path answers it (a stored verdict exists after the first run)."""
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    lock = str(LOCKS / "glm5-sglang-0.5.9" / "requirements.txt")
    base = run_cli("check", lock, "--target", "sm90", env=env)
    full = run_cli("check", lock, "--target", "sm90", *flags, env=env)
    fast = run_cli("check", lock, "--target", "sm90", *flags, env=env)
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.returncode, full.stdout, full.stderr)
    assert len([p for p in (tmp_path / "cache").glob("verdicts/*") if not p.name.startswith("names-")]) == 2
    if "always" in flags:
        assert "\033[" in full.stdout
    if "-q" in flags or "--quiet" in flags:
        assert full.stdout != base.stdout


def test_the_fast_path_knows_the_shared_flags():
    from glmcompat.cli.fastpath import key

    lock = str(LOCKS / "glm5-sglang-0.5.9" / "requirements.txt")
    assert key([lock, "--target", "sm90", "--color", "never", "-q"]) is not None
    assert key([lock, "--target", "sm90", "--color", "sometimes"]) is None  # the full path reports the bad value
    assert key([lock, "--target", "sm90", "-v"]) is None  # -v prints timings to stderr: never cached


def test_a_verdict_is_not_stored_when_an_input_changed_during_the_run(tmp_path, monkeypatch):
    """The full path keys its verdict by the inputs as it read them: a file edited while it ran is not recorded
    against its new bytes (the next run judges it afresh)."""
    from glmcompat.cli import fastpath
    from glmcompat.cli.startup import load
    from glmcompat.matrix import readlog

    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    lock = tmp_path / "requirements.txt"
    lock.write_text("torch==2.9.1\n")
    argv = [str(lock), "--target", "sm90"]
    before = fastpath.key(argv)
    assert before is not None
    with fastpath.reading(argv) as log:
        lock.read_bytes()
    lock.write_text("torch==2.10.0\n")  # edited while the run judged the old bytes
    fastpath.store(argv, before, log, "verdict of the old bytes\n", "", 0)
    assert not (tmp_path / "cache" / "verdicts").exists()
    before = fastpath.key(argv)
    assert before is not None
    side = tmp_path / "pyproject.toml"
    with fastpath.reading(argv) as log:  # what the run read: the named lock, and the absent file beside it
        lock.read_bytes()
        assert not readlog.is_file(side)  # as the run probes it
    fastpath.store(argv, before, log, "verdict\n", "", 0)
    (record,) = (tmp_path / "cache" / "verdicts").iterdir()
    deps, out, _, rc = load(fastpath.HEADER, before, str(record)) or ({}, "", "", -1)
    assert (out, rc) == ("verdict\n", 0)
    assert list(deps) == [str(side)]  # the named file is in the key already: not hashed a second time
    assert fastpath.lookup(argv) == 0


def test_the_code_fingerprint_sees_an_edited_module_or_matrix_file(tmp_path):
    """The shipped matrix is keyed as the code is (size and mtime of each file), so the start-up paths need not
    hash it; an edit to either, or a new file, is another fingerprint."""
    import os

    from glmcompat.matrix import locations

    (tmp_path / "data").mkdir()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "data" / "m.toml").write_text("[x]\n")
    (tmp_path / "__pycache__" / "a.py").write_text("ignored\n")

    def walk() -> list[str]:
        parts: list[str] = []
        locations._walk(str(tmp_path), "", parts)
        return parts

    first = walk()
    assert [p.split(":")[0] for p in first] == ["a.py", "data/m.toml"]
    st = (tmp_path / "data" / "m.toml").stat()
    (tmp_path / "data" / "m.toml").write_text("[y]\n")  # same size: the mtime tells
    os.utime(tmp_path / "data" / "m.toml", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert walk() != first
    (tmp_path / "data" / "n.toml").write_text("")
    assert len(walk()) == 3


def test_platform_is_answered_from_the_cache(tmp_path, monkeypatch, capsys):
    """`check --platform aarch64` run twice: the second is answered from the cache with the same bytes and exit
    code (--platform was missing from the start-up path's options, so every such check ran the full path)."""
    from glmcompat.cli import fastpath

    env = {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    argv = [str(LOCKS / "glm5-sglang-0.5.9" / "uv.lock"), "--target", "sm100", "--platform", "aarch64"]
    full = run_cli("check", *argv, env=env)
    assert full.returncode == 1 and "Linux aarch64 only" in full.stdout, full.stderr
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    capsys.readouterr()
    assert fastpath.lookup(argv) == full.returncode  # a hit, here without the full path's modules
    assert capsys.readouterr() == (full.stdout, full.stderr)
    again = run_cli("check", *argv, env=env)
    assert (again.returncode, again.stdout, again.stderr) == (full.returncode, full.stdout, full.stderr)


@pytest.mark.parametrize("command", ["check", "lock"])
def test_the_replayed_options_are_the_parsers(command):
    """The start-up paths' options (glmcompat.cli.startup.REPLAY) are declared once and held to the command's parser:
    every option the parser takes is answered by the start-up path (as a value option or a flag, as the parser
    takes it) or named as the full path's (FULL_PATH); nothing is replayed that the parser does not take."""
    import importlib

    from glmcompat.cli import COMMANDS
    from glmcompat.cli.startup import FULL_PATH, REPLAY

    values, flags = REPLAY[command]
    parser = importlib.import_module(COMMANDS[command][0]).build_parser()
    taken: dict[str, bool] = {}  # option -> whether it takes a value
    for action in parser._actions:
        for s in action.option_strings:
            taken[s] = action.nargs != 0
    for s, takes_value in taken.items():
        if s in FULL_PATH[command]:
            assert s not in values | flags, s
        else:
            assert s in (values if takes_value else flags), f"{command} {s}: neither replayed nor FULL_PATH's"
    assert values <= {s for s, v in taken.items() if v}
    assert flags - {"-qq"} <= {s for s, v in taken.items() if not v}  # -qq: -q twice, as argparse counts it
    assert FULL_PATH[command] <= set(taken)
    if command == "lock":  # the speculation's prediction reads a subset of them (an unknown one costs a miss)
        from glmcompat.ops.speculate import _VALUE_OPTIONS

        assert _VALUE_OPTIONS <= values


PLANTED = """\
import sys
from pathlib import Path

from glmcompat.cli.commands import check
from glmcompat.matrix import readlog

real = check.no_isolation


def planted(lock):  # a reader the full path gained, named in no list: one file read, one probed
    Path(lock).with_name("extra.cfg").read_bytes()
    readlog.exists(Path(lock).with_name("probe.cfg"))  # an existence probe asks through the read log
    return real(lock)


check.no_isolation = planted
from glmcompat.cli import main

sys.exit(main(sys.argv[1:]))
"""


def test_an_input_no_list_names_is_in_the_record(tmp_path, monkeypatch, capsys):
    """The recorded inputs are what the full run read (its read log), not a list kept by hand: a reader planted in
    the full path -- one file read, one path probed and absent -- is part of the record with no other change, so the
    recorded verdict is answered while both are as they were and never once either changed."""
    import os
    import subprocess
    import sys

    from glmcompat.cli import fastpath

    d = tmp_path / "proj"
    d.mkdir()
    lock = d / "requirements.txt"
    lock.write_text("torch==2.9.1\nsgl-kernel==0.3.21\n")
    (d / "extra.cfg").write_text("one\n")
    cache = tmp_path / "cache"
    argv = ["requirements.txt", "--target", "sm90"]
    full = subprocess.run([sys.executable, "-c", PLANTED, "check", *argv], cwd=d, capture_output=True, text=True,
                          env={**os.environ, "GLMCOMPAT_CACHE_DIR": str(cache)}, timeout=120)
    assert full.returncode == 0, full.stderr
    monkeypatch.chdir(d)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(cache))
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    capsys.readouterr()
    assert fastpath.lookup(argv) == 0 and capsys.readouterr().out == full.stdout  # both as they were: a hit
    (d / "extra.cfg").write_text("two\n")
    assert fastpath.lookup(argv) is None  # the file the planted reader read changed: a miss
    (d / "extra.cfg").write_text("one\n")
    assert fastpath.lookup(argv) == 0
    (d / "probe.cfg").write_text("")
    assert fastpath.lookup(argv) is None  # the path it probed appeared: a miss
