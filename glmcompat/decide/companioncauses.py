"""Causes of two parts of one stack that refuse each other at run time (glmcompat/matrix/data/companion-signatures.toml):
each names the two sides and their versions as the log prints them. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from glmcompat.decide.logenv import Env
from glmcompat.matrix.view import Facts
from glmcompat.model.signatures import Hit

Cause = tuple[str, str]


def _pair(h: Hit, group: str) -> tuple[str, str]:
    """The values of a group Ray's version check prints once per block (the cluster's, then this process's): the first
    and the last the log shows, the same value twice where only one shows (both blocks agree on it)."""
    values: Sequence[str] = [*([h.groups[group]] if group in h.groups else []), *h.also.get(group, ())]
    return (values[0], values[-1]) if values else ("", "")


def _ray(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """ray-version-mismatch: which of Ray, Python (and Ray 0.x's pyarrow) differ between the cluster and this process,
    from the two blocks of Ray's message, or Ray Client's one-line checks. None for a "Ray: X" / "Python: X" line with
    no part of the check's own words (a version listing)."""
    g: Mapping[str, str] = h.groups
    if "rc_head" in g:
        client, server = g["rc_client"], g["rc_server"]
        return (f"Ray Client's version check: this client runs Python {client} and the Ray cluster's server Python "
                f"{server}; a Ray Client must run the same Python minor version as the cluster (it sends pickled code "
                "and objects), so Ray refuses the connection",
                f"run the client with Python {'.'.join(server.split('.')[:2])} (the cluster's), with the cluster's Ray "
                "release installed, or start the cluster with the client's Python")
    if "rp_head" in g:
        return (f"Ray Client's version check: this client's Ray speaks client protocol {g['rp_client']} and the "
                f"cluster's server {g['rp_server']}: the client's Ray release is not the cluster's, so Ray refuses the "
                "connection",
                "install the cluster's Ray release in the client's environment (pip install 'ray==<the cluster's "
                "version>', `ray --version` on the head node names it), or start the cluster with the client's")
    if "rv_patch" in g or ("rv_head" not in g and "rv_where" not in g):
        return None  # Ray's warning of a Python patch release that differs (it runs), or a version listing
    (ray_c, ray_p), (py_c, py_p), (pa_c, pa_p) = _pair(h, "rv_ray"), _pair(h, "rv_py"), _pair(h, "rv_pa")
    where = g.get("rv_where") or next(iter(h.also.get("rv_where", ())), "")
    this = f"this process ({'on ' + where if where.startswith('node') else where})" if where else "this process"
    if "rv_head" not in g or not (ray_c or py_c):  # the log starts after the cluster's block, or stops before the values
        return (f"Ray's version check: {this} was started with another Ray release or Python than the cluster it joins "
                "(the versions it compares are on lines the log does not show), and Ray refuses it",
                h.remedy)
    differ = [(what, c, p) for what, c, p in (("Ray", ray_c, ray_p), ("Python", py_c, py_p), ("pyarrow", pa_c, pa_p))
              if c and p and c != p]
    if not differ:
        return (f"Ray's version check: {this} was started with another Ray release or Python than the cluster it joins "
                f"(the lines the log shows agree on Ray {ray_c or '?'} and Python {py_c or '?'}: the one that differs is "
                "on a line it does not show), and Ray refuses it",
                h.remedy)
    if {what for what, _, _ in differ} == {"pyarrow"}:
        return None  # Ray 0.x only warns of a pyarrow that differs (ray/services.py check_version_info): no failure
    mine = " and ".join(f"{what} {p}" for what, _, p in differ)
    theirs = " and ".join(f"{what} {c}" for what, c, _ in differ)
    names = {what for what, _, _ in differ}
    cause = (f"Ray's version check: {this} runs {mine}, and the cluster it joins was started with {theirs}: every node "
             "and driver of a Ray cluster must run the Ray release and the Python the cluster was started with (they "
             "exchange pickled code and objects and speak one protocol), so Ray refuses it")
    fixes = []
    if "Ray" in names:
        fixes.append(f"install ray=={ray_c} in this process's environment (pip install 'ray=={ray_c}'), the cluster's "
                     f"release, or restart every node of the cluster with Ray {ray_p}")
    if "Python" in names:
        level = "its minor release" if where == "Ray Client" else "Ray compares the patch release too"
        fixes.append(f"run this process with Python {py_c} (the cluster's; {level}), or start the cluster with Python "
                     f"{py_p}")
    if "pyarrow" in names:
        fixes.append(f"install pyarrow=={pa_c} here, the cluster's")
    return cause, "; ".join(fixes)


# a class as Python prints it ("<class 'transformers_modules.zhihan1996.DNABERT-2-117M.<commit>.configuration_bert.BertConfig'>")
_CLASS = re.compile(r"<class '(?P<path>[\w.-]{1,400})'>")
# the module transformers loads a checkpoint's remote code into: transformers_modules.<namespace>.<repo>.<commit>.<file>
_REMOTE = re.compile(r"transformers_modules\.(?P<owner>[\w-]{1,100})\.(?P<repo>[\w.-]{1,100}?)\.(?:[0-9a-f]{40}\.)?\w{1,100}\.\w{1,100}$")
# the first transformers release whose from_pretrained / from_config registers remote code's model class (and so runs the
# check), and the first that compares the classes by __name__ (transformers-4.31.0 and -4.49.0 wheels' auto_factory.py)
REGISTERS_REMOTE, BY_NAME = "4.31.0", "4.49.0"


def _config_class(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """remote-code-config-class-mismatch: the two classes the message names (a checkpoint's remote module, transformers'
    own), whether their names agree (the releases between REGISTERS_REMOTE and BY_NAME refuse a same-named pair), the
    transformers the log shows; None where the log shows the program's own AutoModel.register call (its own classes)."""
    if env.notes.get("auto_register"):
        return None
    g = h.groups
    model = _CLASS.search(g.get("cc_model", ""))
    passed = _CLASS.search(g.get("cc_passed", ""))
    have = env.version("transformers")
    installed = f"the installed transformers {have}" if have else "the installed transformers"
    remote = next((r for r in (_REMOTE.search(c.group("path")) for c in (passed, model) if c) if r), None)
    whose = f"the checkpoint {remote.group('owner')}/{remote.group('repo')}'s remote code" if remote else \
        "a checkpoint's remote code"
    if model is None or passed is None:
        return (f"{installed} refused to register {whose} (trust_remote_code=True) for its Auto class: transformers "
                f"{REGISTERS_REMOTE} and later register a remote model class when loading it, and check that its "
                "config_class is the configuration class the checkpoint's config.json loaded; this remote code was "
                "written for a transformers that did not (the class names are not in the log)",
                f"install transformers<{REGISTERS_REMOTE} (pip install 'transformers<{REGISTERS_REMOTE}'), the releases "
                f"that load remote code without that check; where both classes have one name, transformers>={BY_NAME} "
                "compares their names and accepts it; or set config_class in the remote modeling file to its own "
                "configuration class")
    m, p = model.group("path"), passed.group("path")
    same = m.rsplit(".", 1)[-1] == p.rsplit(".", 1)[-1]
    said = f"its model class's config_class is {m} and the configuration class the checkpoint loaded is {p}"
    if same:
        return (f"{installed} refused to register {whose} (trust_remote_code=True) for its Auto class: {said}, two "
                f"classes of one name; transformers from {REGISTERS_REMOTE} to the last before {BY_NAME} register a remote "
                "model class when loading it and refuse a config_class that is not that very class, so code written for an "
                f"older transformers (which registered nothing) fails there",
                f"install transformers>={BY_NAME} (pip install -U 'transformers>={BY_NAME}'), whose check compares the "
                f"classes' names, or transformers<{REGISTERS_REMOTE}, the release the remote code was written for; or set "
                "config_class in the remote modeling file to its own configuration class")
    return (f"{installed} refused to register {whose} (trust_remote_code=True) for its Auto class: {said}, another "
            f"class: transformers {REGISTERS_REMOTE} and later register a remote model class when loading it and "
            "refuse a config_class that is not the configuration class the checkpoint loaded",
            f"set config_class in the remote modeling file to the configuration class the checkpoint's config.json "
            f"names (auto_map), or install transformers<{REGISTERS_REMOTE} (pip install 'transformers<{REGISTERS_REMOTE}'), "
            "the releases that load remote code without that check")


# what a docker (podman) run gives the container a GPU with: --gpus (moby's DeviceRequests), the NVIDIA runtime, a CDI
# device (nvidia.com/gpu=...), the toolkit's environment variable the runtime reads, or /dev/nvidia* passed by hand
_GPU_ASKED = re.compile(r"--gpus(?:[= ]|$)|--runtime[= ]{1,4}nvidia\b|nvidia\.com/gpu|NVIDIA_VISIBLE_DEVICES|/dev/nvidia")


def _container(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """container-gpu-runtime-missing: the row's cause for the engine's own refusal of a GPU request; for a docker (or
    podman) run that asks for no GPU, the container started without one, where the log then shows torch counting no GPU
    (is_available() False, as a check prints it or a program says it) and no CPU-only torch. None otherwise."""
    g = h.groups
    if "cr_plain" not in g:
        return h.cause, h.remedy
    if _GPU_ASKED.search(g.get("cr_args", "")):
        return None  # the run asked for the GPU: its refusal, if any, is another line
    torch = env.notes.get("printed_torch", "") or env.version("torch")
    if not (env.notes.get("printed_avail") == "False" or env.notes.get("avail_said")) or torch.endswith("+cpu"):
        return None
    tool = g["cr_plain"]
    image = next((a for a in g.get("cr_args", "").split() if not a.startswith("-") and ("/" in a or ":" in a)), "")
    return (f"the container{f' ({image})' if image else ''} was started by a plain `{tool} run`, which asks for no GPU (no "
            f"--gpus, no --runtime=nvidia, no NVIDIA device): {tool} gives such a container neither the host's "
            "/dev/nvidia* devices nor its driver's libcuda.so.1, so torch inside it counts no GPU (is_available() is "
            "False) whatever the image holds",
            f"start the container with the GPU: {tool} run --gpus all ... (with the NVIDIA Container Toolkit installed on "
            f"the host{'; podman: --device nvidia.com/gpu=all' if tool == 'podman' else ''}), or the legacy nvidia-docker "
            "run, which adds --runtime=nvidia")


def _zerogpu(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """zerogpu-torch-unsupported: the torch releases the Hub's message lists as ZeroGPU's, and the torch pin the log
    shows where it shows one."""
    listed = h.groups.get("zg_versions", "")
    pin = env.version("torch")
    mine = f"pins torch {pin}" if pin else "pins a torch release"
    supported = f" (it supports {listed})" if listed else ""
    newest = listed.split(", ")[0] if listed else ""
    return (f"the Hugging Face Space's requirements.txt {mine} that ZeroGPU does not run{supported}: ZeroGPU supports "
            "a fixed list of torch releases, and the Space's build refuses any other at configuration, before the app "
            "starts",
            (f"pin torch=={newest} (or another release the message lists) in requirements.txt, with its torchvision / "
             "torchaudio of that release, or drop the torch pin (ZeroGPU preinstalls a supported torch)") if newest else
            h.remedy)


# the groups whose hit is left out where its builder finds no failure (glmcompat/decide/diagnose.py DROPPED)
COMPANION_DROPPED = {"ray-version-mismatch": ("rv_head", "rv_patch", "rv_ray", "rv_py", "rv_pa", "rv_where"),
                     "remote-code-config-class-mismatch": ("cc_head",),
                     "container-gpu-runtime-missing": ("cr_plain",)}

COMPANION_BUILDERS: dict[str, Callable[[Hit, Env, Facts], Cause | None]] = {
    "ray-version-mismatch": _ray,
    "remote-code-config-class-mismatch": _config_class,
    "container-gpu-runtime-missing": _container,
    "zerogpu-torch-unsupported": _zerogpu,
}

__all__ = ["COMPANION_BUILDERS", "COMPANION_DROPPED"]
