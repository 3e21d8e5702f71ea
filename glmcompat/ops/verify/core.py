"""The parent side of ``glmcompat verify``: start the probe groups, collect, judge, assemble one report.

Every probe group runs in its own process (``python -m glmcompat.ops.verify.gpuchecks GROUP``), all at
once, each under its own deadline: a crash or a hang in one is reported as that group's failure and
the others carry on. The parent imports no GPU package; it loads the fast matrix view
(:mod:`glmcompat.matrix.view`), judges what needs both the device and the matrix (the target, the GPU code
of the extensions, the rules' findings for the target) and matches failures against the known
failure signatures (:mod:`glmcompat.model.signatures`).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, Any, cast

import glmcompat
from glmcompat.decide.diagnose import Env, diagnose, extension_break, package_cause
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.store import cache_dir
from glmcompat.model import gpu
from glmcompat.model.errors import InputError
from glmcompat.model.findings import Finding
from glmcompat.model.findings import FindingDoc
from glmcompat.model.outputs.verify import AgreementDoc, CountsDoc, ExplainedDoc, ProbeDoc, RankDoc, VerifyOutput
from glmcompat.model.signatures import match_signatures, module_package
from glmcompat.ops.verify.driver import findings as driver_findings
from glmcompat.ops.verify.records import (
    GROUP_MODULE,
    MAX_RECORD,
    NONCE_ENV,
    STATUSES,
    AbiData,
    DeviceData,
    DriverData,
    ExtensionData,
    ExtensionFailure,
    GpuCodeData,
    GpuCodeFile,
    GroupExit,
    InstalledData,
    ProbeRecord,
    absent,
    group_ids,
    marks,
)
from glmcompat.ops.verify.extensions import ExtDist, scan
from glmcompat.ops.verify.static import sgl_kernel_variant
from glmcompat.readers.elf import foreign_cuda_runtimes

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.matrix.rows import Target


# The extension distributions whose static verdicts are compared with the dynamic ones: the load
# (abi: symbols and CUDA runtime vs import:, load:, ops:) and the GPU code (gpu-code: vs smoke:<module>-*).
DYNAMIC_OF = {"torchvision": "torchvision", "torchaudio": "torchaudio", "sgl-kernel": "sgl_kernel",
              "sglang-kernel": "sgl_kernel", "torchao": "torchao", "vllm": "vllm"}
KIND_ORDER = ["driver", "device", "gpu", "peer-access", "nccl-all-reduce", "installed", "abi", "gpu-code",
              "import", "extension", "load", "ops", "model", "smoke"]
# Seconds a process's output is still read after it ended or was killed (a daemon may hold its pipes open), and
# the fork server's margin past the deadline for its exit lines: with them, the run's bound (--timeout + a few s).
GRACE = 0.5
SERVER_MARGIN = 2.0
# Packages whose [[primary_modules]] the probe processes need (which modules decide, which are add-ons).
PRIMARY_FOR = ("vllm",)
# The groups that import torch first: forked from one process that imported it (Options.fork).
FORKED = ("torch", "torchvision", "torchaudio", "sgl_kernel", "flashinfer", "triton", "transformers", "sglang",
          "torchao", "vllm")
@dataclass
class Options:
    target: str = "auto"
    model: str | None = None
    timeout: float = 120.0
    all_gpus: bool = False
    distributed: bool = False
    no_gpu: bool = False
    jit: bool = False
    paths: list[str] = field(default_factory=list)
    fork: bool = True  # import torch once and fork the torch groups from it (see gpuchecks.forkserver)


class Child:
    """One probe group's process; its marker lines are parsed as they arrive. The lines carry a nonce chosen
    here for this process (so a package under test printing a marker is ignored), and a line that does
    not hold a well-formed record is ignored too."""

    def __init__(self, group: str, opts: dict[str, Any], env: dict[str, str], timeout: float,
                 stdin: bool = False, expected: list[str] | None = None, limit: float | None = None) -> None:
        self.group = group
        self.expected = expected if expected is not None else group_ids(group, opts)
        self.records: list[ProbeRecord] = []
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
            rec = ProbeRecord.parse(_parse_json(line[len(self.mark):]))
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

    def results(self) -> list[ProbeRecord]:
        """Its records, plus a failure for each expected probe it never reported."""
        return _complete(list(self.records), self.expected, self.proc.returncode, self.timed_out, self.limit,
                         self.stderr_tail(), time.monotonic() - self.t0)

    def forked_results(self, groups: dict[str, list[str]], timeout: float) -> list[ProbeRecord]:
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


def _complete(out: list[ProbeRecord], expected: list[str], rc: int | None, timed_out: bool, timeout: float,
              tail: str, seconds: float) -> list[ProbeRecord]:
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
        out.extend(ProbeRecord(id=i, status="failed", summary=why, seconds=round(seconds, 3), error=tail or None)
                   for i in missing)
    return out


def _child_env(paths: list[str]) -> dict[str, str]:
    env = dict(os.environ)

    here = os.path.dirname(os.path.dirname(os.path.abspath(glmcompat.__file__)))  # the directory holding the package
    parts = [os.path.abspath(p) for p in paths]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    sites = {os.path.abspath(s) for s in site.getsitepackages() + [site.getusersitepackages()]}
    if here not in sites:
        parts.append(here)  # glmcompat itself, last: it must not shadow what is being verified
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env.setdefault("PYTHONWARNINGS", "ignore")
    return env


def _findable(module: str, search: list[str]) -> bool:
    """Whether a top-level module can be found on ``search`` (nothing is imported)."""
    try:
        return PathFinder.find_spec(module, search) is not None
    except (ImportError, ValueError, OSError):
        return True  # let the probe process find out


def _gpu_seen() -> bool:
    try:
        return bool(os.listdir("/proc/driver/nvidia/gpus"))
    except OSError:
        return os.path.exists("/dev/nvidia0")


def _speed_opts() -> dict[str, Any]:
    """Where a probe process whose packages keep no usable bytecode caches it (``gpuchecks.bytecode_cache``).

    ``GLMCOMPAT_VERIFY_PYCACHE=0`` turns it off; ``=always`` uses it for every package. It caches
    compiled modules, never a probe's result: every import still runs.
    """
    mode = os.environ.get("GLMCOMPAT_VERIFY_PYCACHE", "auto")
    return {} if mode == "0" else {"pycache": str(cache_dir() / "pycache"), "pycache_mode": mode}


def run(options: Options) -> VerifyOutput:
    """Run every probe and return the report (``verify --json``'s document).

    ``options.timeout`` bounds the whole run: every probe process ends (or is killed, with its process group)
    by then, and the run returns a few seconds later at most (:data:`GRACE`, :data:`SERVER_MARGIN`).
    """
    t0 = time.perf_counter()
    deadline = time.monotonic() + options.timeout
    facts = load_facts()
    explicit = None if options.target == "auto" else facts.target(options.target)  # InputError: exit 2
    if options.model is not None:
        facts.model(options.model)
    env = _child_env(options.paths)
    rank_env = os.environ.get("LOCAL_RANK") if options.distributed else None
    if options.distributed and "RANK" not in os.environ:
        raise InputError("--distributed needs torchrun (RANK, WORLD_SIZE and MASTER_ADDR are not set)")
    device = int(rank_env) if rank_env is not None else 0
    common = {"model": options.model, "no_gpu": options.no_gpu, "jit": options.jit, "device": device,
              "gpu_seen": _gpu_seen(), **_speed_opts(),
              "primary_modules": {k: list(facts.primary_modules(k)) for k in PRIMARY_FOR
                                  if hasattr(facts, "primary_modules") and facts.primary_modules(k)}}

    def left() -> float:
        return max(0.0, deadline - time.monotonic())

    children: list[Child] = []
    nvml = Child("nvml", {}, env, min(left(), 20), limit=min(options.timeout, 20))
    if options.all_gpus and not options.no_gpu:
        nvml.wait()
    groups = ["static", "torch", "torchvision", "torchaudio", "sgl_kernel", "flashinfer", "triton",
              "transformers", "sglang", "torchao", "vllm"]
    search = [os.path.abspath(p) for p in options.paths] + sys.path
    missing: list[ProbeRecord] = []  # the probes of groups whose module is not installed
    present = []
    for g in groups:
        module = GROUP_MODULE.get(g)
        if module is not None and not _findable(module, search):
            ids = group_ids(g, common)
            missing.extend(absent(i, module) for i in ids)
            continue
        present.append(g)
    forked = [g for g in present if g in FORKED] if options.fork and _findable("torch", search) else []
    dists = scan(search)  # every other distribution with extension modules (a few ms: RECORD files only)
    # those that require torch are forked from the torch the fork server imported, the others start fresh
    via_server = {d.name: d.opts() for d in dists if d.torch} if forked else {}
    forked += [f"ext:{k}" for k in via_server]
    server = None
    if forked:
        server = Child("forkserver", {**common, "groups": forked, "ext": via_server, "timeout": left()}, env,
                       left() + SERVER_MARGIN, expected=[], limit=options.timeout)
    for g in present:
        if g not in forked:
            children.append(Child(g, common, env, left(), limit=options.timeout))
    ext = Extensions([d for d in dists if d.name not in via_server], common, env, left, options.timeout)
    if options.all_gpus and not options.no_gpu:
        n = len(cast(DriverData, nvml.records[0].data or {}).get("gpus", [])) if nvml.records else 0
        for i in range(n):
            children.append(Child("gpu", {**common, "device": i}, env, left(), expected=[f"gpu:{i}"],
                                  limit=options.timeout))
        children.append(Child("peer", common, env, left(), limit=options.timeout))
    nccl = Child("nccl", common, env, left(), stdin=True, limit=options.timeout) if options.distributed else None
    children.append(nvml)
    if server is not None:
        server.wait()
        if server.nofork:  # torch does not import: run each group fresh, each reports its own error
            fresh = [Child("ext", {**common, **via_server[g[4:]]}, env, left(), limit=options.timeout)
                     if g.startswith("ext:") else Child(g, common, env, left(), limit=options.timeout) for g in forked]
            children.extend(fresh)
            server = None
    for c in children:
        c.wait()
    probes: list[ProbeRecord] = list(missing)
    if server is not None:
        probes.extend(server.forked_results({g: group_ids(g, common) for g in forked}, options.timeout))
    for c in children:
        probes.extend(c.results())
    probes.extend(ext.results())
    if nccl is not None:
        while not nccl.arrived.is_set() and nccl.proc.poll() is None and nccl.remaining() > 0:
            nccl.arrived.wait(0.05)
        probes.extend(r for r in nccl.records if r.id == "nccl-all-reduce")
        if not any(r.id == "nccl-all-reduce" for r in nccl.records):
            nccl.kill()
            nccl.wait()
            probes.extend(nccl.results())
    report = assemble(probes, facts, options, explicit)
    report = replace(report, elapsed_s=round(time.perf_counter() - t0, 3))
    if nccl is not None:
        report = _gather(nccl, report)
    return report


class Extensions:
    """The ``extension:<distribution>`` probes: one probe process per distribution, as many at once as this
    machine has CPUs, each under the run's deadline (``left``: the seconds that remain of it)."""

    def __init__(self, dists: list[ExtDist], common: dict[str, Any], env: dict[str, str],
                 left: Callable[[], float], limit: float) -> None:
        self.dists = dists
        self._limit = limit
        self._left = left
        self._done: list[ProbeRecord] = []
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
                recs = [ProbeRecord(id=pid, status="failed", seconds=0.0,
                                    summary="not run: the --timeout ran out before its turn")]
            else:
                c = Child("ext", {**self._common, **d.opts()}, self._env, self._left(), limit=self._limit)
                c.wait()
                recs = c.results()
            with self._lock:
                self._done.extend(recs)

    def results(self) -> list[ProbeRecord]:
        """Every distribution's record, once each has ended (bounded by the deadline and a grace)."""
        for w in self._workers:
            w.join(timeout=self._left() + 2 * GRACE)
        with self._lock:
            done = list(self._done)
        seen = {r.id for r in done}
        done.extend(ProbeRecord(id=f"extension:{d.name}", status="failed", seconds=0.0,
                                summary="not run: the --timeout ran out before its turn")
                    for d in self.dists if f"extension:{d.name}" not in seen)
        return done


def _gather(nccl: Child, report: VerifyOutput) -> VerifyOutput:
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


# --------------------------------------------------------------------------------------------
# Judging and assembling (pure: probes + matrix -> report)
# --------------------------------------------------------------------------------------------


def _read_files(probe: str, files: list[str]) -> tuple[tuple[str, str], ...]:
    """The evidence of a verdict on installed files: ``probe`` (``abi-probe``, ``arch-probe``) read them."""
    return ((probe, "installed files: " + ", ".join(files)),)


def _sort_key(p: ProbeRecord) -> tuple[int, str]:
    kind = p.id.split(":", 1)[0]
    return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER), p.id)


def probe_doc(rec: ProbeRecord, explained: tuple[ExplainedDoc, ...] | None = None) -> ProbeDoc:
    """The report's entry for a probe's record (with the known failure signatures its text shows)."""
    return ProbeDoc(id=rec.id, status=rec.status, seconds=rec.seconds, summary=rec.summary, error=rec.error,
                    data=rec.data, warnings=rec.warnings, explained=explained, absent=rec.absent)


def _cap_name(cap: tuple[int, int]) -> str:
    return f"sm_{cap[0]}{cap[1]}"


def assemble(records: list[ProbeRecord], facts: Any, options: Options,
             explicit: Target | None) -> VerifyOutput:
    """The report on the probes' ``records``: each record that a verdict changes is a new one in the report,
    the records given are left as they are."""
    probes = list(records)
    at = {p.id: i for i, p in enumerate(probes)}  # the record each id names (the last of that id)
    by_id = {p.id: p for p in probes}

    def put(rec: ProbeRecord) -> None:
        probes[at[rec.id]] = by_id[rec.id] = rec

    findings: list[Finding] = []
    # -- the device ------------------------------------------------------------------------------
    dev = by_id.get("device")
    drv = by_id.get("driver")
    drv_data = cast(DriverData, (drv.data if drv else None) or {})
    device: dict[str, Any] | None = None
    if dev and dev.status == "passed":
        device = dict(dev.data or {})
    elif drv and drv.status == "passed" and drv_data.get("gpus"):
        gpus = drv_data["gpus"]
        g = gpus[min(int(os.environ.get("LOCAL_RANK", "0")) if options.distributed else 0, len(gpus) - 1)]
        device = {"index": g["index"], "name": g["name"], "capability": g["capability"], "source": "nvml"}
    if device is not None and drv and drv.status == "passed":
        device["driver"] = drv_data.get("driver")
        device.setdefault("cuda_driver", drv_data.get("cuda_driver"))
    cap = gpu.parse_capability(device["capability"]) if device else None
    # -- the target ------------------------------------------------------------------------------
    target: Target | None = explicit
    if target is None and device is not None and cap is not None:
        target = next((t for t in facts.rows("target") if gpu.parse_capability(t.compute_capability) == cap), None)
        if target is None:
            findings.append(Finding(rule="target", severity="warning", packages=(),
                                    message=f"the device's capability {device['capability']} is no "
                                    "target of the matrix: target-specific rules were not evaluated",
                                    remedy="pass --target to check against a known target"))
    if dev and dev.status == "passed" and cap is not None:
        put(_judge_device(dev, cap, target))
    # -- no torch: there is no stack to verify (a skipped probe must not make that look fine) ---------
    imp = by_id.get("import:torch")
    if imp and imp.status == "skipped" and imp.absent == "torch":
        put(replace(imp, status="failed", summary="torch is not installed: there is no serving stack to verify"))
        findings.append(Finding(rule="import", severity="error", packages=(("torch", ""),),
                                message="torch is not installed in this environment",
                                remedy="install the locked stack, e.g. `uv pip sync locks/<stack>/<target>/requirements.txt`"))
    # -- (a) installed ---------------------------------------------------------------------------
    inst = by_id.get("installed")
    if inst and inst.status == "passed":
        data = cast(InstalledData, dict(inst.data or {}))
        by_t = {t: [Finding.from_json(f) for f in fs] for t, fs in data.pop("findings_by_target", {}).items()}
        summary = inst.summary or ""
        if target is not None:
            rule_f = by_t.get(target.name, [])
        else:
            lists = list(by_t.values())
            common = [f for f in lists[0] if all(f in rest for rest in lists[1:])] if lists else []
            rule_f = common
            summary += "; target-specific rules not evaluated (no GPU and no --target)"
        state = [Finding.from_json(f) for f in data.get("installation", [])]
        all_f = rule_f + state
        findings.extend(all_f)
        errs = sum(1 for f in all_f if f.severity == "error")
        warns = len(all_f) - errs
        summary = f"{summary}: {errs} error(s), {warns} warning(s) from the rules" + (
            f" for {target.name}" if target else "")
        status, error = inst.status, inst.error
        if errs:
            status = "failed"
            error = next(f for f in all_f if f.severity == "error").message
        elif warns:
            status = "warning"
            error = all_f[0].message
        put(replace(inst, data=data if inst.data is not None else None, summary=summary, status=status, error=error))
    findings.extend(driver_findings(by_id, facts, target))  # the driver NVML read vs every CUDA build installed
    env = _env(by_id, device)
    # -- (b) abi and gpu code --------------------------------------------------------------------
    judge_cap = cap if cap is not None else (gpu.parse_capability(explicit.compute_capability) if explicit else None)
    for i, p in enumerate(probes):
        pid = p.id
        abi = cast(AbiData, (p.data or {}) if pid.startswith("abi:") else {})
        if pid.startswith("abi:") and p.status == "failed" and abi.get("files"):
            key = pid[4:]
            row = facts.kernel(key, abi["version"]) if hasattr(facts, "kernel") else None
            severity = row.on_mismatch if row is not None else "error"
            missing = [(e["file"], s, dm) for e in abi["files"]
                       for s, dm in zip(e["missing"], e["missing_demangled"], strict=False)]
            uniq = {s: dm for _, s, dm in missing}  # one count per symbol, however many files need it
            n_files = len({f for f, _, _ in missing})
            shown = "; ".join(list(uniq.values())[:3])
            msg = (f"{key} {abi['version']} needs {len(uniq)} torch symbol(s) that the installed torch "
                   f"{abi['torch']} does not define ({shown}{', ...' if len(uniq) > 3 else ''}"
                   f"{f'; in {n_files} files' if n_files > 1 else ''}): it was built "
                   "against another torch and its extension will not load")
            if row is not None and row.consequence:
                msg += f"; {row.consequence}"
            built = row.torch if row is not None else None
            remedy = (f"install the {key} built for torch {abi['torch']}, or pin torch=={built}" if built
                      else f"install the {key} built for torch {abi['torch']}")
            got = package_cause(key, env, facts, "needs torch symbols the installed torch does not define")
            if got is not None:
                remedy = got[1]
            findings.append(Finding(rule="abi", severity=severity,
                                    packages=((key, str(abi["version"])), ("torch", str(abi["torch"]))), message=msg,
                                    evidence=_read_files("abi-probe", sorted({f for f, _, _ in missing})),
                                    remedy=remedy))
            if severity == "warning":
                p = replace(p, status="warning")
        if pid.startswith("gpu-code:") and p.status == "pending":
            key = pid.split(":", 1)[1]
            p, found = _judge_gpu_code(p, judge_cap,
                                       facts.primary_modules(key) if hasattr(facts, "primary_modules") else ())
            findings.extend(found)
        cudart = abi.get("torch_cudart")
        if cudart:
            theirs = foreign_cuda_runtimes({c for e in abi["files"] for c in e.get("cudart", [])}, cudart)
            if theirs:
                key = pid[4:]
                row = facts.kernel(key, abi["version"]) if hasattr(facts, "kernel") else None
                severity = row.on_mismatch if row is not None else "error"
                which = sorted({e["file"] for e in abi["files"] if foreign_cuda_runtimes(e.get("cudart", []), cudart)})
                findings.append(Finding(rule="cuda", severity=severity,
                                        packages=((key, str(abi["version"])), ("torch", str(abi["torch"]))),
                                        message=f"{key} links {', '.join(theirs)} but torch links {', '.join(cudart)}: two CUDA "
                                        "runtime majors in one process", evidence=_read_files("abi-probe", which),
                                        remedy=f"install the {key} built for torch {abi['torch']}"))
                # the loader stops at the missing runtime before any symbol: the static verdict says so too
                msg = (f"{which[0]} needs {', '.join(theirs)}; torch {abi['torch']} links "
                       f"{', '.join(cudart)} (a CUDA runtime this environment may not have)")
                if p.status == "passed":
                    p = replace(p, status="failed" if severity == "error" else "warning",
                                summary=f"{p.summary}, but it links {', '.join(theirs)} and torch links "
                                        f"{', '.join(cudart)}", error=msg)
                else:
                    p = replace(p, error=((p.error or "") + "\n" + msg).strip())
        if p is not probes[i]:
            probes[i] = p
            if at[pid] == i:
                by_id[pid] = p
    # -- extension modules of every other distribution ---------------------------------------------
    findings.extend(f for p in probes if p.id.startswith("extension:") for f in _extension_findings(p, env, facts))
    # -- static vs dynamic -----------------------------------------------------------------------
    agreement = _agreement(probes, by_id)
    for a in agreement:
        if not a.agree:
            key = a.package
            what = ("loads" if a.aspect == "load" else "runs its kernels on this GPU")
            findings.append(Finding(rule="static-dynamic", severity="warning", packages=((key, ""),),
                                    message=f"the static {a.aspect} check says {key} is {a.static}"
                                    + (f" ({'; '.join(a.reasons)})" if a.reasons else "")
                                    + f" but it {a.dynamic}: "
                                    + ("a break the static checks cannot see (operator registration, layouts, "
                                       "Python-level behaviour) or a loader detail" if a.static == "compatible" else
                                       f"the static verdict was wrong, {key} {what}"),
                                    remedy="trust the dynamic probes; report the case so that the matrix records it"))
    # -- GPU presence ----------------------------------------------------------------------------
    gpu_probed = bool(dev and dev.status in ("passed", "failed", "warning"))
    if not gpu_probed and not options.no_gpu:
        why = (dev.summary if dev else None) or "no device probe"
        findings.append(Finding(rule="no-gpu", severity="error", packages=(),
                                message=f"no GPU was probed ({why}): the GPU probes were skipped, so "
                                "this run cannot pass", remedy="run where the GPU is, or pass --no-gpu to check only "
                                "what runs without one"))
    # -- known failure signatures ----------------------------------------------------------------
    sigs = facts.rows("signature")
    explained: dict[int, tuple[ExplainedDoc, ...]] = {}  # id() of a probe record -> the signatures its text shows
    for p in probes:
        if p.status not in ("failed", "warning"):
            continue
        text = "\n".join([p.error or "", p.summary or "", *(p.warnings or ())])
        hits = diagnose([_blame(h, p.id) for h in match_signatures(text, sigs)], env, facts)
        if hits:
            explained[id(p)] = tuple(ExplainedDoc(id=h.id, cause=h.cause, remedy=h.remedy, match=h.text,
                                                  package=h.package or None, version=h.version or None,
                                                  rule=h.rule or None) for h in hits)
    probes.sort(key=_sort_key)
    unique = sorted(dict.fromkeys(findings), key=lambda f: (f.severity != "error", f.rule, f.pins, f.message))
    failed = any(p.status == "failed" for p in probes)
    ok = not failed and not any(f.severity == "error" for f in unique)
    counts = {s: sum(1 for p in probes if p.status == s) for s in STATUSES}
    docs = tuple(probe_doc(p, explained.get(id(p))) for p in probes)
    return VerifyOutput(ok=ok, target=target.name if target else None, device=device,
                        counts=CountsDoc(passed=counts["passed"], warning=counts["warning"], failed=counts["failed"],
                                         skipped=counts["skipped"]),
                        probes=docs, findings=tuple(FindingDoc.of(f) for f in unique), agreement=tuple(agreement))


def _extension_findings(p: ProbeRecord, env: Env, facts: Any) -> list[Finding]:
    """One error per cause among a distribution's extension modules that do not import (``extension:`` probe)."""
    d = cast(ExtensionData, p.data or {})
    dist, ver = p.id.split(":", 1)[1], str(d.get("version") or "")
    out = []
    by_kind: dict[str, list[ExtensionFailure]] = {}
    for f in d.get("failures") or []:
        by_kind.setdefault(f["kind"], []).append(f)
    for kind, fs in sorted(by_kind.items()):
        f = fs[0]
        where = f["file"] or f["module"]
        more = f" (and {len(fs) - 1} more)" if len(fs) > 1 else ""
        if kind == "numpy-abi":
            remedy = (f"install a {dist} release built against the installed NumPy's C ABI (`pip install -U {dist}`; "
                      "releases built for NumPy 2 load on 1.x and 2.x), or pin numpy<2")
        elif kind == "torch-symbol":
            remedy = f"install the {dist} built for the installed torch (or the torch it was built for)"
        elif kind == "missing-library":
            remedy = f"install what provides the library {dist} links (see its installation notes), or reinstall {dist}"
        else:
            remedy = f"reinstall {dist} built for this environment (`pip install --force-reinstall {dist}=={ver}`)"
        said = extension_break(kind, dist, ver, env, facts)  # the cause as check and explain name it
        out.append(Finding(rule=said.rule if said else "extension", severity="error", packages=((dist, ver),),
                           message=f"Because {where}{more} of {dist} {ver} does not import ({f['cause']}), "
                           f"we can conclude that {said.sentence() if said else dist + ' fails when it is imported in this environment'}",
                           evidence=(("import-probe", f"imported {f['module']}: {f['error'].splitlines()[0]}"),),
                           remedy=remedy))
    return out


def _blame(h: Any, pid: str) -> Any:
    """A probe's hit blames the probe's own package where its text names none (an import from a --path folder
    shows no site-packages path): ``import:torchvision`` -> torchvision, ``smoke:sgl_kernel-rmsnorm`` -> sgl-kernel."""
    if h.package or ":" not in pid:
        return h
    kind, rest = pid.split(":", 1)
    if kind not in ("import", "load", "ops", "smoke", "abi", "gpu-code"):
        return h
    mod = rest.split("-", 1)[0] if kind == "smoke" else rest
    return replace(h, package=mod if kind in ("abi", "gpu-code") else module_package(mod))


def _env(by_id: dict[str, ProbeRecord], device: dict[str, Any] | None) -> Env:
    """What the probes found of the environment, for the signatures' causes and remedies."""
    installed = by_id.get("installed")
    inst = cast(InstalledData, (installed.data if installed else None) or {})
    cuda = {}
    if device:
        if device.get("cuda_driver"):
            cuda["driver_cuda"] = str(device["cuda_driver"])
        if device.get("driver"):
            cuda["driver"] = str(device["driver"])
        if device.get("cuda_runtime"):
            cuda["torch_cuda"] = str(device["cuda_runtime"])
    half = inst.get("half_installed") or {}
    return Env(versions=dict(inst.get("packages") or {}), cuda=cuda,
               half_installed={k: list(h.get("files") or []) for k, h in half.items()},
               targets={k: str(h["where"]) for k, h in half.items() if h.get("where")},
               capability=str((device or {}).get("capability") or ""), where="environment")


def static_load_verdict(abi: ProbeRecord) -> tuple[bool, list[str]]:
    """Whether an ``abi:`` probe's files should load into the installed torch, and why not.

    Two checks, either of which stops the dynamic loader: a torch symbol the installed torch does not
    define, and a CUDA runtime major that torch does not link (``libcudart.so.12`` next to a torch
    that links ``.so.13``: the image has no CUDA 12 runtime, so the load fails before any symbol).
    """
    data = cast(AbiData, abi.data or {})
    files = data.get("files") or []
    reasons = []
    gone = data.get("missing_files") or []
    if gone:
        reasons.append(f"half-installed: {', '.join(gone[:3])} listed in RECORD, not on disk")
    missing = sorted({s for e in files for s in e.get("missing", [])})
    if missing:
        reasons.append(f"{len(missing)} torch symbol(s) missing")
    torch_cudart = data.get("torch_cudart") or []
    if torch_cudart:
        theirs = foreign_cuda_runtimes({c for e in files for c in e.get("cudart", [])}, torch_cudart)
        if theirs:
            reasons.append(f"links {', '.join(theirs)}, torch links {', '.join(torch_cudart)}")
    return not reasons, reasons


def _agreement(probes: list[ProbeRecord], by_id: dict[str, ProbeRecord]) -> list[AgreementDoc]:
    """Static vs dynamic verdicts per extension distribution, for each aspect that has both.

    ``load``: the ``abi:`` probe (symbols and CUDA runtime) against ``import:``, ``load:`` and ``ops:``.
    ``gpu-code``: the ``gpu-code:`` probe (the code of the modules that decide, against the device)
    against the smoke tests that launch the package's kernels (``smoke:<module>-*``).
    """
    out: list[AgreementDoc] = []
    for p in probes:
        d_ = cast(AbiData, p.data or {})
        if not p.id.startswith("abi:") or (p.status == "skipped" and not d_.get("missing_files")) \
                or not (d_.get("files") or d_.get("missing_files")):
            continue
        key = p.id[4:]
        mod = DYNAMIC_OF.get(key)
        if not mod:
            continue
        found = [by_id.get(f"{kind}:{mod}") for kind in ("import", "load", "ops")]
        dyn = [d for d in found if d is not None and d.status != "skipped"]
        if dyn:
            static_ok, reasons = static_load_verdict(p)
            dyn_ok = all(d.status == "passed" for d in dyn) and not any(d.warnings for d in dyn)
            out.append(AgreementDoc(package=key, aspect="load", static="compatible" if static_ok else "incompatible",
                                    dynamic="loads" if dyn_ok else "fails to load", reasons=tuple(reasons),
                                    probes=(p.id, *(d.id for d in dyn)), agree=static_ok == dyn_ok))
        gc = by_id.get(f"gpu-code:{key}")
        smoke = sorted((s for s in probes if s.id.startswith(f"smoke:{mod}-") and s.status != "skipped"),
                       key=lambda s: s.id)
        if gc and gc.status in ("passed", "warning", "failed") and smoke:
            static_ok = gc.status != "failed"
            dyn_ok = all(s.status == "passed" for s in smoke)
            reasons = [] if static_ok else [gc.summary or ""]
            out.append(AgreementDoc(package=key, aspect="gpu-code",
                                    static="compatible" if static_ok else "incompatible",
                                    dynamic="runs" if dyn_ok else "fails to run", reasons=tuple(reasons),
                                    probes=(gc.id, *(s.id for s in smoke)), agree=static_ok == dyn_ok))
    return out


def _judge_device(dev: ProbeRecord, cap: tuple[int, int], target: Target | None) -> ProbeRecord:
    """The ``device`` record judged against ``target`` and torch's GPU code (a new record)."""
    d = cast(DeviceData, dict(dev.data or {}))
    problems = []
    if target is not None:
        tcap = gpu.parse_capability(target.compute_capability)
        d["target"] = target.name
        if tcap != cap:
            problems.append(f"device is {_cap_name(cap)}, target is {_cap_name(tcap)} ({target.name})")
        want = target.smem_per_block_optin
        have = d.get("smem_per_block_optin")
        d["target_smem_per_block_optin"] = want
        if want and have and have < want:
            problems.append(f"the device offers {have} bytes of shared memory per block (opt-in); kernels tuned "
                            f"for {target.name} expect {want}")
    archs = [a for a in d.get("torch_arch_list") or [] if a.startswith(("sm_", "compute_"))]
    runnable = []
    for a in archs:
        try:
            if gpu.runs_on(a, cap):
                runnable.append(a)
        except ValueError:
            pass
    if archs and not runnable:
        problems.append(f"torch carries GPU code for {', '.join(archs)}; none of it runs on {_cap_name(cap)}")
    if problems:
        return replace(dev, data=d, status="failed", error="; ".join(problems), summary=problems[0])
    return replace(dev, data=d)


def _judge_gpu_code(rec: ProbeRecord, cap: tuple[int, int] | None,
                    primary: tuple[str, ...] | list[str] = ()) -> tuple[ProbeRecord, list[Finding]]:
    """The GPU code of an extension's files against the capability: the judged record (a new one) and
    its findings.

    The files the package's loader picks (sgl_kernel: its ``sm90/`` or ``sm100/`` build) decide; of
    those, with ``primary`` patterns (the matrix's ``[[primary_modules]]``), only the matching ones
    decide and the rest are add-ons (vLLM's flash-attention, FlashMLA ...) whose missing code is a
    warning: the package runs, without that add-on, on this GPU.
    """
    key = rec.id.split(":", 1)[1]
    if cap is None:
        return replace(rec, status="skipped", summary="no GPU and no --target: nothing to judge the GPU code against"), []
    given = cast(GpuCodeData, rec.data or {})
    files = [f.copy() for f in given["files"]]
    findings: list[Finding] = []
    if any(f.get("variant") for f in files):
        want = sgl_kernel_variant(cap)
        loaded = [f for f in files if f.get("variant") == want] or files
    else:
        loaded = files
    deciding = [f for f in loaded if any(fnmatchcase(f["file"], pat) for pat in primary)] or loaded
    bad: list[GpuCodeFile] = []
    optional_bad: list[GpuCodeFile] = []
    for f in loaded:
        run = gpu.runnable(f["sass"] + f["ptx"], cap)
        f["runs"] = run
        f["decides"] = f in deciding
        if not run:
            (bad if f in deciding else optional_bad).append(f)
    ver = given["version"]
    error = rec.error
    if bad:
        f = bad[0]
        have = ", ".join(f["sass"] + f["ptx"])
        status = "failed"
        summary = f"{f['file']} carries no GPU code that runs on {_cap_name(cap)}"
        error = (f"{f['file']} carries {have}; none of it runs on {_cap_name(cap)} (a launch fails with: "
                 "no kernel image is available for execution on the device)")
        if len(bad) > 1:
            error += "; also " + ", ".join(x["file"] for x in bad[1:])
        findings.append(Finding(rule="gpu-code", severity="error", packages=((key, str(ver)),), message=error,
                                evidence=_read_files("arch-probe", [x["file"] for x in bad]),
                                remedy=f"install a {key} build with SASS for {_cap_name(cap)} (or PTX it can JIT)"))
    else:
        status = "passed"
        codes = sorted({c for f in deciding for c in f["runs"]})
        summary = f"{len(deciding)} file(s) carry code for {_cap_name(cap)} ({', '.join(codes)})"
    if optional_bad:
        names = ", ".join(f"{f['file']} ({', '.join(f['sass'] + f['ptx'])})" for f in optional_bad)
        if status == "passed":
            status = "warning"
            summary += f"; {len(optional_bad)} optional module(s) carry none"
            error = f"optional modules with no GPU code for {_cap_name(cap)}: {names}"
        findings.append(Finding(rule="gpu-code", severity="warning", packages=((key, str(ver)),),
                                message=f"{key}'s optional modules {names} carry no GPU code that runs on {_cap_name(cap)}: "
                                f"{key} runs there without them (e.g. another attention backend)",
                                evidence=_read_files("arch-probe", [x["file"] for x in optional_bad]),
                                remedy=f"nothing to do unless the feature is needed; a {key} build with SASS for "
                                f"{_cap_name(cap)} would carry it"))
    data = GpuCodeData(**given)
    data["files"] = files
    data["judged_for"] = _cap_name(cap)
    return replace(rec, status=status, summary=summary, error=error, data=data), findings
