"""Run the attack classes of issue 26 against this checkout and print, per class, the figures its closing note gives:
tries, held (the answer was the clean run's, or a one-line refusal, in bounds), peak memory and the longest wall time.

    python scripts/attack_reliability.py [--records N] [--entries N]

Classes: corrupted verdict records (random bit flips, truncations, edited exit codes, links to /dev/zero, FIFOs,
sparse files, another key's record) replayed by ``glmcompat check``; corrupted sealed cache entries (probe,
lock-parse, resolution: random mutations and renames, read in process); a hostile index on 127.0.0.1 (the cases of
tests/reliability/test_deadlines.py); huge requirements files; verify over an ``import torch`` that hangs;
signatures whose backtracking is unbounded (refused by ``matrix validate``) and log shapes (50 MB of blank
lines) read by ``explain``. Every run is a real process, measured by a wrapper
(RUSAGE_CHILDREN). No network beyond 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import test_reliability_deadlines as D  # noqa: E402
from tests.reliability.test_records import S1, run_measured  # noqa: E402


class Tally:
    def __init__(self, name: str) -> None:
        self.name, self.tries, self.held, self.peak_kib, self.longest = name, 0, 0, 0, 0.0

    def add(self, held: bool, res: dict[str, object] | None = None, seconds: float = 0.0) -> None:
        self.tries += 1
        self.held += bool(held)
        if res is not None:
            self.peak_kib = max(self.peak_kib, int(res["max_rss_kib"]))  # type: ignore[call-overload]
            seconds = float(res["seconds"])  # type: ignore[arg-type]
        self.longest = max(self.longest, seconds)

    def line(self) -> str:
        peak = f"{self.peak_kib / 1024:.0f} MiB" if self.peak_kib else "in process"
        return f"{self.name:<34} tries {self.tries:>5}  held {self.held:>5}  peak {peak:>10}  longest {self.longest:6.2f} s"


def _mutate(raw: bytes, rng: random.Random, foreign: bytes, path: Path) -> None:
    path.unlink(missing_ok=True) if not path.is_dir() else path.rmdir()
    kind = rng.choice(["flip", "flip", "flip", "digit", "truncate", "rc", "zero", "fifo", "sparse", "foreign"])
    if kind == "flip":
        i = rng.randrange(len(raw))
        path.write_bytes(raw[:i] + bytes([raw[i] ^ (1 << rng.randrange(8))]) + raw[i + 1:])
    elif kind == "digit":
        digits = [i for i, b in enumerate(raw) if 48 <= b <= 57]
        i = rng.choice(digits)
        path.write_bytes(raw[:i] + bytes([48 + (raw[i] - 47) % 10]) + raw[i + 1:])
    elif kind == "truncate":
        path.write_bytes(raw[: rng.randrange(len(raw))])
    elif kind == "rc":
        path.write_bytes(re.sub(rb"(glmcompat-verdict \d+\n)1\n", rb"\g<1>0\n", raw, count=1))
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(8 << 30)
    else:
        path.write_bytes(foreign)


def records(n: int, rng: random.Random) -> Tally:
    t = Tally("corrupted verdict records")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        proj = tmp / "proj"
        shutil.copytree(S1, proj)
        (proj / "safe.txt").write_text("torch==2.9.1\nsgl-kernel==0.3.21\n")
        env = {"GLMCOMPAT_CACHE_DIR": str(tmp / "cache")}
        clean = run_measured("check", "requirements.txt", "--target", "sm90", cwd=proj, env=env)
        verdicts = tmp / "cache" / "verdicts"

        def records() -> set[Path]:  # verdict records (the fast path's names-KEY record is not one)
            return {p for p in verdicts.iterdir() if not p.name.startswith("names-")}

        (path,) = records()
        good = path.read_bytes()
        run_measured("check", "safe.txt", "--target", "sm90", cwd=proj, env=env)
        (other,) = records() - {path}
        foreign = other.read_bytes()
        for _ in range(n):
            _mutate(good, rng, foreign, path)
            res = run_measured("check", "requirements.txt", "--target", "sm90", cwd=proj, env=env, limit=60)
            t.add((res["rc"], res["stdout"], res["stderr"]) == (clean["rc"], clean["stdout"], clean["stderr"]), res)
            if path.is_symlink() or not path.is_file():
                path.unlink()
    return t


def entries(n: int, rng: random.Random) -> Tally:
    from glmcompat.matrix.locations import read_stored, seal

    t = Tally("corrupted sealed cache entries")
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "entry"
        for i in range(n):
            kind = rng.choice(["cache", "lock", "resolution", "matrix"])
            key = f"k-{rng.getrandbits(64):x}"
            body = os.urandom(rng.randrange(1, 4096))
            raw = seal(kind, key, body)
            how = rng.choice(["flip", "truncate", "rename", "kind", "extend"])
            if how == "flip":
                j = rng.randrange(len(raw))
                raw = raw[:j] + bytes([raw[j] ^ (1 << rng.randrange(8))]) + raw[j + 1:]
            elif how == "truncate":
                raw = raw[: rng.randrange(len(raw))]
            elif how == "extend":
                raw += os.urandom(rng.randrange(1, 64))
            p.write_bytes(raw)
            start = time.perf_counter()
            got = read_stored(str(p), kind if how != "kind" else "other", key if how != "rename" else key + "x")
            t.add(got is None, seconds=time.perf_counter() - start)
            del i
    return t


def hostile() -> Tally:
    t = Tally("hostile index (127.0.0.1)")
    D.WHEELS.update(D._build())
    srv = ThreadingHTTPServer(("127.0.0.1", 0), D.Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        for scenario in ("bomb", "elf10m", "suffixes", "norange", "nosize"):
            res = D._arch(url, scenario)
            err = str(res["stderr"])
            ok = res["rc"] in (0, 1, 2, 3) and err.count("\n") <= 1 and float(res["seconds"]) < D.DEADLINE + D.SLACK
            print(f"  {scenario}: rc {res['rc']}, {float(res['seconds']):.1f} s, {int(res['max_rss_kib']) >> 10} MiB: "
                  f"{err.strip()[:150]}")
            t.add(ok, res)
    finally:
        srv.shutdown()
    return t


def huge() -> Tally:
    t = Tally("huge requirements files")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cases = {"repeated-3.3MB": "numpy==1.0\n" * 300_000, "repeated-2MiB": "numpy==1.0\n" * 190_000,
                 "distinct-2MiB": "".join(f"numpy==1.{i}\n" for i in range(135_000)),
                 "token-800KB": f"--index-url https://index.invalid/{'a' * 800_000}\ntorch==2.9.1\n",
                 "token-1.6MB": f"--index-url https://index.invalid/{'a' * 1_600_000}\ntorch==2.9.1\n"}
        for name, text in cases.items():
            (tmp / "requirements.txt").write_text(text)
            res = run_measured("check", "requirements.txt", "--target", "sm90", cwd=tmp, limit=60,
                               env={"GLMCOMPAT_CACHE_DIR": str(tmp / "cache")})
            ok = res["rc"] in (0, 1, 2) and "Traceback" not in str(res["stderr"]) and float(res["seconds"]) < 20
            print(f"  {name}: rc {res['rc']}, {float(res['seconds']):.1f} s, {int(res['max_rss_kib']) >> 10} MiB")
            t.add(ok, res)
    return t


HANGS = {  # issue 41: an `import torch` that never returns, busy or asleep, or leaves a daemon holding the pipes
    "busy": "while True:\n    pass\n",
    "sleep": "import time\ntime.sleep(3600)\n",
    "daemon": ("import os, subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import os, time; open(os.environ["
               "\"HANG_PIDS\"], \"a\").write(str(os.getpid()) + chr(10)); time.sleep(3600)'], start_new_session=True)\n"
               "while True:\n    pass\n"),
}


def verify_hangs(timeout: int = 5) -> Tally:
    t = Tally(f"verify --timeout {timeout} over a hanging import torch")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        pids = tmp / "daemons"
        for name, body in HANGS.items():
            site = tmp / name
            (site / "torch").mkdir(parents=True)
            (site / "torch" / "__init__.py").write_text(body)
            try:
                res = run_measured("verify", "--no-gpu", "--path", str(site), "--timeout", str(timeout), cwd=tmp,
                                   limit=timeout + 60, env={"HANG_PIDS": str(pids)})
            finally:
                for pid in pids.read_text().split() if pids.exists() else []:
                    try:
                        os.kill(int(pid), 9)
                    except ProcessLookupError:
                        pass
            ok = res["rc"] == 1 and "Traceback" not in str(res["stderr"]) and float(res["seconds"]) < timeout + 5
            print(f"  {name}: rc {res['rc']}, {float(res['seconds']):.1f} s, {int(res['max_rss_kib']) >> 10} MiB")
            t.add(ok, res)
    return t


# issue 41, items 1 and 7: signatures whose backtracking is unbounded, and logs whose shape used to cost per line
EXPONENTIAL = [r"(?:a|a){0,1000}b", r"(a+)+b", r"(a|aa)*c", r"(?:a?){0,1000}b", r"(?:x|xy){0,500}z", r"(.{0,10}){0,100}z"]


def signatures_and_logs() -> Tally:
    t = Tally("exponential signatures, log shapes")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for i, pattern in enumerate(EXPONENTIAL):
            f = tmp / f"sig{i}.toml"
            f.write_text(f'schema = 1\n[[signature]]\nid = "x"\npattern = {json.dumps(pattern)}\ncause = "c"\n'
                         'remedy = "r"\nevidence = "inferred"\nsource = "s"\n')
            res = run_measured("matrix", "validate", str(f), cwd=tmp, limit=30)
            ok = res["rc"] == 2 and "not linear-time" in str(res["stderr"]) + str(res["stdout"])
            print(f"  validate {pattern}: rc {res['rc']}, {float(res['seconds']):.1f} s")
            t.add(ok, res)
        shapes = {"newlines-50MB": b"\n" * 50_000_000, "crlf-50MB": b"\r\n" * 25_000_000,
                  "spaces-50MB": b" \n" * 25_000_000, "a-lines-20MB": (b"a" * 27 + b"\n") * 700_000,
                  "undefined-symbol-20MB": b"undefined symbol: " * 1_100_000}
        for name, data in shapes.items():
            (tmp / "server.log").write_bytes(data)
            res = run_measured("explain", "server.log", cwd=tmp, limit=60)
            ok = res["rc"] in (0, 1) and "Traceback" not in str(res["stderr"]) and float(res["seconds"]) < 30
            print(f"  explain {name}: rc {res['rc']}, {float(res['seconds']):.1f} s, {int(res['max_rss_kib']) >> 10} MiB")
            t.add(ok, res)
    return t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=60)
    ap.add_argument("--entries", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=26)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tallies = [records(a.records, rng), entries(a.entries, rng), hostile(), huge(), verify_hangs(),
               signatures_and_logs()]
    for t in tallies:
        print(t.line())


if __name__ == "__main__":
    main()
