"""The parent side of ``glmcompat verify``: start the probe groups, collect, judge, assemble one report.

Every probe group runs in its own process (``python -m glmcompat.ops.verify.gpuchecks GROUP``, seen from here
through :mod:`.children`), all at once, each under its own deadline: a crash or a hang in one is reported as that
group's failure and the others carry on. The parent imports no GPU package; it loads the fast matrix view
(:mod:`glmcompat.matrix.view`), and :mod:`.assemble` judges what needs both the device and the matrix (the target,
the GPU code of the extensions, the rules' findings for the target) and matches failures against the known
failure signatures (:mod:`glmcompat.model.signatures`).
"""

from __future__ import annotations

import os
import site
import sys
import time
from dataclasses import replace
from importlib.machinery import PathFinder
from typing import Any, cast

import glmcompat
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.store import cache_dir
from glmcompat.model.errors import InputError
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.model.outputs.verify import VerifyOutput
from glmcompat.ops.verify.assemble import assemble, installed_rules
from glmcompat.ops.verify.children import SERVER_MARGIN, Child, Extensions, gather
from glmcompat.ops.verify.extensions import scan
from glmcompat.ops.verify.plan import Options
from glmcompat.ops.verify.records import GROUP_MODULE, DriverData, absent, group_ids

# Packages whose [[primary_modules]] the probe processes need (which modules decide, which are add-ons).
PRIMARY_FOR = ("vllm",)
# The groups that import torch first: forked from one process that imported it (Options.fork).
FORKED = ("torch", "torchvision", "torchaudio", "sgl_kernel", "flashinfer", "triton", "transformers", "sglang",
          "torchao", "vllm")


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
              "primary_modules": {k: list(facts.primary_modules(k)) for k in PRIMARY_FOR if facts.primary_modules(k)}}

    def left() -> float:
        return max(0.0, deadline - time.monotonic())

    children: list[Child] = []
    nvml = Child("nvml", {}, env, min(left(), 20), limit=min(options.timeout, 20))
    if options.all_gpus and not options.no_gpu:
        nvml.wait()
    groups = ["static", "torch", "torchvision", "torchaudio", "sgl_kernel", "flashinfer", "triton",
              "transformers", "sglang", "torchao", "vllm"]
    search = [os.path.abspath(p) for p in options.paths] + sys.path
    missing: list[ProbeDoc] = []  # the probes of groups whose module is not installed
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
    probes: list[ProbeDoc] = list(missing)
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
    report = assemble(installed_rules(probes, facts, options.model), facts, options, explicit)
    report = replace(report, elapsed_s=round(time.perf_counter() - t0, 3))
    if nccl is not None:
        report = gather(nccl, report)
    return report

