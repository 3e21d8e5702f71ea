"""Issue 26, point 1 and the cache parts of point 6: a stored thing is used only when it is exactly what glmcompat
wrote under that name.

The warm ``check`` replayed its records as they were: an edited exit code was replayed with that code, a flipped
digit printed other output, a link to ``/dev/zero`` was read until the machine ran out of memory and a FIFO hung the
run; a lock-parse or resolution entry copied under another key was accepted. Now every record is sealed with a
digest over its kind, its key and all of it, and read through the one safe reader (regular file, size cap, no link
followed, never blocking): anything else is a miss that the full path recomputes and replaces. Each case here runs
as a real process, measured (wall time, peak memory), so a regression to reading or waiting shows as a failure,
not as a hung suite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

# The CLI runs in a child of a small wrapper, so that the wrapper's RUSAGE_CHILDREN is the CLI's own peak memory.
WRAPPER = """\
import json, resource, subprocess, sys, time
t = time.monotonic()
try:
    r = subprocess.run([sys.executable, "-m", "glmcompat", *sys.argv[2:]], capture_output=True, text=True,
                       timeout=float(sys.argv[1]))
    rc, out, err = r.returncode, r.stdout, r.stderr
except subprocess.TimeoutExpired:
    rc, out, err = "timeout", "", ""
print(json.dumps({"rc": rc, "stdout": out, "stderr": err, "seconds": time.monotonic() - t,
                  "max_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def run_measured(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                 limit: float = 60) -> dict[str, Any]:
    """``glmcompat ARGS`` as a real process, killed after ``limit`` s: its exit code, output, wall time, peak memory."""
    r = subprocess.run([sys.executable, "-c", WRAPPER, str(limit), *args], capture_output=True, text=True, cwd=cwd,
                       env={**os.environ, **(env or {})}, timeout=limit + 30)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


S1 = FIXTURES / "formats" / "s1"  # requirements.txt -r base.txt: sgl-kernel 0.3.21 next to torch 2.10.0, unsafe


def _flip_bit(raw: bytes) -> bytes:
    i = len(raw) - 3
    return raw[:i] + bytes([raw[i] ^ 0x04]) + raw[i + 1:]


def _edit_rc(raw: bytes) -> bytes:
    """The exit code line of the record changed from 1 to 0, nothing else (what the old reader replayed)."""
    m = re.search(rb"glmcompat-verdict \d+\n1\n", raw)
    assert m, raw[:200]
    return raw[:m.end() - 2] + b"0\n" + raw[m.end():]


def _flip_digit(raw: bytes) -> bytes:
    i = max(raw.rfind(b"2.10.0"), 0)
    assert i
    return raw[:i] + b"2.11.0" + raw[i + 6:]


def _mutate(path: Path, how: str, good: bytes, foreign: bytes, tmp: Path) -> None:
    path.unlink()
    if how == "exit code edited":
        path.write_bytes(_edit_rc(good))
    elif how == "bit flipped":
        path.write_bytes(_flip_bit(good))
    elif how == "digit edited":
        path.write_bytes(_flip_digit(good))
    elif how == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif how == "link to a good copy":
        (tmp / "copy").write_bytes(good)
        path.symlink_to(tmp / "copy")
    elif how == "FIFO":
        os.mkfifo(path)
    elif how == "sparse 4 GiB":
        with open(path, "wb") as f:
            f.truncate(4 << 30)
    elif how == "another key's record":
        path.write_bytes(foreign)
    elif how == "directory":
        path.mkdir()
    else:  # pragma: no cover
        raise AssertionError(how)


ATTACKS = ["exit code edited", "bit flipped", "digit edited", "truncated", "empty", "link to /dev/zero",
           "link to a good copy", "FIFO", "sparse 4 GiB", "another key's record", "directory"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A clean run of an unsafe check (exit 1), its record, and another command's record (a safe answer)."""
    tmp = tmp_path_factory.mktemp("records")
    proj = tmp / "proj"
    shutil.copytree(S1, proj)
    env = {"GLMCOMPAT_CACHE_DIR": str(tmp / "cache")}
    clean = run_measured("check", "requirements.txt", "--target", "sm90", cwd=proj, env=env)
    assert clean["rc"] == 1, clean
    verdicts = tmp / "cache" / "verdicts"

    def records() -> set[Path]:  # verdict records; the names record (fastpath's names-KEY) is not a verdict
        return {p for p in verdicts.iterdir() if not p.name.startswith("names-")}

    (path,) = records()
    good = path.read_bytes()
    (proj / "safe.txt").write_text("torch==2.9.1\nsgl-kernel==0.3.21\n")
    other = run_measured("check", "safe.txt", "--target", "sm90", cwd=proj, env=env)
    assert other["rc"] != clean["rc"], other  # a record that, replayed, would change the exit code
    (foreign_path,) = records() - {path}
    return {"tmp": tmp, "proj": proj, "env": env, "clean": clean, "path": path, "good": good,
            "foreign": foreign_path.read_bytes()}


@pytest.mark.slow
@pytest.mark.parametrize("how", ATTACKS)
def test_a_corrupted_verdict_record_never_changes_the_answer(recorded: dict[str, Any], how: str,
                                                             tmp_path: Path) -> None:
    path: Path = recorded["path"]
    if path.is_dir() and not path.is_symlink():
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.write_bytes(recorded["good"])
    _mutate(path, how, recorded["good"], recorded["foreign"], tmp_path)
    res = run_measured("check", "requirements.txt", "--target", "sm90", cwd=recorded["proj"], env=recorded["env"],
                       limit=30)
    clean = recorded["clean"]
    assert (res["rc"], res["stdout"], res["stderr"]) == (clean["rc"], clean["stdout"], clean["stderr"]), how
    # a FIFO is never waited on: a run that waits is killed at the limit and its answer differs from the clean one
    assert res["max_rss_kib"] < 300 * 1024, res  # /dev/zero and a sparse 4 GiB file are never read
    if how != "directory":  # the miss was recomputed and replaced by a record of glmcompat's own
        assert not path.is_symlink() and path.is_file() and path.read_bytes() == recorded["good"], how


def test_the_reader_never_blocks_follows_or_reads_past_its_cap(tmp_path: Path) -> None:
    from glmcompat.matrix.locations import read_bounded, read_stored, seal

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done: list[object] = []
    t = threading.Thread(target=lambda: done.append(read_bounded(str(fifo))), daemon=True)
    t.start()
    t.join(5)
    assert done == [None]  # returned at once: no writer ever came
    (tmp_path / "zero").symlink_to("/dev/zero")
    assert read_bounded(str(tmp_path / "zero")) is None
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    assert read_bounded(str(big), 100) is None and read_bounded(str(big), 101) == b"x" * 101
    sealed = tmp_path / "entry"
    sealed.write_bytes(seal("kind", "k1", b"payload"))
    assert read_stored(str(sealed), "kind", "k1") == b"payload"
    assert read_stored(str(sealed), "kind", "k2") is None  # copied under another key
    assert read_stored(str(sealed), "other", "k1") is None  # another kind's
    (tmp_path / "link").symlink_to(sealed)
    assert read_stored(str(tmp_path / "link"), "kind", "k1") is None  # never through a link


def test_a_lock_record_is_sealed_with_its_key(tmp_path: Path) -> None:
    """The no-op ``lock`` record (:mod:`glmcompat.cli.fastlock`) is read by the same sealed reader."""
    from glmcompat.cli import fastlock
    from glmcompat.cli.startup import encode, load

    deps = {str(tmp_path): fastlock.OUT_DIR}
    blob = encode(fastlock.HEADER, "k" * 40, deps, "out\n", "", 0)
    p = tmp_path / "rec"
    p.write_bytes(blob)
    assert load(fastlock.HEADER, "k" * 40, str(p)) == (deps, "out\n", "", 0)
    assert load(fastlock.HEADER, "j" * 40, str(p)) is None
    p.write_bytes(blob.replace(b"\n0\n", b"\n3\n", 1))
    assert load(fastlock.HEADER, "k" * 40, str(p)) is None


def test_a_lock_parse_entry_copied_under_another_key_is_a_miss(tmp_path: Path) -> None:
    """Two locks of different verdicts: the parsed entry of one, copied under the other's name, was accepted, and
    the other lock judged by the first one's packages."""
    from glmcompat.matrix.store import cache_dir
    from glmcompat.readers.formats import read_lock

    a, b = tmp_path / "a" / "requirements.txt", tmp_path / "b" / "requirements.txt"
    a.parent.mkdir()
    b.parent.mkdir()
    a.write_text("torch==2.9.1\nsgl-kernel==0.3.21\n")
    b.write_text("torch==2.10.0\nsgl-kernel==0.3.21\n")
    locks = cache_dir() / "locks"
    before = set(locks.iterdir()) if locks.exists() else set()
    la = read_lock(a)
    (ea,) = set(locks.iterdir()) - before
    lb = read_lock(b)
    (eb,) = set(locks.iterdir()) - before - {ea}
    assert la.entries != lb.entries
    shutil.copy(ea, eb)
    assert read_lock(b) == lb  # parsed again, not a's packages
    assert b"2.10.0" in eb.read_bytes()  # and replaced
    eb.unlink()
    os.mkfifo(eb)
    assert read_lock(b) == lb  # a FIFO in the cache: a miss, no hang


def test_a_resolution_memo_copied_under_another_key_is_a_miss(tmp_path: Path) -> None:
    from glmcompat.matrix.locations import read_stored
    from glmcompat.matrix.load import load_facts
    from glmcompat.ops import lockgen as L

    facts = load_facts()
    from tests.cli.commands.test_lock import stack_request

    a = stack_request(facts, "glm5-sglang-0.5.9", "sm120", "glm_moe_dsa")
    b = stack_request(facts, "glm5-sglang-0.5.9", "sm90", "glm_moe_dsa")
    res = L.Resolution({"torch": "2.9.1"}, {}, {}, ">=3.10", "2026-01-01T00:00:00Z")
    L.memoize(facts, a, res)
    pa, pb = L._memo_path(facts, a), L._memo_path(facts, b)
    assert read_stored(str(pa), "resolution", pa.name) is not None
    shutil.copy(pa, pb)
    assert read_stored(str(pb), "resolution", pb.name) is None
    raw = pa.read_bytes()
    pa.write_bytes(raw.replace(b"2.9.1", b"2.9.2"))
    assert read_stored(str(pa), "resolution", pa.name) is None


@pytest.mark.parametrize("how", ["link to /dev/zero", "FIFO", "another key's entry", "bit flipped"])
def test_a_corrupted_probe_cache_entry_is_a_miss(tmp_path: Path, how: str) -> None:
    from glmcompat.edges.cache import Cache

    c = Cache(tmp_path)
    ka, kb = "torch-v1-" + "ab" * 32, "torch-v1-" + "cd" * 32
    c.put_bytes(ka, b"_ZN3c104TypeEv\n")
    c.put_bytes(kb, b"_ZN3c105OtherEv\n")
    pb = tmp_path / "torch" / kb
    raw = pb.read_bytes()
    pb.unlink()
    if how == "link to /dev/zero":
        pb.symlink_to("/dev/zero")
    elif how == "FIFO":
        os.mkfifo(pb)
    elif how == "another key's entry":
        shutil.copy(tmp_path / "torch" / ka, pb)
    else:
        pb.write_bytes(_flip_bit(raw))
    assert c.get_bytes(kb) is None
    assert c.get_bytes(kb, max_age=3600) is None
    c.put_bytes(kb, b"_ZN3c105OtherEv\n")  # replaced
    assert c.get_bytes(kb) == b"_ZN3c105OtherEv\n"
