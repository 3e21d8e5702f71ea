"""The probe processes of ``glmcompat verify``, seen from the parent: one :class:`Child` per probe group (its marker
lines parsed as they arrive, its deadline kept, its process group killed), the ``extension:`` probes as many at once
as there are CPUs (:class:`Extensions`), and the NCCL child that gathers every rank's report (:func:`gather`)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from glmcompat.model.findings import Finding, FindingDoc
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.model.outputs.verify import RankDoc, VerifyOutput
from glmcompat.ops.verify.extensions import ExtDist
from glmcompat.ops.verify.records import MAX_RECORD, NONCE_ENV, GroupExit, group_ids, marks

# Seconds a process's output is still read after it ended or was killed (a daemon may hold its pipes open), and
# the fork server's margin past the deadline for its exit lines: with them, the run's bound (--timeout + a few s).
GRACE = 0.5
SERVER_MARGIN = 2.0


class Child:
    """One probe group's process; its marker lines are parsed as they arrive. The lines carry a nonce chosen
    here for this process (so a package under test printing a marker is ignored), and a line that does
    not hold a well-formed record is ignored too."""

    def __init__(self, group: str, opts: dict[str, Any], env: dict[str, str], timeout: float,
                 stdin: bool = False, expected: list[str] | None = None, limit: float | None = None) -> None:
        self.group = group
        self.expected = expected if expected is not None else group_ids(group, opts)
        self.records: list[ProbeDoc] = []
        self.gathered: list[Any] | None = None
        self.exits: dict[str, GroupExit] = {}
        self.nofork = False
        self.stderr: list[str] = []
        self.timed_out = False
        self.timeout = timeout
        self.limit = timeout if limit is None else limit  # the --timeout a report names (``timeout``: what is left)
        self.arrived = threading.Event()
        self.t0 = time.monotonic()

        nonce = secrets.token_hex(16)
        self.mark, self.exit_mark, self.nofork_mark, self.gather_mark = marks(nonce)
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "glmcompat.ops.verify.gpuchecks", group, _argument(opts)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            env={**env, NONCE_ENV: nonce}, start_new_session=True, text=True, errors="replace")
        self._threads = [threading.Thread(target=self._read_out, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for t in self._threads:
            t.start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        partial = False  # inside a line longer than MAX_RECORD: dropped, never held whole
        while True:
            line = self.proc.stdout.readline(MAX_RECORD)
            if not line:
                break
            whole = line.endswith("\n")
            if not partial and whole:
                try:
                    self._take(line)
                except Exception:  # noqa: BLE001 - nothing a probe process prints may stop the reading
                    pass
            partial = not whole

    def _take(self, line: str) -> None:
        if line.startswith(self.mark):
            rec = ProbeDoc.parse(_parse_json(line[len(self.mark):]))
            if rec is not None:
                self.records.append(rec)
                self.arrived.set()
        elif line.startswith(self.exit_mark):
            e = GroupExit.parse(_parse_json(line[len(self.exit_mark):]))
            if e is not None:
                self.exits[e.group] = e
        elif line.rstrip("\n") == self.nofork_mark:
            self.nofork = True
        elif line.startswith(self.gather_mark):
            gathered = _parse_json(line[len(self.gather_mark):])
            if isinstance(gathered, list):
                self.gathered = gathered

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            if len(self.stderr) > 400:
                del self.stderr[:200]

    def remaining(self) -> float:
        return max(0.0, self.t0 + self.timeout - time.monotonic())

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def wait(self, grace: float = GRACE) -> None:
        """Until the process ends or its deadline passes (then its process group is killed). Its output is read
        for ``grace`` seconds more at most: a daemon it started keeps the pipes open, and nothing waits for
        their end. Whatever is left of its process group (a daemon, a worker) is killed either way."""
        try:
            self.proc.wait(timeout=self.remaining())
        except subprocess.TimeoutExpired:
            self.timed_out = True
        self.kill()
        if self.timed_out:
            self.proc.wait()  # SIGKILLed: reaped at once
        end = time.monotonic() + grace
        for t in self._threads:
            t.join(timeout=max(0.0, end - time.monotonic()))

    def stderr_tail(self, n: int = 15) -> str:
        lines = [ln.rstrip() for ln in self.stderr if ln.strip()]
        return "\n".join(lines[-n:])

    def results(self) -> list[ProbeDoc]:
        """Its records, plus a failure for each expected probe it never reported."""
        return _complete(list(self.records), self.expected, self.proc.returncode, self.timed_out, self.limit,
                         self.stderr_tail(), time.monotonic() - self.t0)

    def forked_results(self, groups: dict[str, list[str]], timeout: float) -> list[ProbeDoc]:
        """A fork server's records, completed per forked group from its exit line."""
        out = list(self.records)
        for g, expected in groups.items():
            e = self.exits.get(g)
            if e is None:  # the server itself died or hung
                e = GroupExit(group=g, rc=self.proc.returncode, timed_out=self.timed_out, stderr=self.stderr_tail(),
                              seconds=time.monotonic() - self.t0)
            tail = "\n".join([ln for ln in e.stderr.splitlines() if ln.strip()][-15:])
            out = _complete(out, expected, e.rc, e.timed_out, timeout,
                            tail, e.seconds)
        return out



def _argument(opts: dict[str, Any]) -> str:
    """The options as the probe process's argument: JSON, or ``@FILE`` holding it where it is longer than one
    argument may be (Linux: 128 KiB; a distribution with thousands of extension modules)."""
    text = json.dumps(opts)
    if len(text) < 64 << 10:
        return text
    fd, name = tempfile.mkstemp(prefix="glmcompat-probe-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return "@" + name



def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None



def _complete(out: list[ProbeDoc], expected: list[str], rc: int | None, timed_out: bool, timeout: float,
              tail: str, seconds: float) -> list[ProbeDoc]:
    seen = {r.id for r in out}
    missing = [i for i in expected if i not in seen]
    if missing:
        if timed_out:
            why = f"timed out after {timeout:g} s (hung); the probe process was killed"
        elif rc is not None and rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            why = f"the probe process crashed ({name})"
        else:
            why = f"the probe process exited with status {rc} before reporting"
        out.extend(ProbeDoc(id=i, status="failed", summary=why, seconds=round(seconds, 3), error=tail or None)
                   for i in missing)
    return out



class Extensions:
    """The ``extension:<distribution>`` probes: one probe process per distribution, as many at once as this
    machine has CPUs, each under the run's deadline (``left``: the seconds that remain of it)."""

    def __init__(self, dists: list[ExtDist], common: dict[str, Any], env: dict[str, str],
                 left: Callable[[], float], limit: float) -> None:
        self.dists = dists
        self._limit = limit
        self._left = left
        self._done: list[ProbeDoc] = []
        self._lock = threading.Lock()
        self._queue = list(dists)
        self._common = common
        self._env = env
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
        self._workers = [threading.Thread(target=self._work, daemon=True) for _ in range(min(cpus, len(dists)))]
        for w in self._workers:
            w.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    return
                d = self._queue.pop(0)
            pid = f"extension:{d.name}"
            if self._left() <= 0:
                recs = [ProbeDoc(id=pid, status="failed", seconds=0.0,
                                 summary="not run: the --timeout ran out before its turn")]
            else:
                c = Child("ext", {**self._common, **d.opts()}, self._env, self._left(), limit=self._limit)
                c.wait()
                recs = c.results()
            with self._lock:
                self._done.extend(recs)

    def results(self) -> list[ProbeDoc]:
        """Every distribution's record, once each has ended (bounded by the deadline and a grace)."""
        for w in self._workers:
            w.join(timeout=self._left() + 2 * GRACE)
        with self._lock:
            done = list(self._done)
        seen = {r.id for r in done}
        done.extend(ProbeDoc(id=f"extension:{d.name}", status="failed", seconds=0.0,
                             summary="not run: the --timeout ran out before its turn")
                    for d in self.dists if f"extension:{d.name}" not in seen)
        return done



def gather(nccl: Child, report: VerifyOutput) -> VerifyOutput:
    """Hand this rank's report to the NCCL probe process; on rank 0, merge every rank's (their documents)."""
    try:
        assert nccl.proc.stdin is not None
        nccl.proc.stdin.write(json.dumps(report.to_json()))
        nccl.proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    nccl.wait()
    rank = int(os.environ.get("RANK", "0"))
    report = replace(report, rank=rank)
    if rank != 0:
        return report
    ranks = nccl.gathered
    if ranks is None and any(r.status == "skipped" for r in nccl.records):
        return report
    if ranks is None:
        lost = Finding(rule="distributed", severity="error", packages=(),
                       message="rank 0 could not gather the other ranks' reports (the NCCL all-reduce failed or a "
                       "rank hung)", remedy="see the nccl-all-reduce probe of each rank")
        return replace(report, ok=False, findings=(*report.findings, FindingDoc.of(lost)))
    docs = tuple(RankDoc(rank=i, ok=bool(r.get("ok")) if r else False, device=r.get("device") if r else None,
                         failed=tuple(p["id"] for p in (r or {}).get("probes", []) if p["status"] == "failed"))
                 for i, r in enumerate(ranks))
    return replace(report, ranks=docs, ok=report.ok and all(x.ok for x in docs))

