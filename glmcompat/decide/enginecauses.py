"""Causes and remedies of the engines' and companions' own checks (glmcompat/matrix/data/engines-signatures.toml):
each names the package, the versions and the library the line prints, and what the log shows besides (the version
the environment holds, the CUDA toolkit, the GPU's capability). Pure: no I/O.

The rows come from a sweep of the libraries' raise, warn and log sites (scripts/harvest_engine_raise_sites.py); the groups
read here are the ones those rows' patterns capture, one prefix per phrasing (``p_`` peft's check, ``a_`` accelerate's,
``w_`` the engines' "version is wrong", ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from glmcompat.decide.logenv import Env
from glmcompat.decide.logenv import shown as _shown
from glmcompat.decide.cudacauses import named_gpu
from glmcompat.decide.cudacauses import torch_cuda as cuda_of_torch
from glmcompat.matrix.view import Facts
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit

Cause = tuple[str, str]


def _first(g: Mapping[str, str], *keys: str) -> str:
    return next((g[k].strip() for k in keys if g.get(k, "").strip()), "")


def _who(h: Hit, env: Env, pkg: str = "") -> str:
    """The library whose check it is, as the log names it (with its version where the log shows one), or ""."""
    if not h.package or (pkg and canonicalize(h.package) == canonicalize(pkg)):
        return ""
    return _shown(h.package, h.version or env.version(h.package))


def _subject(g: Mapping[str, str], pkg: str) -> str:
    """The library a raised check names as its sentence's subject ("DGL requires PyTorch >= 2.1.0" -> dgl), or ""."""
    who = g.get("rq_who") or g.get("ol_who") or g.get("pd_who") or ""
    return "" if not who or canonicalize(who) == canonicalize(pkg) or who.lower() in ("it", "this", "which") \
        else canonicalize(who)


def _lib_name(text: str) -> str:
    """A library as a check names it ("SentencePiece", "🤗 Datasets", "auto-awq") -> its name as a word."""
    return re.sub(r"^[^\w]+", "", text).strip().strip("`'")


# flash-attn's optional extension modules -> the csrc/ directory of its source that builds each
_FA_CSRC = {"fused_dense": "fused_dense_lib", "fused_dense_lib": "fused_dense_lib", "xentropy_cuda": "xentropy",
            "dropout_layer_norm": "layer_norm", "rotary_emb": "rotary"}


def _needs_package(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """library-needs-package: which package, for what, and the line's own install command."""
    g = h.groups
    pkg = _lib_name(_first(g, "tf_lib", "q_pkg", "acc_pkg", "acc2_pkg", "mm_pkg", "cp_pkg", "v_pkg", "sq_pkg", "cb_pip", "ci_pkg", "fa_ext", "fa2", "fa_mod", "pv_pkg", "ni_pkg", "lg_pkg",
                               "ni2_pkg", "fa_for", "xf_pkg", "po_pkg", "po2_pkg", "po3_pkg", "sk_pkg", "bl_pkg"))
    req = _first(g, "ac_req", "v_req", "acc_pip", "acc2_pip", "mm_pip", "sq_pip", "cb_pip", "gen_pip", "gen2_pip", "gi_pip",
                 "rp_pip", "tr_req", "ro_pip", "ro2_pip", "bk_pip", "sk_pip")
    if "ac_req" in g:
        pkg = req.split(">", 1)[0].split("=", 1)[0]
    if "bl_pkg" in g:  # PyTables' Blosc2 library: the distribution of that name ships it (blosc2/lib)
        req = pkg.lower()
    if "rp_pip" in g and req:  # "requires Accelerate: `pip install accelerate`": the pip command spells the distribution
        pkg = re.split(r"[\s<>=!~\[;'\"]", req, maxsplit=1)[0]
    pkg = pkg.removesuffix(" is not installed")  # flash-attn's extension lines name the module in the alternative
    if not pkg and req:  # only the line's pip command names it
        pkg = re.split(r"[\s<>=!~\[;'\"]", req.strip("'\" "), maxsplit=1)[0]
    if not pkg:
        return None
    what = (f"{g['tf_obj']}" if g.get("tf_obj") else g["lg_obj"] if g.get("lg_obj") else g["sk_obj"] if g.get("sk_obj") else f"loading {g['q_what']} quantized models" if g.get("q_what")
            else "this feature")
    who = _who(h, env, pkg) or "the library"
    # the release the line's own install command asks for ("pip install 'accelerate>=0.26.0'"): the version the check wants
    spec = req.strip("'\" ") if req and any(op in req for op in ("<", ">", "=")) else ""
    need = spec if spec.lower().replace("_", "-").startswith(pkg.lower().replace("_", "-")) else pkg
    cause = (f"{who} needs {need} for {what}, and {pkg} is not installed in the Python that runs: it is an optional "
             f"dependency {who} imports only for this, so installing {who} did not bring it")
    if "bl_pkg" in g:  # a library PyTables links, loaded with ctypes at import, not an optional Python import
        return (f"{who} loads the {pkg} library (lib{req}, which the {req} distribution ships in its {req}/lib, or "
                f"{who}'s own wheel) at import and finds none: the {req} distribution is not installed in the Python that "
                "runs (an install with --no-deps, or a source or conda build of it without its library)",
                f"install {req} in the same environment (pip install '{req}', the release {who} requires: `pip show "
                f"{h.package or '<the package>'}` lists it), or reinstall {who} from its wheel with its dependencies")
    if "tr_req" in g:  # transformers' Trainer: is_accelerate_available(min_version) is False for a missing one and an older
        cause = (f"{who} needs {need} for {what}, and {pkg} is not installed in the Python that runs or is older: the "
                 "check refuses both alike")
    if g.get("fa_for", "").endswith("3"):  # FlashAttention-3: its own flash_attn_3 module, built from hopper/
        return (f"{who} was asked for FlashAttention-3, and its module (flash_attn_3, built from flash-attention's "
                "hopper/ directory, not the flash-attn wheel) is not installed in the Python that runs",
                "build FlashAttention-3 against the installed torch (cd flash-attention/hopper && python setup.py "
                "install) on a Hopper GPU, or load the model with attn_implementation='flash_attention_2' or 'sdpa'")
    if "fa2" in g or "fa_mod" in g or "fa_for" in g:  # transformers' flash-attention check: flash-attn's wheel must fit torch and CUDA
        return (f"{who} was asked for FlashAttention ({g.get('fa_mod') or 'flash_attn'}), and flash-attn is not "
                "installed in the Python that runs",
                "install flash-attn built for the installed torch and CUDA (its prebuilt wheel for that pair, or pip "
                "install flash-attn --no-build-isolation), or load the model with attn_implementation='sdpa'")
    if "cp_pkg" in g:
        cuda = env.cuda.get("torch_cuda", "")
        major = cuda.split(".", 1)[0] if cuda else ""
        return cause, (f"install {pkg} for torch's CUDA major in the same environment (pip install "
                       f"'{pkg}=={major}.*')" if major else
                       f"install {pkg} at the major of torch's CUDA (python -c \"import torch; print(torch.version.cuda)\"): "
                       f"pip install '{pkg}==12.*' for a CUDA 12 torch, '{pkg}==13.*' for CUDA 13")
    if "fa_ext" in g:  # flash-attn's optional extensions: built from its csrc/, never in its wheel
        return (f"{pkg}, an optional CUDA extension of flash-attn, is not installed: flash-attn's wheel carries only its "
                "attention kernels, and this module is built separately from flash-attn's csrc/ directory",
                f"build it against the installed torch from flash-attn's source at the installed release (cd "
                f"csrc/{_FA_CSRC.get(pkg, pkg)} && "
                "pip install . --no-build-isolation), or use a code path that does not need it")
    install = f"pip install '{req}'" if req else f"the install command its message gives for {pkg}"
    return cause, f"install {pkg} in the same environment ({install}), at the version {who} asks for"


# each phrasing's groups: (package, found, needed, upper bound)
_TOO_OLD = (("p_pkg", "p_have", "p_need", ""), ("a_pkg", "", "a_need", ""), ("w_pkg", "", "w_need", ""),
            ("f_pkg", "f_have", "f_need", ""), ("x_need", "x_have", "x_need", "x_max"), ("y_pkg", "", "y_need", ""),
            ("o_pkg", "o_have", "o_need", ""), ("t_pkg", "t_have", "t_need", ""), ("c_pkg", "", "c_need", ""),
            ("ct_pkg", "ct_have", "ct_need", ""), ("g_pkg", "g_have", "g_need", ""), ("pi_pkg", "", "pi_need", ""),
            ("rj_pkg", "rj_have", "rj_need", ""), ("yn_pkg", "", "yn_need", ""), ("ut_pkg", "ut_have", "ut_need", ""),
            ("yv_pkg", "", "yv_need", ""), ("dr_pkg", "", "dr_need", ""), ("rq_pkg", "", "rq_need", ""),
            ("ol_pkg", "", "ol_need", ""), ("dt_pkg", "dt_have", "dt_need", ""), ("fv_pkg", "", "fv_need", ""),
            ("sd_pkg", "", "sd_need", ""), ("bv_pkg", "", "", ""), ("pe_pkg", "", "pe_need", ""),
            ("iv_pkg", "", "iv_need", ""), ("ov_pkg", "ov_have", "ov_need", ""), ("vp_pkg", "", "vp_need", ""),
            ("av_pkg", "", "av_need", ""), ("yi_pkg", "", "yi_need", ""), ("wo_pkg", "wo_have", "wo_need", ""),
            ("du_pkg", "", "du_need", ""), ("dk_pkg", "", "dk_need", ""),
            ("lr_pkg", "lr_have", "lr_need", ""), ("pd_pkg", "pd_have", "pd_need", ""), ("pq_pkg", "", "pq_need", ""))


def _needs_newer(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """library-needs-newer-package: the package, the version found (the line's, else the log's) and the minimum."""
    g = h.groups
    for pk, hk, nk, mk in _TOO_OLD:
        if g.get(pk):
            # xformers' own check names flash-attn in its words; the torch / transformers minimums carry their ">="
            pkg = ("Flash-Attention" if pk == "x_need" else "DeepSpeed" if pk == "dr_pkg"
                   else g[pk].replace(">=", "").strip())
            need, top = g.get(nk, "").rstrip(".") if nk else "", g.get(mk, "")
            have = g.get(hk, "").rstrip(".") if hk else ""
            break
    else:
        return None
    name = {"DeepSpeed": "deepspeed", "auto_gptq": "auto-gptq", "Flash-Attention": "flash-attn", "CUPTI": "cupti-python", "Triton": "triton", "PyTorch": "torch",
            "Pytorch": "torch", "FlashAttention": "flash-attn", "PEFT": "peft",
            "Transformers": "transformers"}.get(pkg.split()[0], pkg)
    have = have or env.version(canonicalize(name))
    if have == need and not top:  # the log's only mention of the package is the check's own minimum (">= 2.1.0")
        have = ""
    want = f"{name}>={need}" + (f",<={top}" if top else "")
    who = "xformers" if "x_need" in g else _who(h, env, name) or _subject(g, name) or "the library"
    found = f"{name} {have} is installed" if have else f"the installed {name} is older"
    if not need:  # accelerate's bitsandbytes check names no version: "make sure you have the latest version"
        return (f"{who} checks {name}'s version for this feature and finds {'it' if not have else name + ' ' + have} "
                f"too old (it asks for the latest {name})",
                f"install the newest {name} in the same environment (pip install -U {name})")
    if top:
        return (f"{who} accepts {name} from {need} to {top} (the range it was built and tested against), and {found}: "
                "its flash-attention operators are disabled",
                f"install {name} within that range (pip install '{want}' --no-build-isolation), or the {who} release "
                f"made for {name} {have or 'the installed one'}")
    if name == "triton":  # torch pins the triton it was built with: moving triton alone breaks torch
        return (f"{who} needs triton >= {need}, but {found}: torch pins triton exactly, so the installed torch brought "
                "the older one",
                f"install the torch release whose pinned triton is >= {need} (`pip show torch` lists its triton pin), "
                "rather than triton alone")
    return (f"{who} checks {name}'s version for this feature and needs {name} >= {need}, but {found}: an older "
            f"environment or another package's pin left {name} behind",
            f"install {name} >= {need} in the same environment (pip install -U '{want}')")


def _fa_build_cuda(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """flash-attn-build-cuda-too-old: the CUDA it needs, and the toolkit the log shows (nvcc -V); FlashAttention-3's
    hopper/setup.py and flash-attn's csrc/ extensions in their own words."""
    g = h.groups
    need = g.get("need", "") or g.get("ext_need", "")
    nvcc = env.cuda.get("nvcc", "")
    torch_cuda = cuda_of_torch(env, facts)
    have = f"the nvcc it found (CUDA_HOME, else PATH) is CUDA {nvcc}" if nvcc else \
        "the nvcc it found (CUDA_HOME, else PATH) is older"
    built = f" (torch is built for CUDA {torch_cuda})" if torch_cuda else ""
    fits = torch_cuda and need and at_least(torch_cuda, need)
    toolkit = f"the CUDA {torch_cuda} toolkit (torch's own CUDA)" if fits else \
        f"a CUDA toolkit >= {need} of torch's CUDA major{' (' + torch_cuda + ')' if torch_cuda else ''}"
    if "fa3" in g:  # FlashAttention-3 (hopper/): built from source only, with the nvcc on CUDA_HOME
        return (f"FlashAttention-3's setup.py (flash-attention's hopper/ directory) compiles its Hopper kernels with the "
                f"nvcc it finds and refuses a CUDA toolkit older than {need}; {have}{built}",
                f"install {toolkit} or CUDA 12.8, which FlashAttention-3's README recommends; put its nvcc first "
                "(CUDA_HOME=/usr/local/cuda-X.Y and $CUDA_HOME/bin first on PATH, so that nvcc -V prints that release) "
                "and rerun the build in hopper/ (python setup.py install)")
    if "fa_ext" in g:  # one of flash-attn's optional csrc/ extensions, built from its own directory
        return (f"flash-attn's {g['fa_ext']} extension (its csrc/ directory) compiles with the nvcc it finds and refuses a "
                f"CUDA toolkit older than {need}; {have}{built}",
                f"install {toolkit}, set CUDA_HOME to it and rebuild the extension in its csrc/ directory "
                "(pip install . --no-build-isolation)")
    return (f"flash-attn's setup.py compiles its CUDA extension with the local CUDA toolkit and needs CUDA {need} or "
            f"newer; {have}{built}",
            f"install flash-attn's prebuilt wheel for this torch and CUDA (no compiler needed), or set CUDA_HOME to "
            f"{toolkit} and rebuild with pip install flash-attn --no-build-isolation")


def at_least(have: str, need: str) -> bool:
    """Whether CUDA release ``have`` (12.4) is at least ``need`` (12.3, 11)."""
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in v.split(".") if x.isdigit())
    return key(have) >= key(need)


def _deepgemm(h: Hit, env: Env, facts: Facts) -> Cause | None:
    g = h.groups
    if not g.get("need"):
        return None
    return (f"DeepGEMM compiles its kernels at run time with nvcc and needs nvcc {g['need']} or newer, and the nvcc vLLM "
            f"found ({g.get('nvcc', 'on CUDA_HOME')}) is {g.get('have', 'older')}: vLLM disables DeepGEMM",
            f"install a CUDA toolkit >= {g['need']} and set CUDA_HOME to it before starting vLLM")


def _nccl_feature(h: Hit, env: Env, facts: Facts) -> Cause | None:
    g = h.groups
    lib, need = g.get("library", ""), g.get("need", "") or g.get("need2", "")
    system = bool(g.get("library")) and not re.search(r"site-packages|dist-packages", lib)
    return (f"the NCCL vLLM loaded{' (' + lib + ')' if lib else ''} is older than NCCL {need}, which {g.get('feature') or g.get('nsym') or 'the feature'} needs: it "
            "lacks the function the feature calls" + (" (a system NCCL, not the nvidia-nccl wheel torch brings)"
                                                      if system else ""),
            f"install nvidia-nccl-cu12 / nvidia-nccl-cu13 >= {need} (the one of torch's CUDA major; pip install --no-deps)"
            + (f" and stop {lib} from being loaded first (VLLM_NCCL_SO_PATH, LD_LIBRARY_PATH)" if system else ""))


# the reasons DeepSpeed's op builders give for refusing a JIT build (the groups of deepspeed-ops-mismatch that read them)
DS_REASONS = frozenset({"ds_aio", "ds_cutlass", "ds_cuda", "ds_torchcuda", "ds_triton", "ds_torch_need"})


def _deepspeed(h: Hit, env: Env, facts: Facts) -> Cause | None:
    g = h.groups
    if g.get("what") and g.get("built"):
        what = {"PyTorch": "torch"}.get(g["what"], g["what"])
        return (f"DeepSpeed's ops were compiled at install against {what} {g['built']}, and {what} {g['have']} runs now: "
                "prebuilt ops (DS_BUILD_OPS) are tied to the torch and CUDA they were built with",
                f"reinstall DeepSpeed against the installed torch (pip install --force-reinstall --no-cache-dir "
                f"--no-deps deepspeed, building its ops again), or go back to {what} {g['built']}")
    if g.get("ninja"):
        return (f"DeepSpeed JIT-builds its {g.get('op', '')} op with ninja, and ninja is not installed",
                "pip install ninja (in the same environment), or install DeepSpeed with the op prebuilt (DS_BUILD_OPS=1)")
    if g.get("op") and not g.get("ninja") and g.keys() & DS_REASONS:  # the op's own reason (its error_log)
        said = f"DeepSpeed cannot JIT-build its {g['op']} op on this machine: its op builder's check refused it"
        if g.get("ds_aio"):
            return (f"{said}: the libaio development files (libaio.so and its headers) the op compiles against were not "
                    "found", "install libaio (apt install libaio-dev, yum install libaio-devel, or conda install -c "
                    "conda-forge libaio with CFLAGS/LDFLAGS pointing at it), then load the op again")
        if g.get("ds_cutlass"):
            return (f"{said}: the op compiles against CUTLASS 3.1 or newer, which it did not find (neither CUTLASS_PATH "
                    "nor the nvidia-cutlass package)",
                    "pip install nvidia-cutlass (3.1 or newer), or clone CUTLASS and set CUTLASS_PATH to it")
        if need := g.get("ds_cuda", ""):
            return (f"{said}: the op needs CUDA {need} or newer, in both torch's build and the CUDA toolkit that compiles "
                    "it", f"install a torch built for CUDA {need} or newer and a matching CUDA toolkit (CUDA_HOME)")
        if g.get("ds_torchcuda"):
            return (f"{said}: the op needs torch's CUDA build, and the installed torch has none (a CPU-only or ROCm "
                    "build)", "install a CUDA build of torch (PyTorch's cuXYZ index), or do without the op")
        if g.get("ds_triton"):
            return (f"{said}: the op supports only the triton releases its builder names, and the installed triton is "
                    "none of them (or absent)", "install a triton release the op's message names, or do without the op")
        if need := g.get("ds_torch_need", ""):
            return (f"{said}: the op supports only torch {need}, and the installed torch is outside that range",
                    f"install a torch {need}, or do without the {g['op']} op (its kernels are gone from later DeepSpeed "
                    "releases)")
    if g.get("aio"):
        return (f"DeepSpeed's {g['aio']} op needs the libaio development files (libaio.so and its headers) to build, and "
                "they were not found",
                "install libaio (apt install libaio-dev, or conda install -c conda-forge libaio with CFLAGS/LDFLAGS "
                "pointing at it), then reinstall DeepSpeed or let it JIT-build the op again")
    return None


def _flashinfer_kernels(h: Hit, env: Env, facts: Facts) -> Cause | None:
    have = h.groups.get("have", "")
    if not have:
        return None
    return (f"flashinfer-python {have} is installed without matching precompiled kernels: flashinfer-cubin / "
            f"flashinfer-jit-cache are absent or at another version than {have}, so FlashInfer compiles kernels at start-up "
            "(slow, and impossible without nvcc and ninja) or fails to import mismatched ones",
            f"install flashinfer-cubin=={have} (and flashinfer-jit-cache=={have} from FlashInfer's index for torch's CUDA), "
            "or run `vllm download-kernels` in this environment")


# the architecture a check names, as its compute capability (DeepSpeed's "only supported on <arch> and newer")
ARCH_CC = {"Kepler": "3.0", "Maxwell": "5.0", "Pascal": "6.0", "Volta": "7.0", "Turing": "7.5", "Ampere": "8.0",
           "Ada": "8.9", "Hopper": "9.0", "Blackwell": "10.0"}


def _dotted(cc: str) -> str:
    """``37`` or ``3.7`` -> ``3.7``; a tuple's ``3, 5`` -> ``3.5``."""
    cc = cc.replace(", ", ".").replace(",", ".").strip()
    return cc if "." in cc or len(cc) < 2 else f"{cc[:-1]}.{cc[-1]}"


def _sm(cc: str) -> str:
    return "sm_" + cc.replace(".", "")


def _the_gpu(h: Hit, env: Env, facts: Facts, have: str) -> tuple[str, str]:
    """(the GPU as the line or the log names it, its capability): the line's, else the log's GPU and the matrix's
    [[target]] capability of that product, else the environment's (verify)."""
    gpu = (h.groups.get("gpu") or "").strip()
    named = named_gpu(env, facts)
    if not gpu:
        gpu = env.notes.get("gpu_name", "") or (named[0] if named else "")
    if not have and named is not None:
        have = _dotted(named[1])
    return gpu, have or env.capability


def _ds_filtered(h: Hit, env: Env, facts: Facts) -> Cause:
    """DeepSpeed's op builder with no compute capability left after its op's filter_ccs (op_builder/builder.py
    compute_capability_args): the +PTX entry it prunes is the highest it was to build for (a JIT build's is the GPU's
    own), so every one went: the GPU is older than the op's floor."""
    g = h.groups
    op = g.get("ds_ccop", "")
    name, have = _the_gpu(h, env, facts, f"{g['ds_fmaj']}.{g['ds_fmin']}" if g.get("ds_fmaj") else "")
    gpu = f"{name or 'this GPU'}" + (f" (compute capability {have}, {_sm(have)})" if have else "")
    which = f"its {op} op" if op else "an op"
    what = f"the {op} op" if op else "the op"
    return (f"DeepSpeed's op builder filtered out every compute capability it was to build {which} for: {gpu} is older "
            "than the op's floor (filter_ccs: the inference ops need Pascal, 6.0, or newer; fp_quantizer, the ragged and "
            "the cutlass inference ops Ampere, 8.0, or newer), so nothing is left to compile; no DeepSpeed version changes "
            "that",
            f"turn off what needs {what} on this GPU (DeepSpeed inference without kernel injection: "
            "replace_with_kernel_inject=False; another quantization than DeepSpeed's FP quantizer), or run on a GPU of "
            "compute capability 8.0 or newer")


def _bnb_int8(h: Hit, env: Env, facts: Facts) -> Cause:
    """gpu-capability-too-old of bitsandbytes before 0.37 (fix-n): its int8 matmul (igemmlt) runs on cuBLASLt's int8
    kernels, which need compute capability 7.5; on an older GPU its CUDA setup loads the _nocublaslt library, whose
    igemmlt prints "ERROR: Your GPU does not support Int8 Matmul!" and asserts. 0.37.0 runs int8 on every GPU (the int8
    weights cast to 16/32-bit for the matmul on one below 7.5)."""
    name, have = _the_gpu(h, env, facts, env.notes.get("gpu_cc", "").removeprefix("sm_"))
    have = have if "." in have else f"{have[:-1]}.{have[-1]}" if have.isdigit() and len(have) > 1 else have
    ver = env.version("bitsandbytes")
    who = f"bitsandbytes {ver}" if ver else "bitsandbytes"
    gpu = f"{name or 'this GPU'}" + (f" (compute capability {have})" if have else "")
    older = "older" if have else "older than that"
    return (f"{who}'s int8 matmul (igemmlt, used by load_in_8bit / Linear8bitLt) runs on cuBLASLt's int8 kernels, which "
            f"need compute capability 7.5 (Turing) or newer, and {gpu} is {older}: bitsandbytes before 0.37.0 loads its "
            "_nocublaslt library for such a GPU, whose igemmlt stops with this error (and an assertion) at the first "
            "int8 matmul",
            "upgrade bitsandbytes to 0.37.0 or newer (pip install -U bitsandbytes), which runs int8 on GPUs below 7.5 by "
            "casting the int8 weights to 16/32-bit for the matmul (slower), or load the model without 8-bit "
            "(fp16/bf16), or run on a GPU of compute capability 7.5 or newer")


def _capability(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """gpu-capability-too-old: the capability the feature needs and the GPU's (the line's, else the log's)."""
    g = h.groups
    if "bnb_int8" in g or "bnb_stub" in g:
        return _bnb_int8(h, env, facts)
    need = _first(g, "need", "need2", "need3", "need4", "need5", "need6")
    have = _first(g, "have", "have3", "have6") or (_dotted(g["gq_have"]) if g.get("gq_have") else "")
    if g.get("sm_only"):  # SGLang's list of the architectures a kernel is built for
        have = have or env.capability
        gpu = f"this GPU (compute capability {have})" if have else "this GPU"
        return (f"the kernel is built only for SM{g['sm_only']}, and {gpu} is none of them: no package version changes "
                "that", "choose another backend for this GPU (the option the line names), or run on one of those GPUs")
    if g.get("sm_min") or g.get("sm_min2"):  # SGLang's "requires SM90+", and its own floor "only supports sm75"
        sm = g.get("sm_min") or g["sm_min2"]
        need = f"{sm[:-1]}.{sm[-1]}"
    if g.get("nb_min"):  # numba's MIN_REQUIRED_CC, printed as a tuple
        need = _dotted(g["nb_min"])
    if g.get("ds_arch"):
        need = ARCH_CC.get(g["ds_arch"], "")
    if g.get("ds_ccop") or g.get("ds_fmaj"):  # DeepSpeed's filter_ccs dropped every capability the op was to build for
        return _ds_filtered(h, env, facts)
    if g.get("fa_ccmin"):  # transformers' FlashAttention check: a major, and the GPU's capability as a tuple
        need, have = f"{g['fa_ccmin']}.0", _dotted(g.get("fa_cchave", ""))
    if not need:
        return None
    name, have = _the_gpu(h, env, facts, have)
    dev = f" (device {g['dev']})" if g.get("dev") else ""
    gpu = (f"{name or 'this GPU'}{dev}" + (f", of compute capability {have} ({_sm(have)})," if have else ""))
    older = f"older than {need}" if not have else "older"
    floor = f"compute capability {need} ({_sm(need)})"
    if g.get("sm_min2"):  # the engine's own floor (SGLang's model runner refuses any older GPU)
        return (f"the serving engine runs only on GPUs of {floor} or newer, and {gpu} is {older}: it refuses the GPU at "
                "start; no package version changes that",
                f"run it on a GPU of {floor} or newer, or serve this model on this GPU with an engine that still "
                "supports it")
    if g.get("gp_kernel"):  # a CUDA program's own check of its kernel's capability (gpu-post, CudaMiner)
        return (f"the program's '{g['gp_kernel']}' CUDA kernel requires {floor} or newer, and {gpu} is {older}: the "
                "program refuses the GPU (\"Failed to init GPU, disabling device\"); no package version changes that",
                f"run it on a GPU of {floor} or newer (its CUDA kernels are built for nothing older), or use its other "
                "backend for this GPU where it has one (gpu-post's Vulkan provider)")
    if g.get("nb_min"):  # numba's own floor of the devices it accepts
        return (f"numba accepts only GPUs of {floor} or newer (its MIN_REQUIRED_CC), and {gpu} is {older}",
                f"install an older numba release whose floor still includes this GPU, with a CUDA toolkit that targets it "
                f"(CUDA 11.x for 3.5/3.7, CUDA 10.2 for 3.0), or run on a GPU of {floor} or newer")
    if g.get("nb_nvvm"):  # numba: the CUDA toolkit's NVVM targets nothing this old
        return (f"numba compiles CUDA kernels with the CUDA toolkit's NVVM, which targets {floor} or newer, and {gpu} "
                f"is {older}",
                "install a CUDA toolkit whose NVVM still targets this GPU with a numba release that supports it (CUDA "
                "11.x targets 3.5 and 3.7, CUDA 10.2 still 3.0; CUDA 12 starts at 5.0: conda install cudatoolkit=11.8 "
                f"with numba < 0.59), or run on a GPU of {floor} or newer")
    if g.get("ds_op"):  # DeepSpeed's op builder: is_compatible() refused the GPU
        arch = f" ({g['ds_arch']})" if g.get("ds_arch") else ""
        return (f"DeepSpeed's {g['ds_op']} op runs only on GPUs of {floor}{arch} or newer, and {gpu} is {older}: its "
                "op builder refuses to build it; no DeepSpeed version changes that",
                f"turn off what needs the {g['ds_op']} op on this GPU (DeepSpeed inference without kernel injection: "
                f"replace_with_kernel_inject=False), or run on a GPU of {floor} or newer")
    return (f"the feature runs only on GPUs of {floor} or newer, and {gpu if have or name else 'this GPU'} is "
            f"{older}: no package version changes that",
            f"choose a quantization or kernel that runs on {_sm(have) if have else 'this GPU'} (for "
            f"FP8, a weight-only int8/int4 format before sm_89), or run on a GPU of capability {need} or newer")


def _cuda_for_kernel(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """cuda-too-old-for-kernel: the CUDA the kernel needs and the one found (the line's, else the log's toolkit)."""
    g = h.groups
    if "fi_moe_w" in g or "fi_moe_w8" in g:
        return _fi_moe_fp4(g, env)
    need = _first(g, "need", "need2", "need3", "need4", "need5")
    have = _first(g, "have2", "have3", "have4") or env.cuda.get("nvcc", "") or env.cuda.get("torch_cuda", "")
    if not need:
        return None
    gpu = f"sm_{g['sm'].replace('.', '').rstrip('+')} " if g.get("sm") else ""
    return (f"the kernel compiled at run time for this {gpu}GPU needs CUDA {need} or newer, and the CUDA found "
            f"{'is ' + have if have else '(the nvcc on CUDA_HOME, else torch.version.cuda) is older'}",
            f"point CUDA_HOME at a CUDA toolkit >= {need} of torch's CUDA major, or install the torch build for CUDA "
            f">= {need} (PyTorch's cu{need.replace('.', '') if '.' in need else need + '0'} index or newer)")


def _fi_moe_fp4(g: Mapping[str, str], env: Env) -> Cause:
    """cuda-too-old-for-kernel for FlashInfer's CUTLASS fused MoE asked for FP4 weights it was compiled without: its JIT
    passes -DENABLE_FP4 to the Hopper (SM90) module only where the CUDA it finds is 12.8 or newer."""
    act, weight = g.get("fi_moe_act") or g.get("fi_moe_act8", ""), g.get("fi_moe_w") or g.get("fi_moe_w8", "")
    fmt = "NVFP4 or MXFP4 (packed as int64)" if weight in ("int64", "Long") else "MXFP4 (packed as uint8)"
    have = env.cuda.get("nvcc", "") or env.cuda.get("torch_cuda", "")
    found = f"the CUDA it found is {have}" if have else \
        "the CUDA it found (the nvcc on CUDA_HOME, else torch.version.cuda) is older"
    return (f"FlashInfer's CUTLASS fused MoE has no kernel for {fmt} weights with {act} activations: those kernels are "
            "compiled only with FP4 enabled, which FlashInfer's JIT does for Hopper (SM90) only with CUDA 12.8 or newer, "
            f"and {found}, so its fused_moe module was built without FP4 (on an Ada SM89 GPU FlashInfer never builds FP4 "
            "MoE kernels)",
            "install CUDA toolkit 12.8 or newer of torch's CUDA major (12.8 or 12.9 for a cu12 torch), point CUDA_HOME "
            "at it, and remove "
            "FlashInfer's JIT cache (~/.cache/flashinfer) so fused_moe is rebuilt with FP4; or install flashinfer-jit-cache "
            "of the installed flashinfer-python release built for cu128 or cu129 (its prebuilt modules have FP4); on an "
            "SM89 GPU, choose a MoE backend other than FlashInfer's CUTLASS one")


def _tgi_kernels(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """tgi-kernels-missing: the model the server refused for want of the kernels the line names; None (the row's own
    cause) for the other lines."""
    g = h.groups
    if "tgi_model" not in g:
        return None
    kernels = g.get("tgi_fa", "Flash Attention")
    return (f"text-generation-inference serves {g['tgi_model'].strip()} only with its {kernels} CUDA kernels, and they are "
            f"not installed (or did not import): TGI's Makefiles build the {kernels} kernels into its Docker image, so a "
            "pip or source install of text-generation-server without them, or kernels built against another torch or "
            "CUDA, cannot load that model",
            f"run the official image (ghcr.io/huggingface/text-generation-inference), or build {kernels} against the "
            "installed torch (cd server && make install-flash-attention, or install-flash-attention-v2 in later releases)")


def _gguf_arch(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """llama-cpp-arch-unknown: the architecture the GGUF file names, which the runtime's loader does not know."""
    arch = h.groups.get("ll_arch", "").strip()
    if not arch:
        return None
    return (h.cause.replace("the model architecture the GGUF file names", f"the model architecture '{arch}' the GGUF file "
                            "names"), h.remedy.replace("supports the architecture", f"supports '{arch}'"))


# signature id -> its cause builder (:data:`glmcompat.decide.diagnose.BUILDERS` holds these and the rest)
ENGINE_BUILDERS: dict[str, Callable[[Hit, Env, Facts], Cause | None]] = {
    "library-needs-package": _needs_package,
    "library-needs-newer-package": _needs_newer,
    "flash-attn-build-cuda-too-old": _fa_build_cuda,
    "deepgemm-nvcc-unusable": _deepgemm,
    "nccl-too-old-for-feature": _nccl_feature,
    "deepspeed-ops-mismatch": _deepspeed,
    "flashinfer-kernels-unavailable": _flashinfer_kernels,
    "gpu-capability-too-old": _capability,
    "cuda-too-old-for-kernel": _cuda_for_kernel,
    "tgi-kernels-missing": _tgi_kernels,
    "llama-cpp-arch-unknown": _gguf_arch,
}

__all__ = ["ENGINE_BUILDERS"]
