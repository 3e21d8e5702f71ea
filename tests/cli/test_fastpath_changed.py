"""`check` on a uv.lock that just changed (the pre-commit hook's real case): a verdict recorded for the old bytes
answers an edit that changes nothing a verdict reads (glmcompat.readers.uvlockscan), and that answer is exactly
what the full path prints and exits with on the new bytes, on every uv.lock check fixture."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, LOCKS, run_cli, run_process
from tests.readers.test_uvlockscan import commented, files_churned, untracked_bumped

REALWORLD = FIXTURES / "realworld"
CASES = [(REALWORLD / r[0], r[2], [] if r[4] == "-" else r[4].split())
         for r in (line.split("\t") for line in (REALWORLD / "expected.tsv").read_text().splitlines()
                   if line.strip() and not line.startswith("#")) if r[1] == "uv.lock"]
CASES += [(LOCKS / "glm5-sglang-0.5.9", "sm120", []), (LOCKS / "glm5-torch-2.10.0", "sm90", ["--json"]),
          (LOCKS / "unpinned-torch", "sm100", ["--model", "glm_moe_dsa", "-q"])]


def records(cache: Path) -> set[str]:
    return {p.name for p in (cache / "verdicts").glob("*")} if (cache / "verdicts").exists() else set()


@pytest.mark.slow
@pytest.mark.parametrize("src,target,extra", CASES, ids=[f"{s.name}-{t}{'-' + '-'.join(e) if e else ''}" for s, t, e in CASES])
def test_the_recorded_verdict_answers_a_changed_lock_as_the_full_path_does(tmp_path, src, target, extra):
    d = tmp_path / "proj"
    shutil.copytree(src, d)
    cache = tmp_path / "cache"
    argv = ["check", "uv.lock", "--target", target, *extra]
    # the record this run stores is the one a later process reads (a process, as the hook runs: no state of this one's)
    first = run_cli(*argv, cwd=d, env={"GLMCOMPAT_CACHE_DIR": str(cache)})
    assert first.returncode in (0, 1), first.stderr
    stored = records(cache)
    assert stored, "the first run records its verdict"
    lock = d / "uv.lock"
    rng = random.Random(28)
    lock.write_text(untracked_bumped(files_churned(commented(lock.read_text(), rng), rng)))
    hit = run_process(*argv, cwd=d, env={"GLMCOMPAT_CACHE_DIR": str(cache)})
    assert records(cache) == stored, "answered from the record (a miss would have stored another)"
    cold = run_cli(*argv, cwd=d, env={"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cold")})
    assert (hit.returncode, hit.stdout, hit.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert (hit.returncode, hit.stdout) == (first.returncode, first.stdout)


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    d = tmp_path / "proj"
    shutil.copytree(LOCKS / "glm5-sglang-0.5.9", d)
    return d, {"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}


def test_an_edit_the_verdict_reads_is_judged_afresh(tmp_path):
    d, env = _project(tmp_path)
    first = run_cli("check", "uv.lock", "--target", "sm120", cwd=d, env=env)
    assert first.returncode == 0, first.stdout
    text = (d / "uv.lock").read_text()
    (d / "uv.lock").write_text(text.replace('name = "sgl-kernel"\nversion = "0.3.21"', 'name = "sgl-kernel"\nversion = "0.3.20"'))
    before = records(tmp_path / "cache")
    again = run_process("check", "uv.lock", "--target", "sm120", cwd=d, env=env)
    assert records(tmp_path / "cache") != before, "a miss: judged by the full path, which recorded it"
    cold = run_cli("check", "uv.lock", "--target", "sm120", cwd=d, env={"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cold")})
    assert (again.returncode, again.stdout) == (cold.returncode, cold.stdout)
    assert again.stdout != first.stdout


def test_a_stamped_lock_is_keyed_by_its_bytes(tmp_path):
    """A lock `glmcompat lock` wrote is checked against the stamp's sha256 of each file: any byte counts."""
    d, env = _project(tmp_path)
    (d / ".glmcompat-stamp").write_text("not a stamp of these files\n")
    first = run_cli("check", "uv.lock", "--target", "sm120", cwd=d, env=env)
    before = records(tmp_path / "cache")
    with (d / "uv.lock").open("a") as f:
        f.write("# a comment\n")
    again = run_process("check", "uv.lock", "--target", "sm120", cwd=d, env=env)
    assert records(tmp_path / "cache") != before
    assert again.returncode == first.returncode


def test_a_damaged_names_record_is_no_record(tmp_path, monkeypatch):
    """The names record is sealed like every stored thing: edited, it is ignored (the lock keyed by its bytes) and
    written again by the next full run."""
    d, env = _project(tmp_path)
    first = run_cli("check", "uv.lock", "--target", "sm120", cwd=d, env=env)
    (names,) = (tmp_path / "cache" / "verdicts").glob("names-*")
    names.write_bytes(names.read_bytes().replace(b"\ntorch\n", b"\ntorcx\n"))
    with (d / "uv.lock").open("a") as f:
        f.write("# a comment\n")
    from glmcompat.cli import fastpath

    argv = ["uv.lock", "--target", "sm120"]
    monkeypatch.chdir(d)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", env["GLMCOMPAT_CACHE_DIR"])
    assert fastpath._names(env["GLMCOMPAT_CACHE_DIR"], argv)[1] is None
    assert fastpath.lookup(argv) is None  # keyed by the new bytes: a miss
    again = run_process("check", "uv.lock", "--target", "sm120", cwd=d, env=env)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    assert b"\ntorch\n" in names.read_bytes()  # written again by the full run
    assert fastpath._names(env["GLMCOMPAT_CACHE_DIR"], argv)[1] is not None


@pytest.mark.parametrize("changed", [True, False], ids=["changed", "same bytes"])
def test_a_changed_lock_is_answered_without_heavy_imports(tmp_path, changed):
    """The start-up path reads the changed lock with ``str`` methods and ``_blake2``: no ``re``, ``hashlib``,
    ``json``, ``tomllib``, ``typing`` or packaging (each costs more than reading the lock); the same bytes again are
    answered by their digest, without the scan."""
    import json
    import os
    import subprocess
    import sys

    d, env = _project(tmp_path)
    assert run_process("check", "uv.lock", "--target", "sm120", cwd=d, env=env).returncode == 0
    if changed:
        with (d / "uv.lock").open("a") as f:
            f.write("# a comment\n")
    heavy = ("re", "hashlib", "json", "tomllib", "typing", "packaging", "glmcompat.readers.formats")
    heavy += () if changed else ("glmcompat.readers.uvlockscan",)
    probe = ("import sys\nfrom glmcompat.cli.fastpath import lookup\nrc = lookup(sys.argv[2:])\n"
             f"found = sorted(m for m in {heavy!r} if m in sys.modules)\n"
             "open(sys.argv[1], 'w').write(repr([rc, found]))\n")
    out = tmp_path / "probe.txt"
    p = subprocess.run([sys.executable, "-c", probe, str(out), "uv.lock", "--target", "sm120"], cwd=d,
                       capture_output=True, text=True, env={**os.environ, **env}, timeout=60)
    assert p.returncode == 0, p.stderr
    rc, found = json.loads(out.read_text().replace("'", '"'))
    assert rc == 0, "answered from the record"
    assert found == []
    assert p.stdout.startswith("ok: uv.lock on sm120")
