"""Causes and remedies of the failures that come from the machine's CUDA rather than a package's release: the driver
against torch's CUDA, a CPU-only torch, the CUDA libraries the loader finds (nvJitLink, cuDNN, the runtime, a stub
libcuda, cuda-bindings) and the toolkit's ptxas (issue 38). Each builder takes a :class:`~glmcompat.model.signatures.Hit`,
the :class:`~glmcompat.decide.logenv.Env` and the matrix, as :func:`glmcompat.decide.diagnose.diagnose` calls it.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from packaging.version import Version

from glmcompat.decide import cudadriver
from glmcompat.decide.logenv import Env
from glmcompat.decide.logenv import local as _local
from glmcompat.decide.logenv import public as _public
from glmcompat.decide.logenv import shown as _shown
from glmcompat.decide.logenv import v as _v
from glmcompat.matrix.rows import NvidiaLibrary
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.causes import Break
from glmcompat.model.names import product_key
from glmcompat.model.signatures import Hit


# The CUDA toolkits that know each GPU architecture (the first whose nvcc builds it, the last that still knows one a
# later toolkit dropped, the first whose ptxas knows it): the matrix's [[cuda_arch]] rows (glmcompat/matrix/data/
# cuda-archs.toml, from NVIDIA's CUDA toolkit release notes), read through Facts.cuda_archs.


def first_toolkit(code: str, facts: Facts) -> str:
    """The first CUDA toolkit whose nvcc builds ``code`` (``90a``, ``89``); "" where no row says."""
    return facts.cuda_archs("first").get(code, "")


def min_driver(cuda: str, facts: Facts) -> tuple[str, str]:
    """(the lowest driver a build for ``cuda`` runs on, CUDA ``cuda``'s own toolkit driver or ""): what ``check``'s
    driver rule reads (:func:`glmcompat.decide.cudadriver.needs`: the matrix's ``[[cuda]]`` rows, from NVIDIA's CUDA
    Toolkit release notes: minor-version compatibility, and "CUDA Toolkit and Corresponding Driver Versions")."""
    floor, _, exact = cudadriver.needs(cuda, facts)
    return floor, exact.driver if exact is not None else ""


# The CUDA labels PyTorch publishes torch builds under, per CUDA major, newest first (its cuXYZ indexes).
CUDA_LABELS = {"11": ("cu118",), "12": ("cu129", "cu128", "cu126", "cu124", "cu121"), "13": ("cu130",)}


def driver_cuda(found: str) -> str:
    """The CUDA version a driver API version stands for (1000 x major + 10 x minor: ``12040`` -> ``12.4``)."""
    n = int(found[:6])
    return f"{n // 1000}.{(n % 1000) // 10}"


def _torch_cuda(env: Env, facts: Facts) -> str:
    """The CUDA the log's torch was built with: collect_env's line, its +cuXYZ label, else the matrix's default build."""
    if env.cuda.get("torch_cuda"):
        return env.cuda["torch_cuda"]
    torch = env.version("torch")
    label = _local(torch) or ""
    m = re.fullmatch(r"cu(\d{2,3})(\d)", label)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    return (facts.torch_cuda(_public(torch)) or "") if torch else ""


def _major(cuda: str) -> str:
    return cuda.split(".", 1)[0]


def _label_for(drv: str) -> str:
    """The newest PyTorch CUDA label whose builds run on a driver for CUDA ``drv`` (its major's, not newer)."""
    labels = CUDA_LABELS.get(_major(drv), ())
    for label in labels:
        if _v(f"{label[2:-1]}.{label[-1]}") is not None and Version(f"{label[2:-1]}.{label[-1]}") <= Version(drv):
            return label
    return labels[-1] if labels else ""


def _driver(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """driver-too-old / driver-insufficient: the driver's CUDA (the "found version", else nvidia-smi's) against
    torch's build."""
    if "ngc_status" in h.groups:  # the compat status line alone: the detail of the refusal above it, or of a notice
        return None
    if "xla_driver" in h.groups or "xla_cut" in h.groups:  # XLA's own comparison of the driver with its toolchain
        return _xla_driver(h, env, facts)
    if need_rel := h.groups.get("ngc_need", ""):  # an NGC image's entrypoint check of the host's kernel driver
        host = h.groups.get("ngc_found", "") or env.cuda.get("driver", "")
        return (f"the container image was built for NVIDIA driver release {need_rel} or later (the driver of its CUDA "
                f"release), and the host's kernel driver{' (' + host + ')' if host else ''} is older: the image's CUDA "
                "forward-compatibility libraries (cuda-compat) did not initialize on it (its entrypoint reports "
                "compatibility mode UNAVAILABLE), so CUDA in the container fails or falls back to the CPU",
                f"upgrade the host's NVIDIA driver to {need_rel} or newer, or run an older release of the image, built for "
                "a CUDA the installed driver supports (NVIDIA's framework support matrix lists each release's driver; "
                "nvidia-smi's \"CUDA Version\" is the newest the driver runs); forward compatibility serves an older "
                "driver only on data-center GPUs (not GeForce or RTX workstation cards)")
    if image := h.groups.get("image_cuda", ""):  # the NVIDIA container toolkit's check of the image's NVIDIA_REQUIRE_CUDA
        floor, own = min_driver(image, facts)
        need = f" (driver >= {own or floor})" if own or floor else ""
        host = h.groups.get("host_cuda", "") or env.cuda.get("driver_cuda", "")
        return (f"the container image requires CUDA >= {image} (its NVIDIA_REQUIRE_CUDA), and the host's NVIDIA driver "
                f"supports an older CUDA{' (' + host + ')' if host else ''}: nvidia-container-cli refuses to start the "
                "container before anything in it runs",
                f"upgrade the host's NVIDIA driver to one for CUDA {image}{need}, or use an image built on the CUDA the "
                "driver supports (nvidia-smi's \"CUDA Version\")")
    if need_drv := h.groups.get("image_driver", ""):  # the same check of a driver>= condition of the image
        host = h.groups.get("host_driver", "") or env.cuda.get("driver", "")
        return (f"the container image requires NVIDIA driver >= {need_drv} (a driver>= condition of its "
                f"NVIDIA_REQUIRE_CUDA), and the host's driver{' (' + host + ')' if host else ''} is older: the NVIDIA "
                "container toolkit refuses to start the container before anything in it runs",
                f"upgrade the host's NVIDIA driver to {need_drv} or newer, or use an image whose CUDA the installed driver "
                "supports (nvidia-smi's \"CUDA Version\")")
    if image := h.groups.get("nvd_image", "") or h.groups.get("nvd_image_b", ""):  # nvidia-docker 1.0's own check
        host = h.groups.get("nvd_driver", "") or h.groups.get("nvd_driver_b", "")
        floor, own = min_driver(image, facts)
        need = f" (driver >= {own or floor})" if own or floor else ""
        driver = env.cuda.get("driver", "")
        return (f"the image is built on CUDA {image} (its com.nvidia.cuda.version label) and the host's NVIDIA driver"
                f"{' ' + driver if driver else ''} supports only CUDA {host}: nvidia-docker refuses to start a container "
                "whose CUDA is newer than the driver's",
                f"upgrade the host's NVIDIA driver to one for CUDA {image}{need}, or run an image built on CUDA {host} "
                f"or older (an nvidia/cuda tag for CUDA {host})")
    found = h.groups.get("found", "")
    drv = driver_cuda(found) if found else env.cuda.get("driver_cuda", "")
    driver = env.cuda.get("driver", "")
    torch = env.version("torch")
    built = _torch_cuda(env, facts)
    reports = f"CUDA {drv}" + (f" ({found})" if found else "") if drv else "an older CUDA"
    if not drv and not built:
        return None
    floor, own = min_driver(built, facts) if built else ("", "")
    said = Break(rule="driver", package="torch" if torch else "", version=torch, against=driver, built=built).sentence()
    if floor and own and floor != own:
        needs = (f", and CUDA {built} builds need driver >= {floor} (CUDA {_major(built)}.x minor-version compatibility) "
                 f"and >= {own}, CUDA {built}'s own driver, where that does not suffice (PTX JIT, newer driver APIs)")
    else:
        needs = f", and CUDA {built} builds need driver >= {floor or own}" if floor or own else ""
    cause = f"{said}; the driver reports {reports}{needs}"
    need = own or floor
    label = _label_for(drv) if drv else ""
    if torch and label:
        build = (f"install torch=={_public(torch)}+{label} from PyTorch's {label} index (a build for the driver's CUDA "
                 f"{_major(drv)}.x)")
    elif label:
        build = (f"install builds for the driver's CUDA {_major(drv)}.x (torch from PyTorch's {label} index: CUDA "
                 f"{_major(drv)}.x builds run on a CUDA {drv} driver)")
    else:
        build = "install builds for the CUDA the driver supports (nvidia-smi's \"CUDA Version\")"
    newer = f"a newer driver (>= {need} for CUDA {built})" if need else "a newer NVIDIA driver"
    return cause, f"{build}, or {newer}"


def _xla_driver(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """driver-too-old from XLA (jaxlib, tensorflow): the CUDA the driver supports (the line's, else nvidia-smi's) is
    older than the ptxas / PTX compiler the framework's pip CUDA wheels installed."""
    drv = h.groups.get("xla_driver", "") or env.cuda.get("driver_cuda", "")
    need = h.groups.get("xla_need", "")
    tool = "ptxas" if h.groups.get("xla_tool", "ptxas").startswith("ptxas") else "PTX compiler"
    need_mm = ".".join(need.split(".")[:2]) if need else ""
    driver = env.cuda.get("driver", "")
    own = min_driver(need_mm, facts)[1] if need_mm else ""  # PTX the driver links needs the toolkit's own driver
    shown = f"the NVIDIA driver{' ' + driver if driver else ''}" + (f" supports CUDA {drv}" if drv else " supports an older CUDA")
    cause = (f"XLA (jaxlib's or tensorflow's GPU compiler) found its CUDA {tool}"
             + (f" of CUDA {need}" if need else "") + f" newer than the driver: {shown}"
             + (f", older than CUDA {need_mm}" if need_mm else "")
             + "; the toolchain is the CUDA the framework's pip wheels installed (jax[cudaXY] and tensorflow[and-cuda] "
               "bring the newest CUDA of the major), and the driver cannot link what it produces, so XLA disables "
               "parallel compilation (and kernels that need the driver's JIT may fail)")
    newer = (f"a driver that supports CUDA {need_mm} (>= {own})" if need_mm and own else
             f"a driver that supports CUDA {need_mm}" if need_mm else "a newer NVIDIA driver")
    pin = (f"pin the pip CUDA wheels to the driver's CUDA {drv} (the nvidia-*-cu{_major(drv)} wheels at {drv}.*, "
           f"nvidia-cuda-nvcc-cu{_major(drv)} above all, which holds ptxas)" if drv else
           "pin the pip CUDA wheels (the nvidia-*-cuXY wheels, nvidia-cuda-nvcc above all) to the CUDA the driver supports "
           "(nvidia-smi's \"CUDA Version\")")
    return cause, (f"install {newer}, or {pin}; on a data-center GPU NVIDIA's CUDA forward-compatibility package "
                   "(cuda-compat) serves too")


def _bindings_unsupported(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-bindings-driver-unsupported: the driver's CUDA version cuda-bindings refused, and which side is older."""
    number = h.groups.get("cb_driver", "")
    who = (_shown("cuda-bindings", env.version("cuda-bindings")) if env.version("cuda-bindings") else
           "the installed cuda-bindings") + " (its module cuda.bindings)"
    if not number:  # 12.8's words: only CUDA 12 drivers
        drv = env.cuda.get("driver_cuda", "")
        return (f"{who} is built for CUDA 12 and accepts only a CUDA 12 driver when it loads nvJitLink or NVVM, and the "
                f"NVIDIA driver reports another CUDA major{' (' + drv + ')' if drv else ''}", h.remedy)
    drv = driver_cuda(number)
    if int(number) >= 13000:
        return (f"{who} is built for CUDA 12 and accepts only a CUDA 12 driver (12000 <= version < 13000) when it loads "
                f"nvJitLink or NVVM; the NVIDIA driver reports CUDA {drv} ({number}), a CUDA {_major(drv)} driver newer "
                "than the cuda-bindings knows, so it refuses it (NotSupportedError) and what compiles through it (numba-cuda's "
                "kernels) fails", h.remedy)
    floor, own = min_driver("12.0", facts)
    return (f"the NVIDIA driver reports CUDA {drv} ({number}), older than the CUDA 12 that {who} is built for: it accepts "
            "only a CUDA 12 driver (from 12000) when it loads nvJitLink or NVVM, so it refuses this one (NotSupportedError)",
            f"upgrade the NVIDIA driver to one for CUDA 12 (>= {floor or own or '525.60.13'}), or install the cuda-bindings "
            f"of the driver's CUDA major ({_major(drv)}.x)")


def _thd_nccl(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """torch-without-nccl from torch 0.4's THD backend (its own sentence asks for a build with NCCL 2): the row's words
    for c10d's messages."""
    if "thd_cmake" in h.groups:  # torch's own CMake (THD) said so while building: the build found no NCCL 2
        return ("this torch source build found no NCCL 2 (NCCL 1, or an NCCL whose version it could not read, or none): "
                "its CMake left the NCCL distributed backend out (USE_DISTRIBUTED_NCCL off), so the torch it builds has "
                "no nccl backend for torch.distributed",
                "install NCCL 2 (libnccl2 and libnccl-dev, or NVIDIA's NCCL archive) and point the build at it "
                "(NCCL_ROOT_DIR, or NCCL_LIB_DIR and NCCL_INCLUDE_DIR), remove the build directory (CMake caches what it "
                "found) and build again until it prints \"NCCL Version 2 or higher found\"; or install a CUDA wheel of "
                "torch, which is built with NCCL 2")
    if "thd" not in h.groups:
        return None
    torch = env.version("torch")
    who = f"torch {torch}" if torch else "this torch"
    return (f"{who} was built without the NCCL 2 that its THD distributed NCCL backend needs (USE_DISTRIBUTED_NCCL "
            "off): the source build found no NCCL 2 installation (the NCCL 1 torch 0.4 bundles does not serve THD), or was "
            "built without CUDA, so the nccl backend is left out and torch.distributed refuses it",
            "rebuild torch with NCCL 2 found (point NCCL_ROOT_DIR, or NCCL_LIB_DIR and NCCL_INCLUDE_DIR, at the NCCL 2 "
            "installation before `python setup.py install`; the build's NCCL lines say which it found), or install a "
            "CUDA wheel of torch, which is built with NCCL 2; or start the process group with backend=\"gloo\"")


def _forward_compat(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    driver, drv = env.cuda.get("driver", ""), env.cuda.get("driver_cuda", "")
    if not driver and not drv:
        return None
    shown = f"driver {driver}" + (f" (CUDA {drv})" if drv else "") if driver else f"a CUDA {drv} driver"
    return (f"the kernel's {shown} is paired with a newer CUDA forward-compatibility libcuda (cuda-compat) on a GPU that "
            "forward compatibility does not support (error 804)",
            f"remove the cuda-compat directory from LD_LIBRARY_PATH (or use an image without cuda-compat) and install "
            f"builds for CUDA {drv or 'the driver supports'}{' (PyTorch' + chr(39) + 's ' + _label_for(drv) + ' index)' if drv and _label_for(drv) else ''}, "
            "or upgrade the kernel driver")


def _dir_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else path


def _nvjitlink(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    if h.groups.get("jit_input"):  # nvJitLink's "bad input" on a toolkit's own libcudadevrt.a
        path = h.groups["jit_input"]
        return (f"nvJitLink refuses the CUDA device runtime archive {path} as bad input (NVJITLINK_ERROR_INVALID_INPUT): "
                "libcudadevrt.a belongs to one CUDA toolkit release and the nvJitLink linking it is older than that "
                "release (a pip CUDA wheel's archive fed to an older local toolkit's nvJitLink, or the reverse): CUDA "
                "libraries of two toolkit releases mixed",
                "link with an nvJitLink at least as new as the toolkit that built the archive: install the "
                "nvidia-nvjitlink wheel of that CUDA release (pip install -U nvidia-nvjitlink for the same CUDA major) or "
                "update the CUDA toolkit, so that the nvJitLink found first (LD_LIBRARY_PATH, CUDA_HOME) is the newer "
                "one; or point the link at the libcudadevrt.a of the nvJitLink's own toolkit")
    need = h.groups.get("need", "").replace("_", ".")
    lib, provider = h.groups.get("library", "a CUDA library"), h.groups.get("provider", "libnvJitLink.so")
    loaded = env.libs.get(provider, "")
    where = f" (the loader took {loaded})" if loaded else ""
    cause = (f"{lib} (from torch's nvidia-* wheels) needs nvJitLink {need or 'newer'} ({h.groups.get('symbol', '')}), but "
             f"the {provider} loaded first is older{where}: an older CUDA toolkit's library on LD_LIBRARY_PATH (or an older "
             "nvidia-nvjitlink wheel) wins over the one torch's wheels bring")
    drop = (f"remove {_dir_of(loaded)} from LD_LIBRARY_PATH" if loaded and "site-packages" not in loaded
            else "remove the CUDA toolkit's lib64 (e.g. /usr/local/cuda/lib64) from LD_LIBRARY_PATH")
    return cause, (f"{drop} so that torch's site-packages/nvidia/nvjitlink/lib is used, or install "
                   f"nvidia-nvjitlink-cu{need.split('.')[0] if need else '12'}>={need or '<the CUDA torch was built with>'}")


def _cudnn_version(text: str) -> str:
    parts = [p for p in re.split(r"[,\s()]+", text) if p]
    if len(parts) >= 2:
        return ".".join(parts)
    n = parts[0] if parts else ""
    if n.isdigit() and len(n) >= 5:  # cuDNN 9 on: major*10000 + minor*100 + patch (cudnn_version.h), 90100 = 9.1.0
        v = int(n)
        return f"{v // 10000}.{(v % 10000) // 100}.{v % 100}"
    if n.isdigit() and len(n) >= 4:  # cuDNN 7/8 as one number: 7102 = 7.1.2, 8500 = 8.5.0
        v = int(n)
        return f"{v // 1000}.{(v % 1000) // 100}.{v % 100}"
    return n


def _framework_cudnn(text: str) -> str:
    """A cuDNN version another framework's check prints as its version / 100, split in two at the last digit (cuDNN 8.4
    prints 8.4, cuDNN 9.5's 90500 prints 90.5): the cuDNN release it stands for."""
    major, _, minor = re.sub(r"\s", "", text).partition(".")
    if not major.isdigit() or not minor.isdigit():
        return text
    n = int(major) * 10 + int(minor)
    return f"{n // 100}.{n % 100}" if n >= 900 else f"{n // 10}.{n % 10}"


def _cudnn(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    g = h.groups
    if "framework" in g or "framework_major" in g:  # another framework's own check (its build against the loaded cuDNN)
        who = g.get("framework") or g.get("framework_major", "")
        built = _framework_cudnn(g["fw_built"]) if "fw_built" in g else g.get("fw_built_major", "")
        found = _framework_cudnn(g["fw_found"]) if "fw_found" in g else g.get("fw_found_major", "")
        return (f"{who} was built against cuDNN {built}, but the cuDNN the loader found is the older cuDNN {found}: another "
                "cuDNN on the loader's path (LD_LIBRARY_PATH, a system or conda copy) wins over the one its build needs",
                f"put cuDNN {built} or newer first on the loader's path (remove the directory holding cuDNN {found} from "
                f"LD_LIBRARY_PATH, or install cuDNN {built}), or install the {who} build made for cuDNN {found}")
    if "jax_framework" in g:  # JAX's own check at backend start (cuDNN's version as one number: 8906 = 8.9.6)
        built, found = g["jax_built"], g["jax_found"]
        return (f"{g['jax_framework']} (its jaxlib or CUDA plugin) was built against cuDNN {built} "
                f"({_cudnn_version(built)}), but the cuDNN it loaded reports {found} ({_cudnn_version(found)}), which is "
                "older: another cuDNN on the loader's path (LD_LIBRARY_PATH, a system, conda or another framework's copy) "
                "wins over the one the build needs, so the CUDA backend does not start and JAX falls back to the CPU",
                f"install cuDNN {_cudnn_version(built)} or newer where the loader finds it first (the nvidia-cudnn wheel "
                "of jaxlib's CUDA major, or drop the older copy's directory from LD_LIBRARY_PATH), or install a jaxlib "
                f"release built for "
                f"cuDNN {_cudnn_version(found)}")
    if "c2_built" in g:  # caffe2's own check (common_cudnn.h CheckCuDNNVersions): the cuDNN it was built with, the loaded one
        built, found = _cudnn_version(g["c2_built"]), _cudnn_version(g["c2_found"])
        who = _shown(h.package, env.version(h.package)) if h.package and h.package != "torch" else "caffe2"
        return (f"{who} (caffe2's CheckCuDNNVersions) was built against cuDNN {built} ({g['c2_built']}), but the cuDNN it "
                f"loaded at run time is cuDNN {found} ({g['c2_found']}): "
                + ("caffe2 accepts only the same major and minor or a newer runtime" if int(g["c2_found"]) < int(g["c2_built"])
                   else "this caffe2 release accepts only the exact cuDNN it was built with")
                + ", and another cuDNN on the loader's path (LD_LIBRARY_PATH, a system or conda copy) wins over the one "
                "its build needs",
                f"put cuDNN {built} (or a newer {built.split('.')[0]}.x) first on the loader's path (drop the directory "
                f"holding cuDNN {found} from LD_LIBRARY_PATH, or install cuDNN {built}), or install the caffe2/torch build "
                f"made for cuDNN {found}")
    if "cudnn_status" in g:  # cuDNN's own status: its libraries are of two releases
        return (f"cuDNN reports {g['cudnn_status']}: the cuDNN libraries the process loaded are of different releases (the "
                "front library from one cuDNN, its sub-libraries from another: a system or conda cuDNN on the loader's path "
                "next to the nvidia-cudnn wheel)",
                "keep one cuDNN: remove the other copy's directory from LD_LIBRARY_PATH (or `unset LD_LIBRARY_PATH`) so that "
                "every libcudnn*.so comes from the same place (for torch, its nvidia-cudnn wheel)")
    built, found = _cudnn_version(g.get("compiled", "")), _cudnn_version(g.get("runtime", ""))
    torch = env.version("torch")
    loaded = next((p for so, p in env.libs.items() if so.startswith("libcudnn")), "")
    where = f" from {_dir_of(loaded)}" if loaded else ""
    cause = (f"{'torch ' + torch if torch else 'torch'} was built against cuDNN {built}, but cuDNN {found} was loaded{where}: "
             "another cuDNN on the loader's path (LD_LIBRARY_PATH, a system or conda copy) wins over the nvidia-cudnn wheel "
             "torch brings")
    drop = (f"remove {_dir_of(loaded)} from LD_LIBRARY_PATH" if loaded and "site-packages" not in loaded
            else "remove the directory holding the other libcudnn from LD_LIBRARY_PATH (or `unset LD_LIBRARY_PATH`)")
    return cause, f"{drop} so that torch loads its own cuDNN {built}, or install cuDNN {built} there"


def _default_label(facts: Facts, torch: str) -> str:
    """The cuXYZ label of ``torch``'s default Linux wheel (its pinned nvidia-cuda-runtime, torch-releases.toml): a CUDA
    build that release surely has on PyTorch's index; "" where the matrix does not record it."""
    row = next((r for r in facts.rows("release") if r.package == "torch" and torch and r.version == _public(torch)), None)
    pin = next((t for t in (row.requires if row is not None else ()) if t.startswith("nvidia-cuda-runtime-cu")), "")
    m = re.search(r"==(\d{1,2})\.(\d)", pin)
    return f"cu{m.group(1)}{m.group(2)}" if m else ""


def _installed_cpu(env: Env) -> str:
    """What the log shows of a CPU-only torch being installed ("" where nothing): a +cpu wheel, PyTorch's CPU index
    (its /whl/cpu path), the package index's torch wheel for Windows or macOS."""
    torch, index, wheel = env.version("torch"), env.notes.get("index", ""), env.notes.get("torch_os_wheel", "")
    said = []
    if _local(torch) == "cpu" and torch != env.notes.get("printed_torch"):  # a check's print is no install
        said.append(f"torch {torch} (a +cpu wheel)")
    if re.search(r"/whl/(?:nightly/)?cpu(?:/|$)", index):
        said.append(f"from PyTorch's CPU index ({index})")
    if wheel:
        where = "macOS, where torch has no CUDA build" if "macosx" in wheel else "Windows, where its default torch is CPU-only"
        said.append(f"{wheel}.whl, the package index's default wheel for {where}")
    return ", ".join(said)


def _deserialized(env: Env, facts: Facts, installed: str) -> tuple[str, str] | None:
    """torch/serialization.py's "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is
    False": a CPU-only torch (torch.version.cuda None) and a CUDA torch on a machine without a visible GPU both make
    is_available() False; None where the log shows a CUDA (or ROCm) build of torch, whose GPU or driver is missing."""
    if installed:
        return _cpu_install(env, facts, installed)
    torch = env.version("torch")
    if _local(torch) and _local(torch) != "cpu":
        return None
    build = f"torch {torch}" if torch else "torch"
    return (f"torch.load restores tensors saved on a CUDA device, and torch.cuda.is_available() is False here: {build} "
            "is a CPU-only build (torch.version.cuda is None: a +cpu wheel, PyTorch's CPU index, or a default wheel of a "
            "platform without CUDA builds), or a CUDA build of torch on a machine or container where no NVIDIA GPU and "
            "driver are visible; both make is_available() False",
            "check python -c \"import torch; print(torch.version.cuda, torch.cuda.is_available())\": None means the "
            "CPU-only build, so install torch from PyTorch's CUDA index for the driver's CUDA (e.g. the cu128 index, "
            "with torchvision/torchaudio of the same build); a CUDA version with False means the GPU is not visible "
            "(nvidia-smi must list it; docker run --gpus all); to load on the CPU on purpose, torch.load(..., "
            "map_location=torch.device('cpu'))")


def _r_torch_cpu(cuda: str, supported: str) -> tuple[str, str]:
    """torch-cpu-only where the R torch package's installer (mlverse/torch R/install.R install_type) found a CUDA its
    release has no LibTorch build for, and so installed the CPU-only LibTorch."""
    supported = supported.strip(" ,.")
    cudas = [c for c in supported.split(", ") if re.fullmatch(r"\d{1,2}\.\d{1,2}", c)]

    def key(c: str) -> tuple[int, ...]:
        return tuple(int(p) for p in c.split("."))

    # the newest CUDA it supports that the machine's CUDA major runs (an older runtime on a newer driver)
    older = [c for c in cudas if key(c)[0] <= key(cuda)[0]]
    pick = max(older, key=key) if older else ""
    return (f"the R torch package found CUDA {cuda} and its release has no LibTorch build for it (it supports: {supported}), "
            f"so install_torch() installed the CPU-only LibTorch: torch runs without CUDA on this machine",
            f"install an R torch release whose LibTorch is built for CUDA {cuda}, or tell its installer a CUDA it supports "
            + (f"that the driver runs (Sys.setenv(CUDA = \"{pick}\"), with that CUDA's libraries installed) " if pick else "")
            + "and reinstall LibTorch: torch::install_torch(reinstall = TRUE)")


def _cpu_torch(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    if "r_cuda" in h.groups:  # fix-x: the R torch package's installer fell back to the CPU LibTorch
        return _r_torch_cpu(h.groups["r_cuda"], h.groups["r_supported"])
    if "cpu_commented" in h.groups:  # fix-q: the +cpu version a check's print() wrote as a comment after the call
        h = replace(h, groups={**h.groups, "cpu_printed": h.groups["cpu_commented"]})
    installed = _installed_cpu(env)
    printed = env.notes.get("printed_torch", "")  # a version check's torch.__version__ (its output line)
    if "cpu_printed" in h.groups and h.groups["cpu_printed"] != printed:
        return None  # a +cpu version on a line of its own that no check printed as torch.__version__ (torchvision's)
    # the check that printed a CPU build's torch.__version__ (or a listing's +cpu torch) also printed is_available() False
    checked = env.notes.get("printed_avail") == "False" and (_local(printed) == "cpu" or "cpu_version" in h.groups
                                                              or "cpu_printed" in h.groups)
    # a program's own word that torch.cuda.is_available() returned False, beside the CPU build's version or collect_env's
    # "CUDA used to build PyTorch: None" (torch/utils/collect_env.py): the CPU build is why it did
    said = env.notes.get("avail_said", "") if {"cpu_version", "cpu_printed", "cuda_none"} & h.groups.keys() else ""
    if {"cuda_asked", "cuda_said"} & h.groups.keys():  # torch.version.cuda None: torch/version.py's cuda of a CPU build
        none = "cuda_said" in h.groups or env.notes.get("printed_cuda") == "None"
        # ... and of a ROCm build (torch.version.hip set) and of every macOS build: no CPU-only torch to replace there;
        # a label's None ("CUDA version: None") is torch's only where the log shows torch's version
        if not none or "printed_hip" in env.notes or "mac_os" in env.notes or "macosx" in env.notes.get("torch_os_wheel", "") \
                or ("cuda_said" in h.groups and not env.version("torch")):
            return None
        said = said or ("torch.version.cuda is None" if "cuda_asked" in h.groups else h.groups["cuda_said"])
    if "deser_cuda" in h.groups:  # torch.load of CUDA tensors where torch.cuda.is_available() is False
        return _deserialized(env, facts, installed)
    if "avail_false" in h.groups:  # is_available() False names no build: only the CPU build the log installed says it
        return _cpu_install(env, facts, installed) if installed else None
    gpu = env.cuda.get("driver") or env.cuda.get("driver_cuda") or env.capability
    # the NVIDIA GPU the log names (collect_env's "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3060", which
    # it prints from nvidia-smi -L whatever torch's build: torch/utils/collect_env.py get_gpu_info)
    named = env.notes.get("gpu_name", "")
    other = env.notes.get("torch_other_build", "")  # torch-directml, a +rocm wheel: a torch built for another device
    if "webui_no_gpu" in h.groups and not other and "cpu_build" not in env.notes and "cpu_version" not in h.groups:
        return None  # the webui's check (torch.cuda.is_available() False) names no build: a driver's absence reads alike
    cuda_none = {"cuda_asked", "cuda_said"} & h.groups.keys()  # a None it printed, beside is_available()'s False
    if cuda_none and not gpu and not named and env.notes.get("printed_avail") != "False" and "avail_said" not in env.notes:
        return None
    if ({"cpu_version", "cpu_printed", "cuda_none", "built_false"} & h.groups.keys() and not gpu and "cpu_build" not in env.notes
            and not other and not checked and not said and not named):
        return None  # a CPU build's version alone is no failure: only next to an NVIDIA GPU the log shows
    if installed and not other and "conda_cpu" not in h.groups:  # the log shows the CPU build being installed
        return _cpu_install(env, facts, installed)
    if other:  # the log names the build: torch-directml (DirectX 12, no CUDA), ROCm's +rocm wheels (AMD GPUs)
        kind = "ROCm (AMD GPUs)" if "rocm" in other.lower() else "DirectML (torch-directml, DirectX 12)"
        return (f"the installed torch is a build for {kind}, not CUDA (the log shows {other}): torch.cuda finds no "
                "CUDA device with it, so a program that checks for CUDA refuses to start on this NVIDIA GPU",
                "install the CUDA build of the program and of torch (the CUDA, not the DirectML/AMD, package of the "
                "program; torch from PyTorch's CUDA index for the driver's CUDA, cu128 for a driver of CUDA 12.8 or newer), with torchvision of the same build")
    if conda := h.groups.get("conda_cpu", ""):  # conda's listing: the pytorch channel's CPU build (pyX.Y_cpu_N)
        return (f"conda installed pytorch {conda} as its CPU-only build ({h.groups.get('conda_build', '')}, with the "
                "cpuonly / pytorch-mutex cpu packages): the solver picked it over the CUDA builds (pyX.Y_cudaZ_cudnnW), "
                "often because another package in the environment pins a build or version the CUDA one cannot meet",
                f"ask conda for the CUDA build explicitly (conda install pytorch={conda}=*cuda* pytorch-cuda or "
                "cudatoolkit of the CUDA wanted -c pytorch -c nvidia, after conda remove cpuonly), or install the package "
                "that forced the CPU build from a channel whose build accepts the CUDA pytorch")
    torch = h.groups.get("cpu_version") or h.groups.get("cpu_printed") or (printed if checked else "") or env.version("torch")
    arm = env.cuda.get("platform", "") in ("aarch64", "arm64", "sbsa")
    drv = env.cuda.get("driver_cuda", "")
    label = _label_for(drv) if drv else ("cu130" if torch and (_v(_public(torch)) or Version("0")) >= Version("2.11") else "cu128")
    if checked and not drv and torch:
        label = _default_label(facts, torch) or label  # a CUDA build this release surely has (its default wheel's)
    pin = f"torch=={_public(torch)}+{label}" if torch else f"torch (its +{label} build)"
    why = (" (on Linux aarch64, the package index's default torch wheels up to 2.10 are CPU-only)" if arm else
           " (a +cpu wheel, or a default wheel of a platform the index has no CUDA build for)")
    if checked:
        why += f" (the log's check printed torch.__version__ {printed or torch} and torch.cuda.is_available() False)"
    elif said:
        why += f" (the log says {said}, and torch's version is {torch or 'a CPU build'})"
    if gpu:
        why += (f" on a machine with an NVIDIA GPU (driver {env.cuda.get('driver') or '?'}"
                + (f", CUDA {drv}" if drv else "") + "): torch cannot use it")
    elif named:
        why += f" on a machine with an NVIDIA GPU (the log names it: {named}): torch cannot use it"
    return (Break(rule="gpu-code", package="torch" if torch else "", version=torch, built="cpu").sentence() + why,
            f"install {pin} from PyTorch's {label} index"
            + (f" (driver CUDA {drv})" if drv else "") + ", with torchvision/torchaudio of the same build")


# a C++ name's first namespace, as the Itanium ABI mangles it (_ZN5cudnn3ops...: cudnn::ops::...; _ZNK a const member
# function, _ZTV/_ZTI/_ZTS a vtable, typeinfo or its name): the library whose prefix that namespace is owns the symbol
_NAMESPACE = re.compile(r"_Z(?:T[VIS])?N[rVK]{0,3}(\d{1,3})")
CUDNN = "libcudnn"  # the [[nvidia_library]] row of cuDNN, whose libraries' mix-up cudnn-sublibrary-missing names


def symbol_owner(facts: Facts, symbol: str) -> NvidiaLibrary | None:
    """The NVIDIA library that owns ``symbol``: its C API by prefix (cudnnCreate -> libcudnn), a C++ name by its first
    namespace where that namespace is exactly a library's prefix (_ZN5cudnn3ops... -> libcudnn; cudnn_frontend, a
    header-only library compiled into its user, is no library's); None where neither says."""
    if (m := _NAMESPACE.match(symbol)) is not None:
        name = symbol[m.end(): m.end() + int(m.group(1))]
        row = facts.nvidia_symbol_owner(name)
        return row if row is not None and name in row.symbols else None
    return facts.nvidia_symbol_owner(symbol)


def _cudnn_owned(symbol: str, facts: Facts) -> bool:
    return bool(symbol) and (row := symbol_owner(facts, symbol)) is not None and row.library == CUDNN


def _install_of(where: str) -> str:
    """Which install a cuDNN directory is, in words: the pip wheel's, a conda environment's, the system's; "" if unknown."""
    d = where.replace("\\", "/")
    if "-packages/nvidia/" in d:
        return "the pip nvidia-cudnn wheel's"
    if re.search(r"/(?:ana|mini)conda\d?/|/mambaforge/|/miniforge\d?/|/envs/|/conda/", d):
        return "the conda environment's"
    if d.startswith(("/lib", "/usr/lib", "/usr/local/cuda", "/usr/local/lib")):
        return "the system's"
    return ""


def _cudnn_mixed(g: Mapping[str, str], env: Env) -> tuple[str, str] | None:
    """cudnn-sublibrary-missing where a cuDNN library lacks a symbol that cuDNN itself owns (a cudnn* function, a name in
    its C++ namespace cudnn::, or any symbol the loader's version tag binds to a libcudnn* sub-library): the shim
    (libcudnn.so.N) and its sub-libraries are one release's set, and two installs' sub-libraries are mixed."""
    symbol = (g.get("shim_symbol") or g.get("sub_symbol") or g.get("sub_internal") or g.get("bare_symbol")
              or g.get("ltr_cudnn_symbol") or g.get("why_what") or "")
    node = (g.get("sub_node") or g.get("sub_own_node") or g.get("bare_node") or g.get("vn_cudnn_node")
            or g.get("ltr_cudnn_node") or g.get("why_node") or "")
    full = (g.get("shim_path", "") + g.get("shim_lib", "") or g.get("sub_path", "") + g.get("sub_lib", "")
            or g.get("ltr_cudnn_path", "") + g.get("ltr_cudnn_lib", "") or g.get("path") or g.get("vn_cudnn_requirer")
            or "")
    lib = full.replace("\\", "/").rsplit("/", 1)[-1]
    where = full[: len(full) - len(lib)].rstrip("/\\")
    provider = g.get("vn_cudnn_dir", "") + g.get("vn_cudnn_provider", "")
    loading = g.get("library", "")  # cuDNN 8's front library was loading this sub-library when it failed
    major = m.group(1) if (m := re.search(r"\.so\.(\d+)", lib or node)) else ""
    torch_cuda = env.cuda.get("torch_cuda", "")
    cu = torch_cuda.split(".", 1)[0] if torch_cuda else ""
    wheel = f"nvidia-cudnn-cu{cu}" if cu else "nvidia-cudnn-cu12 (nvidia-cudnn-cu13 for CUDA 13)"
    install = _install_of(where)
    shown = lib or "a cuDNN sub-library"
    from_ = f" from {where}" + (f" ({install[4:]} cuDNN)" if install else "") if where else ""
    what = (f"{symbol}, " + ("a cuDNN function" if symbol.startswith("cudnn") else "a name in cuDNN's C++ namespace "
                             "cudnn::" if _NAMESPACE.match(symbol) and "5cudnn" in symbol[:12] else "cuDNN's own code")
            if symbol else "the symbol-version node ")
    owner = f" of {node} (the loader's version tag names the sub-library that provides it)" if node else \
        " of the cuDNN release the rest came from"
    found = (f"the {node or 'cuDNN library'} the loader found{' (' + provider + ')' if provider else ''} is of another "
             "cuDNN release without it" if node else "the sub-library the loader found for it is of another cuDNN release")
    head = f"cuDNN could not load its sub-library {loading}: " if loading and loading != lib else ""
    sub = f"libcudnn*.so{'.' + major if major else ''}"
    return (f"{head}{shown}{from_} needs {what}{owner}, but {found}: cuDNN's shim (libcudnn.so"
            f"{'.' + major if major else ''}) and its sub-libraries are one release's set, and here sub-libraries of two "
            "cuDNN installs are mixed (two cuDNN copies on the loader's path: LD_LIBRARY_PATH, /usr/lib, a conda "
            "environment's lib, the pip nvidia-cudnn wheel)"
            + (" (the system's package, found by the loader before the environment's own)" if install == "the system's"
               else ""),
            "keep one cuDNN on the loader's path: "
            + (f"`ldd {full} | grep cudnn` shows where {node or 'each sub-library'} comes from; " if full else "")
            + f"remove the other install's directory from LD_LIBRARY_PATH (and /etc/ld.so.conf.d) so that every {sub} "
            + (f"comes from the install {shown} is from ({where}{', ' + install if install else ''})" if where
               else "comes from one install")
            + f", or install one complete cuDNN{' ' + major if major else ''} there and uninstall the other: the pip "
            f"{wheel} wheel's (its nvidia/cudnn/lib first in LD_LIBRARY_PATH: python -c \"import nvidia.cudnn, os; "
            "print(os.path.dirname(nvidia.cudnn.__file__) + '/lib')\"), the conda environment's (conda install cudnn), or "
            f"the system's (one release for all of {sub})"
            + (f"; {node or shown} must not come from another release than {lib if node else 'libcudnn.so'}"
               if lib else ""))


def _cpu_install(env: Env, facts: Facts, installed: str) -> tuple[str, str]:
    """torch-cpu-only where the log shows the CPU build installed: that build, and the command that installs a CUDA one
    (PyTorch's index at the CUDA label this release has, the log's own index host where it shows the CPU one)."""
    torch, index, wheel = env.version("torch"), env.notes.get("index", ""), env.notes.get("torch_os_wheel", "")
    if "macosx" in wheel:
        said = Break(rule="gpu-code", package="torch" if torch else "", version=torch, built="cpu").sentence()
        return (f"{said} (the log installed {installed}): torch.cuda finds no GPU with it, and no CUDA build of torch "
                "exists for macOS",
                "run on Linux or Windows with an NVIDIA GPU and torch's CUDA build there, or use Apple's GPU on macOS "
                "(torch.device('mps'))")
    drv = env.cuda.get("driver_cuda", "")
    label = (_default_label(facts, torch) if torch else "") or (_label_for(drv) if drv else "cu128")
    if drv and _label_for(drv) and _v(drv) is not None and _v(f"{label[2:-1]}.{label[-1]}") is not None and \
            Version(f"{label[2:-1]}.{label[-1]}") > Version(drv):
        label = _label_for(drv)  # a build the driver runs
    url = re.sub(r"/whl/(?:nightly/)?cpu(?=/|$)", f"/whl/{label}", index) if "/whl/" in index else ""
    pin = f"torch=={_public(torch)}" if torch else "torch"
    where = f"--index-url {url}" if url else f"--index-url <PyTorch's index>/whl/{label}"
    said = Break(rule="gpu-code", package="torch" if torch else "", version=torch, built="cpu").sentence()
    gpu = (f" on a machine with an NVIDIA GPU (driver {env.cuda.get('driver') or '?'}" + (f", CUDA {drv}" if drv else "")
           + "): torch cannot use it") if env.cuda.get("driver") or drv else ""
    return (f"{said} (the log installed {installed}){gpu}; torch.cuda.is_available() is False and CUDA calls fail "
            "(\"Torch not compiled with CUDA enabled\") whatever the GPU and driver",
            f"uninstall it and install torch's CUDA build: pip uninstall torch && pip install {pin} {where} "
            f"(the {label} build{f' for the driver CUDA {drv}' if drv else ''}; PyTorch's install page lists the cuXYZ "
            "indexes), with torchvision/torchaudio from the same index")


def _cudnn_sub(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cudnn-sublibrary-missing: name the sub-library and whether it was absent or from another cuDNN."""
    g = h.groups
    if "ltr_cudnn_node" in g:  # glibc's "symbol X[,] version <cuDNN node> not defined in file": a cuDNN library's own
        # need is a mixed cuDNN; another library's (torch's, or none named) is cuda-toolkit-clash's
        return _cudnn_mixed(g, env) if g.get("ltr_cudnn_lib", "").startswith("libcudnn") else None
    if g.keys() & {"shim_symbol", "sub_symbol", "sub_internal", "bare_symbol"} or (
            "vn_cudnn_node" in g and _soname(g["vn_cudnn_requirer"]).startswith("libcudnn")):
        return _cudnn_mixed(g, env)  # a cuDNN library lacking a symbol cuDNN owns: another release's
    if "vn_cudnn_node" in g:  # another library needs cuDNN's node (torch's): cuda-toolkit-clash names that
        return None
    cut = g.get("cut_lib", "")  # the message's second sentence read alone ("Please make sure <library> is in ...")
    if win := g.get("win_lib", "") or (cut if cut.endswith(".dll") else ""):  # cuDNN 8 on Windows: LoadLibrary's code
        got = facts.nvidia_dll(win)
        soname = got[0] if got else ""
        n = re.search(r"_(\d+)\.dll", win)
        return (f"cuDNN's front library loaded, but its sub-library {win}{f' ({soname} on Linux)' if soname else ''} "
                f"did not{_win_code(h.groups.get('win_code', ''))}: cuDNN {n.group(1) if n else ''} is installed without "
                "that sub-library, or its bin directory is not on PATH (the program found cudnn64 elsewhere, or a "
                "copy of another cuDNN release comes first)",
                f"put the bin directory of one complete cuDNN {n.group(1) if n else ''} install (every cudnn_*64 DLL of "
                "one release) on PATH, or copy its DLLs next to the program's; remove other cuDNN copies from PATH")
    lib = h.groups.get("library") or h.groups.get("any") or h.groups.get("dll") or h.groups.get("att_lib") or cut
    why = h.groups.get("why") or h.groups.get("att_why") or ""
    m = re.search(r"\.so\.(\d+)|_(\d+)\.dll", lib)
    major = (m.group(1) or m.group(2)) if m else ""
    if not lib:
        return None
    if dep := h.groups.get("dep", ""):  # the sub-library is there; a library it needs is not (cuDNN 8's cnn/adv: nvrtc)
        bare = re.fullmatch(r"lib[\w+-]{1,40}\.so", dep) is not None  # the unversioned development name (libnvrtc.so)
        return (f"cuDNN's sub-library {lib} could not load because {dep}, a library it needs, is not on the loader's path: "
                + (f"{lib} loads {dep} by that name, which only a CUDA toolkit (its lib64, or the -dev package's symlink) "
                   "or a conda cudnn/cuda-nvrtc package provides; the pip wheels ship only the versioned soname" if bare else
                   "the CUDA library of that major (the CUDA toolkit's, or the nvidia-* wheel's) is missing from this "
                   "environment or not where the loader looks"),
                f"put {dep} on the loader's path: install cuDNN with its dependencies from one place (conda install -c "
                f"conda-forge cudnn, or the CUDA toolkit whose lib64 has {dep}, on LD_LIBRARY_PATH), or link the "
                f"versioned library the environment has to that name: ln -s <dir>/{dep}.<major> <dir>/{dep} in a "
                "directory on LD_LIBRARY_PATH" if bare else
                f"put {dep} on the loader's path: install cuDNN with its dependencies from one place (conda install -c "
                f"conda-forge cudnn, or the CUDA toolkit whose lib64 has {dep}, on LD_LIBRARY_PATH), or the nvidia-* wheel "
                f"that ships {dep}, in the Python that runs")
    if why == "undefined symbol" and (g.get("why_node", "").startswith("libcudnn") or _cudnn_owned(g.get("why_what", ""), facts)):
        return _cudnn_mixed(g, env)  # the sub-library it loads lacks a symbol of a sibling: two installs' sets mixed
    if why == "undefined symbol":
        return (f"cuDNN loaded {lib} from another cuDNN than its own front library: two cuDNN copies are on the loader's "
                "path (LD_LIBRARY_PATH, /usr/lib, a conda or image copy next to the nvidia-cudnn wheel)",
                f"keep one cuDNN: remove the other copy's directory from LD_LIBRARY_PATH so that {lib} and libcudnn.so come "
                "from the same place (for torch, its nvidia-cudnn wheel)")
    return (f"cuDNN's front library loaded, but {lib} is not on the loader's path (a program that does not preload the "
            "nvidia-cudnn wheel, or a cuDNN installed without its sub-libraries)",
            f"add the directory holding {lib} to LD_LIBRARY_PATH (for the nvidia-cudnn wheel: python -c \"import nvidia.cudnn, "
            "os; print(os.path.dirname(nvidia.cudnn.__file__) + '/lib')\"), or install cuDNN "
            f"{major or 'of the major it names'} (the nvidia-cudnn wheel {major + '.x' if major else ''} for the CUDA in use, "
            f"or the system package libcudnn{major or 'N'})")


def _ptxas(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """triton-ptxas-arch: the architecture the GPU asked for and the first CUDA toolkit whose ptxas knows it."""
    arch, tool, have = h.groups.get("arch", ""), h.groups.get("tool", "ptxas"), env.version("triton")
    num = arch.removeprefix("sm_")
    need = (first_toolkit(num, facts) if num[-1:] in ("a", "f") else "") or facts.cuda_archs("ptxas").get(num.rstrip("af"), "")
    knob = "TRITON_PTXAS_BLACKWELL_PATH" if tool.endswith("blackwell") else "TRITON_PTXAS_PATH"
    return (f"the {tool} bundled with {_shown('triton', have)} does not know {arch}: the GPU is newer than the CUDA "
            f"toolkit that triton release ships{f' ({arch} needs the ptxas of CUDA >= {need})' if need else ''}",
            f"point {knob} at the ptxas of a CUDA toolkit{f' >= {need}' if need else ''} that lists {arch} (e.g. "
            f"/usr/local/cuda/bin/ptxas), or install a newer triton (the one torch pins in a build for CUDA "
            f"{need or 'that new'})")


def _triton_cuda(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """triton-cuda-too-old: triton's ptx_get_version knows CUDA majors 10 to 12 (13 from triton 3.5) and raises for any
    other; a version of 10.0 or newer in the message is a ptxas NEWER than the triton installed, not an old one (the
    row's cause, where the version is older or not shown)."""
    cuda = h.groups.get("cuda", "")
    major = int(cuda.split(".")[0]) if cuda else 0
    if major < 10:
        return None
    have = _shown("triton", env.version("triton"))
    return (f"{have} is too old for CUDA {cuda}: the ptxas it runs (TRITON_PTXAS_PATH, or a CUDA toolkit's) reports "
            f"CUDA {cuda}, and this triton's table of CUDA releases (the PTX version each supports) has no entry for it, "
            "so its check raises \"only support CUDA 10.0 or higher\" for a CUDA newer than the triton"
            + (" (triton learned CUDA 13 in 3.5)" if major >= 13 else ""),
            "install a newer triton (the release the installed torch pins, or on Windows the triton-windows release "
            f"for that torch){' >= 3.5' if major >= 13 else ''}, or unset TRITON_PTXAS_PATH so that triton uses the "
            "ptxas bundled in its wheel")


def _cuda_bindings(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-bindings-driver: a driver function cuda-bindings found missing names what the driver lacks."""
    fn, driver = h.groups.get("function"), env.cuda.get("driver", "")
    if not fn:
        return None
    shown = f"the NVIDIA driver{' ' + driver if driver else ''}"
    return (f"cuda-python (cuda-bindings) looked up {fn} in libcuda.so.1 and {shown} does not have it: the function is "
            "newer than the driver (each CUDA release adds driver functions; the driver supports CUDA up to nvidia-smi's "
            "\"CUDA Version\")",
            f"upgrade the NVIDIA driver to one of the CUDA release that introduced {fn} or later, or install the "
            "cuda-bindings (and program) release for the CUDA the driver supports")


def _stub(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-stub-driver: where the log shows the stub was mapped from, name that directory."""
    shown = h.text.split("=>")[-1].strip() if "/stubs/libcuda" in h.text else ""
    stub = shown or next((p for so, p in env.libs.items() if so.startswith("libcuda") and "/stubs/" in p), "")
    if not stub:
        return None
    return (f"the process loaded {stub}, the CUDA toolkit's stub libcuda (a link-time placeholder), instead of the NVIDIA "
            "driver's libcuda.so.1: every CUDA call returns cudaErrorStubLibrary (34)",
            f"remove {_dir_of(stub)} from LD_LIBRARY_PATH (and from /etc/ld.so.conf.d, then ldconfig) so that the driver's "
            "libcuda.so.1 is found; in a container, start it with the NVIDIA runtime (docker run --gpus all)")


# soname stem -> the nvidia-* wheel that ships it (its -cu11 / -cu12 name; CUDA 13's wheels drop the suffix)
NVIDIA_WHEEL = {"nvJitLink": "nvjitlink", "cublas": "cublas", "cublasLt": "cublas", "cusparse": "cusparse",
                "cusparseLt": "cusparselt", "cusolver": "cusolver", "cufft": "cufft", "curand": "curand",
                "nvrtc": "cuda-nvrtc", "cupti": "cuda-cupti", "nvToolsExt": "nvtx", "nvshmem_host": "nvshmem"}


# soname stem -> the NVIDIA library's own name (a soname's number is that library's major: libcudnn.so.8 is cuDNN 8,
# libcufft.so.11 cuFFT 11, libnccl.so.2 NCCL 2)
NVIDIA_NAME = {"cudnn": "cuDNN", "cublas": "cuBLAS", "cublasLt": "cuBLASLt", "cusparse": "cuSPARSE",
               "cusparseLt": "cuSPARSELt", "cusolver": "cuSOLVER", "cufft": "cuFFT", "curand": "cuRAND", "nvrtc": "NVRTC",
               "cupti": "CUPTI", "nvToolsExt": "NVTX", "nvshmem_host": "NVSHMEM", "nccl": "NCCL", "nvJitLink": "nvJitLink",
               "cudart": "CUDA runtime", "nvjpeg": "nvJPEG"}


def nvidia_library(lib: str) -> str:
    """The library a soname is, in words: libcudnn_ops_infer.so.8 -> cuDNN 8, libcublas.so.12 -> cuBLAS 12,
    libcublas.so.10.0 -> CUDA 10.0's cuBLAS (up to CUDA 10.0 the soname carried the toolkit's release); "" if none."""
    stem = lib.removeprefix("lib").split(".so", 1)[0]
    name = NVIDIA_NAME.get("cudnn" if stem.startswith("cudnn") else stem, "")
    want = _cudart_cuda(lib)
    if not name or not want:
        return name
    return f"CUDA {want}'s {name}" if "." in want else f"{name} {want}"


def soname_cuda(lib: str, facts: Facts) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the CUDA majors that ship ``lib``, the nvidia-* wheels that do) by its soname major: the ``[[nvidia_soname]]``
    row of the library and major (libcufft.so.11 -> CUDA 12, nvidia-cufft-cu12; libcurand.so.10 -> CUDA 10 to 13), else
    the major itself where the library's soname carries the CUDA major (``cuda_soname``); ((), ()) where neither tells."""
    row = facts.nvidia_soname(lib)
    if row is not None:
        return row.cuda, row.wheels
    owner = facts.nvidia_soname_owner(_soname(lib))
    m = re.search(r"\.so\.(\d{1,3})(?!\.\d)", lib)
    if owner is not None and owner.cuda_soname and m is not None:
        n = m.group(1)
        return (n,), (f"nvidia-{owner.wheel.removeprefix('nvidia-')}-cu{n}",) if n in ("11", "12") else ()
    return (), ()


def _or(items: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return f"{', '.join(items[:-1])} or {items[-1]}" if len(items) > 1 else "".join(items)


def _wheel_for(wheels: Sequence[str], cuda_major: str) -> str:
    """The wheel of ``wheels`` for CUDA ``cuda_major`` (its -cuNN suffix; CUDA 13's drop it), "" if none is."""
    if not cuda_major:
        return wheels[0] if len(wheels) == 1 else ""
    return next((w for w in wheels if w.endswith(f"-cu{cuda_major}")), "") or next(
        (w for w in wheels if int(cuda_major) >= 13 and not re.search(r"-cu\d{2}$", w)), "")


def _torch_seen(h: Hit, env: Env) -> bool:
    """Whether the log shows torch: its version, its CUDA, its frames or files on the hit's line."""
    return bool(env.version("torch") or env.cuda.get("torch_cuda") or h.package == "torch"
                or re.search(r"[/\\]torch[/\\]|\bimport torch\b", h.text))


# Microsoft's System Error Codes (0-499) that LoadLibrary returns for a DLL (learn.microsoft.com/windows/win32/debug/
# system-error-codes--0-499-): what each means for a library that did not load
# LoadLibrary's error codes a library's "Error code N" prints (Microsoft's System Error Codes 0-499, winerror.h:
# ERROR_MOD_NOT_FOUND 126 "The specified module could not be found.", ERROR_PROC_NOT_FOUND 127 "The specified procedure
# could not be found.", ERROR_BAD_EXE_FORMAT 193 "%1 is not a valid Win32 application.")
WIN_ERRORS = {"126": "ERROR_MOD_NOT_FOUND: the DLL, or a DLL it imports, is in no directory Windows searches",
              "127": "ERROR_PROC_NOT_FOUND: a copy of another release was found first, which lacks a function it needs",
              "193": "ERROR_BAD_EXE_FORMAT: the copy found is not a 64-bit Windows DLL (a 32-bit or another platform's "
                     "file)"}


def _win_code(code: str) -> str:
    """`` (Windows error 126, ERROR_MOD_NOT_FOUND: ...)`` for a LoadLibrary error code; "" for none."""
    return f" (Windows error {code}, {WIN_ERRORS[code]})" if code in WIN_ERRORS else f" (Windows error {code})" if code else ""


def _win_lib(h: Hit, env: Env, facts: Facts, dll: str) -> tuple[str, str] | None:
    """cuda-lib-missing for a Windows DLL (cublas64_11.dll): the same library's soname, its CUDA majors and wheels by the
    ``[[nvidia_soname]]`` rows' ``dlls``; the search path is PATH, not LD_LIBRARY_PATH."""
    got = facts.nvidia_dll(dll)
    if got is None:
        return None
    soname, row = got
    name, cudas = nvidia_library(soname), row.cuda
    prog = _shown(h.package, env.version(h.package)) if h.package else "the program"
    ships = f"{name}, which CUDA {_or(cudas)} ships" if cudas else name
    wheel = _or(row.wheels) or "the nvidia-* wheel of that library"
    folder = "cudnn" if soname.startswith("libcudnn") else ""
    return (f"{prog} could not load {dll} ({ships}; {soname} on Linux){_win_code(h.groups.get('win_code', ''))}: "
            f"{prog} was built against {name}, and no directory Windows searches for DLLs (the program's own, PATH, the "
            "CUDA toolkit's bin that CUDA_PATH names) holds it: that CUDA/cuDNN release is not installed, or its bin "
            "directory is not on PATH",
            f"install {name} (the CUDA {_or(cudas) or 'XY'} toolkit{', or cuDNN of that major' if folder else ''}, or pip "
            f"install {wheel} and add its nvidia\\<library>\\bin directory to PATH), or copy {dll} next to {prog}'s "
            f"DLLs; or install a build of {prog} for the CUDA the machine has")


def _cuda_lib(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-lib-missing: the library, the wheel that ships it, and torch's pin of that wheel where the log shows torch."""
    lib, major = h.groups.get("library", ""), h.groups.get("major", "")
    if lib.lower().endswith(".dll"):  # Windows' name of the library (a framework's or CTranslate2's line)
        return _win_lib(h, env, facts, lib)
    if "preload" in h.groups:  # torch's fallback found no nvidia/<folder>/lib on sys.path holding the library
        stem = h.groups["preload"].removeprefix("lib")
        name = NVIDIA_NAME.get(stem, stem)
        dist = NVIDIA_WHEEL.get(stem) or {"cudart": "cuda-runtime"}.get(stem, stem.lower())
        torch = env.version("torch")
        return (f"{_shown('torch', torch)} could not load its CUDA libraries, and its fallback found no copy of {name} "
                f"({h.groups['preload']}.so.<major>) in any nvidia/ package on sys.path: the nvidia-{dist} wheel torch requires "
                "is not installed in this Python (a torch installed with --no-deps, copied without its dependencies, or its "
                "dependencies removed)",
                "install torch with its dependencies (pip install --force-reinstall torch"
                + (f"=={_public(torch)}" if torch else "") + " from the index it came from, without --no-deps), or the "
                f"nvidia-{dist} wheel torch pins (`pip show torch` lists it)")
    if "jax_lib" in h.groups:  # JAX's CUDA plugin: its cuSPARSE stub found no libcusparse that loads
        sp, jl = NVIDIA_WHEEL["cusparse"], NVIDIA_WHEEL["nvJitLink"]
        return ("JAX's CUDA plugin could not load cuSPARSE (libcusparse.so.<major>, which it loads when first used): "
                f"the nvidia-{sp}-cuXY wheel is missing, or the nvJitLink cuSPARSE links (libnvJitLink.so.<major>, the "
                f"nvidia-{jl}-cuXY wheel that nvidia-{sp}-cuXY requires) is missing or older than that cuSPARSE needs: an "
                "older libnvJitLink found first (a CUDA toolkit's lib64 on LD_LIBRARY_PATH) makes cuSPARSE fail to load",
                "unset LD_LIBRARY_PATH (or drop the CUDA toolkit's lib64 from it) so that the plugin uses its nvidia-* wheels, "
                f"and upgrade them together (pip install -U nvidia-{sp}-cuXY nvidia-{jl}-cuXY, XY the CUDA major of the "
                "jax CUDA plugin, or reinstall jax with its CUDA extra)")
    missing = env.notes.get("ldd_missing", "").split(", ") if "ldd" in h.groups else []
    if len(missing) > 1:  # ldd's listing: every soname it could not find, each with the library and major it names
        named = ", ".join(f"{so} ({nvidia_library(so)})" if nvidia_library(so) != so else so for so in missing)
        prog = _shown(h.package, h.version or env.version(h.package)) if h.package else "the program"
        return (f"ldd finds none of {named}: {prog} was linked against these libraries at these majors (a soname "
                "names its major, and another major does not serve it), and no directory the loader searches holds them: "
                "they are not installed at those majors, or their lib directories are not on the loader's path",
                "install each library at the major its soname names (the CUDA toolkit, cuDNN or NCCL release of that "
                f"major) and put its lib directory on LD_LIBRARY_PATH, or install a build of {prog} for the majors the "
                "machine has")
    stem = lib.removeprefix("lib").split(".so", 1)[0]
    if stem.startswith("cudnn") or stem == "nccl":
        return _own_major_lib(h, env, facts, lib, "cudnn" if stem.startswith("cudnn") else "nccl")
    base = NVIDIA_WHEEL.get(stem)
    if base is not None and not major:  # the bare development name (libnvrtc.so), which cuDNN 8 and JIT code dlopen
        return (f"{lib} is not on the loader's path: the program (or cuDNN's runtime fusion) dlopens the unversioned "
                f"development name {lib}, which only a CUDA toolkit (its lib64, or the -dev package's symlink) provides; the "
                f"nvidia-{base} wheels and the runtime packages ship only the versioned soname ({lib}.<major>)",
                f"install the CUDA toolkit's {stem} (its lib64 on LD_LIBRARY_PATH), or link the versioned library the "
                f"environment has to that name: ln -s <dir>/{lib}.<major> <dir>/{lib} in a directory on LD_LIBRARY_PATH")
    if base is None or not major:
        return None
    want = _cudart_cuda(lib)
    name = nvidia_library(lib)
    if "." in want:  # CUDA 10 and older: the soname names the toolkit's release, and no nvidia-* wheel ships it
        who = h.package if h.package and h.package != "torch" else "the program"
        return (f"{lib} ({name}) is not on the loader's path: it is CUDA {want}'s {stem} (up to CUDA 10 a CUDA library's soname "
                f"carries the toolkit's release), so {who} was built for CUDA {want}, and no CUDA {want} toolkit's library "
                "directory is on the loader's path",
                f"put the CUDA {want} toolkit's lib64 directory (which holds {lib}) on LD_LIBRARY_PATH, or install a build "
                f"of {who} for the CUDA the machine has")
    cudas, wheels = soname_cuda(lib, facts)
    cuda = _or(cudas)  # "12", "10 or 11": the CUDA majors that ship this soname (its own major is not CUDA's)
    torch = env.version("torch")
    mine = _major(_torch_cuda(env, facts)) if _torch_seen(h, env) else ""
    wheel = _wheel_for(wheels, mine) or _or(wheels) or f"nvidia-{base}-cuXY (XY: the CUDA major)"
    spans = (f"{name}, which CUDA {cudas[0]} ships" if len(cudas) == 1 else
             f"{name}, which CUDA {', '.join(cudas[:-1])} and {cudas[-1]} {'both' if len(cudas) == 2 else 'all'} ship"
             if cudas else name)
    if len(wheels) > 1 and wheel == _or(wheels):
        wheel = f"{wheel} (the one for the machine's CUDA)"
    if h.package and h.package != "torch":  # another package's library links it (onnxruntime's CUDA provider)
        have = env.cuda.get("nvcc") or env.cuda.get("torch_cuda") or env.cuda.get("driver_cuda", "")
        off = bool(have and cudas and _major(have) not in cudas)
        other = f" while the environment's CUDA is {have}" if off else ""
        built = (f"was built for CUDA {cuda}" if len(cudas) == 1 else
                 f"was built for CUDA {cuda} (the soname does not tell which)" if cudas else f"was built against {name}")
        return (f"{_shown(h.package, env.version(h.package))} {built}: it links {lib} ({spans}), which the "
                f"loader cannot find{other} (no {name} on its path: the {wheel} wheel"
                + (f" or a CUDA {cuda} toolkit)" if cudas else ")"),
                f"install {h.package}'s build for the environment's CUDA"
                + (f" (its CUDA {_major(have)} build)" if off else "")
                + f", or the {name} it links (pip install {wheel}, its lib directory on LD_LIBRARY_PATH)")
    if not _torch_seen(h, env):  # no torch in the log: the program's own build links the toolkit's library
        return (f"{lib} ({spans}) is not on the loader's path: the program was built against {name}, and neither a CUDA "
                f"toolkit that ships it nor the {wheel} wheel's lib directory is where the loader looks",
                f"install {name} (the CUDA {cuda or 'XY'} toolkit or its conda package, or pip install {wheel} with its lib "
                "directory on LD_LIBRARY_PATH); if the program is torch, reinstall torch with its dependencies "
                "(pip install --force-reinstall torch from the index it came from)")
    pins = [r for r in facts.rows("release") if r.package == "torch" and torch and r.version == _public(torch)]
    pin = next((t for r in pins for t in r.requires if t.startswith(wheel + "==")), "")
    return (f"{lib} ({name}) is not on the loader's path: the {wheel} wheel that ships it is missing or not where "
            f"{_shown('torch', torch)} looks for it (site-packages/nvidia/{base.removeprefix('cuda-')}/lib)",
            f"install {pin or wheel} (pip install '{pin or wheel}'"
            + (f", the version torch {torch} pins)" if pin else "; `pip show torch` lists the version torch pins)")
            + ", or reinstall torch with its dependencies (pip install --force-reinstall torch from the index it came from)")


def _cublas_init(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-toolkit-clash: cublasCreate failed (CUBLAS_STATUS_NOT_INITIALIZED); the CUDA releases the log shows."""
    if "gpu_fault" in env.notes:  # out of memory, an illegal access, a device-side assert: the program's fault
        return None
    shown = [f"{what} {env.cuda[k]}" for k, what in (("nvcc", "the toolkit's nvcc is CUDA"),
                                                      ("torch_cuda", "torch is built for CUDA"),
                                                      ("driver_cuda", "the driver supports CUDA up to")) if env.cuda.get(k)]
    seen = f" ({'; '.join(shown)})" if shown else ""
    torch = " (torch also reports an allocation that failed inside cublasCreate so: free GPU memory if the log shows " \
            "none of the above)" if _torch_seen(h, env) else ""
    return (f"cuBLAS could not create its handle (cublasCreate: CUBLAS_STATUS_NOT_INITIALIZED, the CUDA runtime's "
            f"initialization inside it failed){seen}: a cuBLAS of another CUDA toolkit than the one the program was built "
            "with is loaded (two CUDA toolkits side by side, the other one's lib64 first on LD_LIBRARY_PATH), or the driver "
            f"is older than that toolkit{torch}",
            "keep one CUDA toolkit on the loader's path, the one the program was built against (`ldd <program or "
            "extension> | grep -E 'cublas|cudart'` shows which libcublas it loads): remove the other toolkit's lib64 from "
            "LD_LIBRARY_PATH or uninstall it, and check that the driver supports that toolkit (nvidia-smi)")


def _soname(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _wheel_of(row: NvidiaLibrary | None, soname: str, facts: Facts) -> str:
    """The nvidia-* wheel that ships ``soname`` (its -cuNN name where the soname's number is the CUDA major, the
    ``[[nvidia_soname]]`` rows' where the library numbers its own releases: libcufft.so.11 -> nvidia-cufft-cu12)."""
    if row is None:
        return ""
    if (own := facts.nvidia_soname(soname)) is not None and own.wheels:
        return _or(own.wheels)
    major = re.search(r"\.so\.(\d{1,3})", soname)
    return f"{row.wheel}-cu{major.group(1)}" if row.cuda_soname and major else f"{row.wheel} (-cu12 or -cu13, torch's CUDA)"


def _clash(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-toolkit-clash by the loader: a library needs a function (or a symbol-version node) of ANOTHER NVIDIA library
    that the copy the loader found lacks, the owner named by the [[nvidia_library]] rows from the symbol's prefix or the
    node: another release of the owner is found first (a system CUDA on LD_LIBRARY_PATH, /usr/lib, a RUNPATH)."""
    g = h.groups
    needer = _soname(g.get("clash_lib") or g.get("node_lib") or g.get("torch_lib") or g.get("vn_requirer")
                     or g.get("ltr_lib") or "")
    symbol = g.get("clash_symbol") or g.get("node_symbol") or g.get("torch_nv_symbol") or g.get("ltr_symbol") or ""
    node = g.get("clash_node") or g.get("node_only") or g.get("vn_node") or g.get("ltr_node") or ""
    mine = facts.nvidia_soname_owner(needer) if needer else None
    owner = facts.nvidia_soname_owner(node) if node else symbol_owner(facts, symbol)
    if owner is None and symbol:
        owner = symbol_owner(facts, symbol)
    if owner is not None and owner.library == CUDNN and (mine is owner or (mine is None and not needer)):
        # a cuDNN library lacking what cuDNN itself owns, or a cuDNN symbol-version node missing where the line names no
        # other library that needs it: its sub-libraries mixed, cudnn-sublibrary-missing's (issue 38's one vocabulary)
        return None
    # a symbol of no known prefix (a C++ internal) needed by an NVIDIA library: one of its own family's other libraries
    # exports it (cuDNN's sub-libraries, libcublas beside libcublasLt), of another release than the one found
    owner = owner or mine
    if owner is None:
        return None
    own = node or owner.library
    m = re.search(r"\.so\.(\d{1,3})", needer)
    if not node and m and owner.cuda_soname and mine is not None and mine.cuda_soname:
        own = f"{owner.library}.so.{m.group(1)}"  # one CUDA major: libcublas.so.11 binds libcublasLt.so.11
    if mine is owner and not node:
        own = f"{owner.library}*"  # its family's sibling libraries (libcudnn_ops*, libcudnn_cnn* ...)
    provider = g.get("vn_provider", "")
    name = NVIDIA_NAME.get(owner.library.removeprefix("lib"), owner.library)
    needs = f"{needer or 'a library'} needs {symbol + ', a function of ' if symbol else 'the symbol-version node of '}{own} ({name})"
    found = (f"the {own} the loader found ({provider}) is another release without {'it' if symbol else 'that node'}"
             if provider else f"the {own} the loader found first does not export it{' under that version' if node else ''}")
    wheel = _wheel_of(owner, own, facts)
    path = g.get("clash_lib") or g.get("node_lib") or g.get("torch_lib") or g.get("vn_requirer") or g.get("ltr_lib") or ""
    in_wheel = f"/nvidia/{owner.folder}/lib/" in path.replace("\\", "/") or "/nvidia/" in path.replace("\\", "/")
    where = (f"site-packages/nvidia/{owner.folder}/lib, beside {needer}" if in_wheel else f"the {wheel} wheel's "
             f"site-packages/nvidia/{owner.folder}/lib")
    return (f"{needs}, but {found}: two copies of {name} clash, the one of {'its ' + wheel + ' wheel' if in_wheel and wheel else 'the build it was made with'} "
            "and another release loaded first (a system CUDA toolkit's lib64 on LD_LIBRARY_PATH or in /etc/ld.so.conf, or "
            f"a directory its RUNPATH names){' (LD_LIBRARY_PATH=' + env.cuda['ld_library_path'] + ')' if env.cuda.get('ld_library_path') else ''}",
            (f"let {needer or 'the library'} load the {own} of {where}: remove the system CUDA directory that holds "
             f"another {owner.library} from LD_LIBRARY_PATH (`ldd {path or needer} | grep {owner.library}` shows which one "
             f"it loads), or, where the system CUDA is the one meant, uninstall the {wheel} wheel so that one {name} is left")
            if in_wheel or not path or mine is None else
            (f"keep one {name} on the loader's path, the release {needer} came with ({_dir_of(path)} holds it): remove the "
             f"directory of the other {owner.library} from LD_LIBRARY_PATH (`ldd {path} | grep {owner.library}` shows "
             f"which one it loads), or install one complete {name} (the {wheel} wheel's, or the system package's) and "
             "uninstall the other"))


def _cublas_device(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """cublas-device-removed: the row's cause, with the CUDA toolkit the log shows (nvcc's release, CMake's Found CUDA)."""
    cuda = env.cuda.get("nvcc", "")
    if not cuda:
        return h.cause, h.remedy
    v = _v(cuda)
    gone = v is not None and v >= Version("10.0")
    return (h.cause.replace("the CUDA toolkit found has none", f"the CUDA toolkit found is CUDA {cuda}, which "
                            + ("has none" if gone else "should still have it (its lib64 lacks libcublas_device.a: an "
                               "incomplete toolkit install)")), h.remedy)


def _hmm(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """lxc-cuda-init-hmm only where the log shows its scene (a Proxmox LXC container, nvidia_uvm's HMM); else None."""
    return (h.cause, h.remedy) if env.notes.get("container_hmm") else None


def _clash_dll(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-toolkit-clash on Windows (fix-q): torch's DLL loader found one of its CUDA library DLLs and Windows could not
    bind it (WinError 127, ERROR_PROC_NOT_FOUND; glmcompat/decide/loadercauses.py dll_clash): the library named by the
    [[nvidia_soname]] row whose dlls hold it."""
    dll = h.groups["win_clash_dll"]
    got = facts.nvidia_dll(dll)
    if got is None:
        return None
    soname, row = got
    name = nvidia_library(soname) or soname
    who = _shown(h.package, env.version(h.package)) if h.package else "torch"
    cuda = f"a CUDA {_or(row.cuda)}" if row.cuda else "a CUDA"
    return (f"Windows found {who}'s {dll} ({name}, {soname} on Linux) and could not load it (WinError 127, "
            "ERROR_PROC_NOT_FOUND): a function it imports is missing from the DLL of that name Windows bound it to, so "
            f"another release of a CUDA library it depends on ({cuda} cuBLASLt, CUDA runtime or cuDNN DLL of another "
            "minor release) was loaded first, by a package imported before torch that bundles its own CUDA libraries "
            "(TensorRT, TensorFlow, ONNX Runtime, CuPy) or from a CUDA toolkit's bin directory earlier on PATH: two "
            "releases of one CUDA library clash in the process",
            f"import torch before the package that bundles its own CUDA libraries (torch then loads the CUDA DLLs it was "
            f"built with first), or install that package's build for torch's CUDA release; remove other CUDA toolkits' "
            f"bin directories from PATH (`where {dll}` lists the copies Windows can find); the Dependencies tool "
            f"(lucasg/Dependencies) on {dll} names the DLL that lacks the function")


def _clash_or_cublas(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    if "win_clash_dll" in h.groups:
        return _clash_dll(h, env, facts)
    return _clash(h, env, facts) if "cublas_init" not in h.groups else _cublas_init(h, env, facts)


def _own_major_lib(h: Hit, env: Env, facts: Facts, lib: str, base: str) -> tuple[str, str]:
    """cuda-lib-missing for cuDNN and NCCL, whose sonames carry their own major: the nvidia-cudnn / nvidia-nccl wheel
    for torch's CUDA major ships them."""
    torch = env.version("torch")
    cuda = _torch_cuda(env, facts)
    wheel = f"nvidia-{base}-cu{_major(cuda)}" if cuda else f"nvidia-{base}-cuXY (XY: torch's CUDA major)"
    who = h.package if h.package and h.package != "torch" else ""
    name = nvidia_library(lib)
    if not _torch_seen(h, env):  # a program of its own (caffe, onnxruntime, a C++ binary) built against this major
        prog = _shown(who, env.version(who)) if who else "the program"
        # the nvidia-cudnn-cu11/-cu12 wheels begin at cuDNN 8, nvidia-nccl-cu11/-cu12 ship NCCL 2
        n = int((_cudart_cuda(lib) or "0").split(".")[0])  # its own major (cuDNN v2's libcudnn.so.6.5: 6)
        pip = (f", or pip install 'nvidia-{base}-cu12>={n},<{n + 1}'" if (base == "cudnn" and n >= 8) or base == "nccl"
               else "")
        return (f"{prog} was built against {name} (it links {lib}), and the loader finds no {name} library: {name} is "
                f"not installed, or its lib directory is not on the loader's path (another major does not serve a "
                f"program built for {name})",
                f"install {name} for the machine's CUDA (NVIDIA's {name} release, or the conda package of that major"
                f"{pip}) and put its lib directory on LD_LIBRARY_PATH, or install a build of {prog} for the {name.split()[0]} "
                "major the machine has")
    needs = f"{_shown(who, env.version(who))} links {lib} ({name})" if who else f"{lib} ({name}) is needed"
    return (f"{needs}, and the loader cannot find it: the {wheel} wheel that ships it for {_shown('torch', torch)} is "
            "missing (torch installed with --no-deps, a partial reinstall), or its site-packages/nvidia/" + base
            + "/lib directory is not where the program looks (a program that does not import torch first)",
            f"install the {wheel} version torch pins (`pip show torch` lists it under Requires-Dist), or reinstall torch "
            "with its dependencies from the index it came from; import torch before the library that needs it")


def cudart_release(lib: str) -> str:
    """The CUDA release (up to 10) or major (from 11) a libcudart soname names (:func:`_cudart_cuda`)."""
    return _cudart_cuda(lib)


def torch_cuda(env: Env, facts: Facts) -> str:
    """The CUDA the log's torch was built with (:func:`_torch_cuda`), "" where the log shows neither torch nor its CUDA."""
    return _torch_cuda(env, facts) if env.version("torch") or env.cuda.get("torch_cuda") else ""


def torch_with_code(sm: str, torch: str, facts: Facts) -> tuple[str, str, str] | None:
    """The torch build the matrix records with code for ``sm_<sm>`` nearest ``torch`` (:func:`_torch_for`)."""
    return _torch_for(sm, torch, facts)


def installed_torch(torch: str, built: str) -> str:
    """The installed torch as a cause names it (:func:`_torch_build`)."""
    return _torch_build(torch, built)


def _cudart_cuda(lib: str) -> str:
    """The CUDA release a libcudart soname names: up to CUDA 10 the soname carries the release (CUDA 10.1's runtime is
    libcudart.so.10.1: Jittor/jittor#70 lists libcudart.so.10.1.243 in a CUDA 10.1 toolkit's lib64), from CUDA 11 on
    only the major (every 11.x ships libcudart.so.11.0: nvidia-cuda-runtime-cu11 11.8.89 wheel
    nvidia/cuda_runtime/lib/libcudart.so.11.0; 12.9.79's libcudart.so.12, 13.0.96's libcudart.so.13); "" if none.
    The toolkit's other libraries were named the same way up to CUDA 10.0; from CUDA 10.1 cuBLAS carries only its
    major (libcublas.so.10), which this reads as the major alone."""
    # CUDA 9.0's cuBLAS is libcublas.so.9.0 (CannyLab/tsne-cuda#74); a framework built for CUDA 8.0 asks for
    # libcublas.so.8.0 on a CUDA 9.1 machine (the tensorflow repository's issue 16136)
    m = re.search(r"\.so\.(\d+)(?:\.(\d+))?", lib)
    if m is None:
        return ""
    major, minor = m.group(1), m.group(2)
    return f"{major}.{minor}" if minor is not None and int(major) <= 10 else major


# the CUDA runtime's DLL on Windows, named by its release up to CUDA 10 (cudart64_100.dll: CUDA 10.0, cudart64_90.dll:
# 9.0) and by its major from CUDA 11 on (cudart64_110.dll for every 11.x, cudart64_12.dll): the toolkit's bin directory
_CUDART_DLL = re.compile(r"cudart(?:64|32)_(?P<v>\d{2,3})\.dll", re.IGNORECASE)


def _cudart_dll(h: Hit, env: Env, lib: str) -> tuple[str, str] | None:
    """cudart-missing of a Windows DLL (tensorflow 1.x's self check "Could not find 'cudart64_100.dll'", its DSO loader's
    "Could not load dynamic library 'cudart64_110.dll'"): the CUDA release it names, which no directory on PATH holds."""
    m = _CUDART_DLL.search(lib)
    if m is None:
        return None
    d = m.group("v")
    want = f"{d[:-1]}.{d[-1]}" if int(d[:-1]) <= 10 else d[:-1] if d.endswith("0") and len(d) == 3 else d
    want = h.groups.get("fx_cuda_need") or want
    pkg = h.package if h.package and h.package != "torch" else ""
    who = _shown(pkg, env.version(pkg)) if pkg else "the program"
    return (f"{who} is built for CUDA {want} and loads its runtime {lib} at import, and no directory on PATH holds it: "
            f"the CUDA {want} toolkit is not installed (another CUDA release's bin holds another cudart64_*.dll), or its "
            "bin directory is not on PATH",
            f"install the CUDA {want} toolkit (its bin directory, which holds {lib}, on PATH; then a new shell), or install "
            f"the {pkg or 'package'} release built for the CUDA installed")


def _cudnn_frontend_cudart(env: Env, facts: Facts) -> tuple[str, str]:
    """cudart-missing of cudnn-frontend's own loader ("Unable to load any libcudart.so.* library."): it opens the CUDA
    runtime by its versioned sonames (libcudart.so.12 or .13; 1.19.0 only .13) when a graph is built, and the loader
    found neither loaded nor on its path; the log's torch CUDA, where it shows one, says which major is there."""
    ver = env.version("nvidia-cudnn-frontend")
    who = f"cudnn-frontend {ver}" if ver else "cudnn-frontend"
    built = _torch_cuda(env, facts)
    have = f" (the log's torch is built for CUDA {built})" if built else ""
    return (f"{who} (the nvidia-cudnn-frontend wheel, its Python module cudnn) loads the CUDA runtime itself when a graph "
            "is built, by its versioned sonames libcudart.so.12 or libcudart.so.13 (release 1.19.0 only libcudart.so.13), "
            "and the loader found neither: no CUDA 12 or 13 runtime is loaded in the process (torch, imported first, "
            f"brings its own) or on the loader's path{have}, or with 1.19.0 only a CUDA 12 runtime is there",
            "make a CUDA runtime of the major it asks for loadable: import torch before cudnn (its libcudart is then found "
            "by soname), or install the runtime wheel of that major (nvidia-cuda-runtime-cu12, or nvidia-cuda-runtime for "
            "CUDA 13) and put its lib directory on LD_LIBRARY_PATH; with cudnn-frontend 1.19.0 and CUDA 12, install 1.19.1 "
            "or newer, which looks for libcudart.so.12 again")


def _cudart(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    if "cfe_any" in h.groups:
        return _cudnn_frontend_cudart(env, facts)
    lib = h.groups.get("library", "")
    if (win := _cudart_dll(h, env, lib)) is not None:
        return win
    want = _cudart_cuda(lib)
    if lib and not want:  # the bare development name (libcudart.so), which ctypes.CDLL("libcudart.so") and dlopen ask for
        who = h.package if h.package and h.package != "torch" else "the program"
        return (f"{lib} is not on the loader's path: {who} loads the CUDA runtime by its unversioned development name "
                f"{lib}, which only a CUDA toolkit (its lib64, or the runtime's -dev package's symlink: the CUDA -devel "
                "images have it) provides; a runtime-only install (the CUDA -runtime images, the runtime package, the "
                f"nvidia-cuda-runtime wheels) ships only the versioned soname ({lib}.<major>)",
                f"load the versioned soname instead ({lib}.<major>, the CUDA major installed: ctypes.CDLL(\"{lib}.12\")), or "
                f"install the CUDA runtime's dev package (or use the CUDA -devel image) so that {lib} exists, or link the "
                f"versioned library to that name: ln -s <dir>/{lib}.<major> <dir>/{lib} in a directory on LD_LIBRARY_PATH")
    if not want:
        return None
    pkg = h.package if h.package and h.package != "torch" else ""
    torch = env.version("torch")
    built = _torch_cuda(env, facts)
    who = f"{pkg}{' ' + env.version(pkg) if env.version(pkg) else ''}" if pkg else "a compiled extension"
    have = (f": torch {torch} is built for CUDA {built}" if torch and built else "")
    cause = (f"{who} was built for CUDA {want} (it links {lib}), and the environment has no CUDA {want} runtime{have}, "
             "so the loader stops before it reaches any symbol")
    if built and _major(built) != _major(want):
        fix = (f"install {pkg or 'the extension'}'s build for CUDA {_major(built)} (the release built for torch {_public(torch)}), "
               f"or a torch built for CUDA {want}")
    elif "." in want:  # CUDA 10 and older: no runtime wheel; the toolkit's lib64 on the loader's path
        fix = (f"install {pkg or 'the extension'}'s build for the installed torch's CUDA, or put the CUDA {want} "
               f"toolkit's runtime (its lib64 directory, which holds {lib}) on LD_LIBRARY_PATH")
    else:
        fix = (f"install {pkg or 'the extension'}'s build for the installed torch's CUDA, or the CUDA {want} runtime "
               f"(the nvidia-cuda-runtime wheel for CUDA {want})")
    return cause, fix


def _torch_for(sm: str, torch: str, facts: Facts) -> tuple[str, str, str] | None:
    """(version, variant or "" for the default wheel, CUDA) of the torch build the matrix records with code for
    ``sm_<sm>`` nearest the installed ``torch``: its own release where one of its builds has it (the default wheel,
    else the variant for the oldest CUDA), else the oldest newer release, else the newest older one."""
    try:
        cap = (int(sm[:-1]), int(sm[-1]))
    except ValueError:
        return None
    found = sorted((Version(v), v, r.variant or "", r.cuda or "") for r in facts.rows("torch")
                   if r.platform == "x86_64" and gpu.runnable(list(r.sass) + list(r.ptx), cap) for v in r.versions)
    if not found:
        return None
    have = _v(_public(torch)) if torch else None
    if have is not None:
        same = [f for f in found if f[0] == have]
        later = [f for f in found if f[0] > have]
        pick = (same or later or found[::-1])[0]
        pool = [f for f in found if f[0] == pick[0]]
    else:  # the oldest release with a build for it: the least a pin must move
        pool = [f for f in found if f[0] == found[0][0]]
    best = min(pool, key=lambda f: (f[2] != "", Version(f[3]) if _v(f[3]) else Version("0")))
    return best[1], best[2], best[3]


# the CUDA source files of torch's own kernels, as torch 0.x's THCudaCheck names them (torch/lib/THC/THCTensorMath.cu,
# aten/src/THC/..., aten/src/ATen/native/cuda/...): an "invalid device function" there is torch's build lacking the GPU
TORCH_SOURCE = re.compile(r"(?:^|[\\/])(?:THC|THCUNN|THCS|ATen|aten[\\/]src|torch[\\/]lib|c10[\\/]cuda)[\\/]")


def invalid_function_file(h: Hit) -> tuple[str, bool] | None:
    """(the CUDA source file, whether it is torch's own) of an "invalid device function" match; None for another match."""
    path = h.groups.get("idf_file") or h.groups.get("idf_at")
    if path is None:
        return None
    path = re.sub(r":\d{1,6}$", "", path)
    return path, TORCH_SOURCE.search(path) is not None


def _torch_build(torch: str, built: str) -> str:
    """The installed torch as a cause names it: its version where the log shows it, and the CUDA it was built for."""
    return (f"torch {torch}" if torch else "the installed torch") + (f" (built for CUDA {built})" if built else "")


def _torch_own(torch: str, built: str, facts: Facts, call: str = "") -> tuple[str, str]:
    """torch-arch-unsupported read from torch's own "no kernel image" (torch's CUDA check, or a statement calling only
    torch's API, ``call``; no other package's kernel named) where the log names neither the GPU nor the build's arch
    list: what the build lacks, without naming a GPU or a build the log does not show; the builds that carry the newest
    architectures, from the [[cuda_arch]] and [[torch]] rows."""
    build = _torch_build(torch, built)
    how = (f"at a statement of torch's own API ({call}(...)), no other package's code called" if call else
           "raised through torch's CUDA check, no other package's kernel named")
    cause = (f"{build} has no code for this GPU: torch's own CUDA kernel launch failed ('no kernel image is available "
             f"for execution on the device', {how}), so the "
             "build's arch list (torch.cuda.get_arch_list()) does not include the GPU's compute capability (a GPU newer "
             "than the build's CUDA knows, or an older one that a build for a newer CUDA no longer carries); the log names neither the GPU nor "
             "the build's arch list")
    groups: dict[str, list[str]] = {}
    for sm, cuda in facts.cuda_archs("first").items():
        if sm[-1:] in ("a", "f"):
            continue  # the plain architectures, as torch's arch list names them
        if _v(cuda) is not None and Version(cuda).major >= 12:  # the architectures no CUDA 11 build of torch carries
            groups.setdefault(cuda, []).append(f"sm_{sm}")
    said = []
    for cuda in sorted(groups, key=Version):
        sms = " and ".join(groups[cuda])
        pick = _torch_for(groups[cuda][0].removeprefix("sm_"), torch, facts)
        first = (f" (the first the matrix records: torch=={pick[0]}{'+' + pick[1] if pick[1] else ''}"
                 f"{' from PyTorch' + chr(39) + 's ' + pick[1] + ' index' if pick[1] else ''})"
                 if pick is not None and _v(pick[2]) is not None and Version(pick[2]) >= Version(cuda) else "")
        said.append(f"a build for CUDA {cuda} or newer for {sms}{first}")
    builds = f": {'; '.join(said)}" if said else ""
    return cause, ("compare the GPU's capability with the build's arch list (python -c \"import torch; "
                   "print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())\"), and install the torch "
                   f"build whose arch list has it{builds}; for an older GPU, a build for an older CUDA that still lists its "
                   "capability (`glmcompat arch torch==<version>` lists a wheel's); on a driver that supports that CUDA")


def named_gpu(env: Env, facts: Facts) -> tuple[str, str] | None:
    """(the product, its compute capability as sm digits) of the GPU the log names (``NVIDIA GeForce RTX 5090`` ->
    ``("RTX 5090", "120")``, ``NVIDIA GeForce GTX 1080 Ti`` -> ``("GeForce GTX 1080 Ti", "61")``), where a [[target]] row
    or NVIDIA's list ([[gpu_product]] rows) names the product; the capability the log itself states of the device
    (``gpu_cc``: "<GPU> is compute capability sm_61", torch's "which is of cuda capability 3.7") over the list's, and
    with no product found, the log's own name for the GPU ("" where it names none) with that capability; None where
    the log shows neither."""
    said = env.notes.get("gpu_cc", "").removeprefix("sm_").replace(".", "")
    return gpu_by_name(env.notes.get("gpu_name", ""), said if said.isdigit() else "", facts)


def gpu_by_name(name: str, said: str, facts: Facts) -> tuple[str, str] | None:
    """:func:`named_gpu` of a GPU's name (and the capability the log states of it, sm digits, or ""): the product a
    [[target]] or [[gpu_product]] row names and its capability, else the name with the stated capability, else None."""
    key = _model_key(name)
    best: tuple[str, str] | None = None
    if key:
        rows = [(p, t.compute_capability) for t in facts.rows("target") for p in t.products]
        rows += [(p, g.compute_capability) for g in facts.rows("gpu_product") for p in g.products]
        for p, cc in rows:  # the longest product the name starts with: "GTX 1080 Ti" is the 1080 Ti, not the 1080
            pk = _model_key(p)
            if pk and (key == pk or (key.startswith(pk) and not key[len(pk)].isdigit())) and (
                    best is None or len(pk) > len(_model_key(best[0]))):
                best = (p, cc.replace(".", ""))
    if best is not None:
        return (best[0], said or best[1])
    return (name, said) if said else None


def _model_key(name: str) -> str:
    """:func:`product_key` of a GPU's name without the brand words NVIDIA names its lines by (NVIDIA, GeForce, Tesla,
    Quadro): ``NVIDIA GeForce GTX 1080 Ti``, ``GeForce GTX 1080 Ti`` and ``GTX 1080 Ti`` are one key."""
    words = name.split()
    while words and words[0].lower() in ("nvidia", "geforce", "tesla", "quadro"):
        words = words[1:]
    return product_key(" ".join(words))


def _thc_blas(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """torch-arch-unsupported from torch 1.x's THC cuBLAS check (__THCublasCheck: "cublas runtime error : the GPU program
    failed to execute", CUBLAS_STATUS_EXECUTION_FAILED): cuBLAS could not launch its kernel on the GPU, which a torch
    built for a CUDA older than the GPU's architecture (CUDA 9.x on a Turing RTX 20) gives: that cuBLAS holds no code
    for it. None where the log shows the GPU's capability and a torch CUDA that builds it (the launch failed for
    another reason)."""
    torch, built = env.version("torch"), env.cuda.get("torch_cuda", "") or _torch_cuda(env, facts)
    named = named_gpu(env, facts)
    sm = env.capability.replace(".", "") or (named[1] if named else "")
    need = first_toolkit(sm, facts) if sm.isdigit() else ""
    if need and built and _v(built) is not None and _v(need) is not None and Version(built) >= Version(need):
        return None
    build = _torch_build(torch, built)
    at = h.groups.get("thc_at", "")
    where = f" (at {at.rsplit('/', 1)[-1]})" if at else ""
    gpu_is = f" {named[0]}" if named and named[0] else ""
    cause = (f"{build} could not run a cuBLAS kernel on the GPU{gpu_is}{where}: torch 1.x's THC reports cuBLAS's "
             "CUBLAS_STATUS_EXECUTION_FAILED (\"the GPU program failed to execute\"), the launch failing because the "
             "cuBLAS of the build's CUDA has no code for the GPU's architecture: a build for a CUDA older than the GPU "
             "(CUDA 9.x on an RTX 20-series, Turing sm_75, which needs CUDA >= 10.0; CUDA 10.x on an RTX 30-series, "
             "Ampere sm_86, which needs CUDA >= 11.1)")
    if need:
        cause += f"; the GPU here is sm_{sm}, first built by CUDA {need}"
    return cause, ("install a torch build for a CUDA that supports the GPU's architecture (python -c \"import torch; "
                   "print(torch.version.cuda, torch.cuda.get_device_capability())\"; a Turing RTX 20 needs a cu100 or "
                   "newer build, an Ampere RTX 30 a cu111 or newer one), on a driver that supports that CUDA")


def _torch_arch(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """torch-arch-unsupported: torch's own warning that its build has no kernels for the GPU's capability; the
    remedy is the build the matrix records with code for it (each [[torch]] row's SASS, from the wheels). Also
    cudaErrorInvalidDeviceFunction in a kernel of torch's own sources (None where the file is an extension's)."""
    g = h.groups
    idf = invalid_function_file(h)
    if idf is not None:
        if not idf[1]:
            return None
        torch = env.version("torch")
        who = f"torch {torch}" if torch else "the installed torch"
        name = re.split(r"[\\/]", idf[0])[-1]
        return (f"{who}'s own CUDA kernel ({name}) has no code for this GPU (cudaErrorInvalidDeviceFunction: \"not "
                "compiled for the proper device architecture\"): its build's arch list does not include the GPU's "
                "compute capability (a source build compiled for other GPUs, or a binary older than the GPU)",
                "install a torch build whose arch list (torch.cuda.get_arch_list()) includes the GPU's compute "
                "capability (nvidia-smi --query-gpu=compute_cap --format=csv), or rebuild torch from source with "
                "TORCH_CUDA_ARCH_LIST set to it")
    if "thc_exec" in g:
        return _thc_blas(h, env, facts)
    sm = (g.get("sm") or g.get("cut_sm") or g.get("cc") or g.get("old_cc") or g.get("unknown_arch") or "").replace(".", "")
    gpu_name = (g.get("gpu") or g.get("found_gpu") or g.get("old_gpu") or "").strip()
    torch, built = env.version("torch"), _torch_cuda(env, facts)
    if not sm and g.get("archs_listed"):  # no kernel image, beside torch's own arch list (torch.cuda.get_arch_list())
        build = _torch_build(torch, built)
        ptx = any(a.startswith("compute_") for a in g["archs_listed"].split(", "))
        said = (f"its build's arch list as the matrix records it for the {g['archs_recorded']} wheel" if g.get("archs_recorded")
                else "its build's arch list as the log prints it")
        return (f"{build} carries code only for {g['archs_listed']}, {said}"
                + ("" if ptx else " (SASS only, no compute_XX PTX a newer GPU could JIT-compile)")
                + ", and none of it runs on this GPU: its compute capability is outside the list, so every CUDA kernel "
                "launch of torch fails ('no kernel image is available')",
                "find the GPU's capability (nvidia-smi --query-gpu=compute_cap --format=csv, or "
                "torch.cuda.get_device_capability()) and install a torch build whose arch list "
                "(torch.cuda.get_arch_list()) includes it: a build for a CUDA that knows the architecture "
                "(`glmcompat arch torch==<version>` lists a wheel's), the GPU vendor's own build for an embedded board "
                "(NVIDIA's Jetson wheels), or torch built from source with TORCH_CUDA_ARCH_LIST set to it")
    if not sm and g.get("torch_own"):  # torch's own launch, and the log shows neither the GPU nor torch's arch list
        return _torch_own(torch, built, facts, g.get("torch_call", ""))
    if not sm:  # a line of the warning that names no capability (the row's words)
        return None
    build = _torch_build(torch, built)
    need = first_toolkit(sm, facts) if sm[-1:] not in ("a", "f") else ""
    dotted = f"{sm[:-1]}.{sm[-1]}, " if sm.isdigit() and len(sm) >= 2 else ""  # 50 -> 5.0, as the GPU's own tools print it
    cause = (f"{build} carries no kernels for {gpu_name or 'the GPU'} (compute capability {dotted}sm_{sm}): its build's "
             "arch list does not include it, so every CUDA kernel launch fails ('no kernel image is available')")
    if need and (not built or _v(built) is None or Version(built) < Version(need)):
        cause += f"; the first CUDA that builds sm_{sm} is {need}"
    pick = _torch_for(sm, torch, facts)
    if pick is not None:
        ver, variant, cuda = pick
        floor, own = min_driver(cuda, facts)
        driver = f"; it needs NVIDIA driver >= {floor}" + (f" (>= {own} for everything)" if own and own != floor else "") \
            if floor else ""
        where = f"from PyTorch's {variant} index" if variant else "(its default wheel)"
        newer = "" if torch else " (or a newer release's build for it)"
        return cause, (f"install torch=={ver}{'+' + variant if variant else ''} {where}{newer}: a build for CUDA {cuda} "
                       f"that carries sm_{sm} code{driver}")
    labels = sorted((lab for labs in CUDA_LABELS.values() for lab in labs), key=lambda lab: int(lab[2:]))
    label = next((lab for lab in labels if need and Version(f"{lab[2:-1]}.{lab[-1]}") >= Version(need)), "")
    if label:
        pin = f"torch=={_public(torch)}+{label}" if torch else "torch"
        return cause, (f"install {pin} from PyTorch's {label} index (or a newer cuXYZ): builds for CUDA >= {need} "
                       f"include sm_{sm}")
    return cause, ("install a torch build whose arch list (torch.cuda.get_arch_list()) includes "
                   f"sm_{sm}: `glmcompat arch torch==<version>` lists a wheel's")

def _driver_mismatch(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """driver-library-mismatch: the user-space release the log shows (nvidia-smi's "NVML library version", the kernel's
    "the client has the version", tensorflow's "libcuda reported version is" / "DSO version"), against the kernel
    module's where it shows that too ("this kernel module has the version", tensorflow's "kernel reported version is")."""
    g = h.groups
    user = g.get("client") or g.get("fx_dso") or env.cuda.get("nvml") or env.cuda.get("libcuda", "")
    if not user:
        return None
    module = g.get("module") or g.get("fx_kernel") or env.cuda.get("kernel_module", "")
    module = "" if module == user else module  # tensorflow's "kernel version seems to match DSO" reads both alike
    kernel = f"the loaded NVIDIA kernel module is {module}" if module else "the loaded NVIDIA kernel module is of another release"
    return (f"the user-space NVIDIA driver libraries (NVML's libnvidia-ml.so.1, libcuda.so.1) are driver {user}, but "
            f"{kernel}: a driver upgrade not yet followed by a reboot, or user-space libraries and kernel module installed "
            "from different driver packages (cudaErrorSystemDriverMismatch, 803; NVML_ERROR_LIB_RM_VERSION_MISMATCH)",
            f"install the kernel module of driver {user} (or the user-space libraries of the kernel module's release) so both "
            "are one release, then reboot (or reload the nvidia kernel modules); in a container, let the NVIDIA container "
            "toolkit mount the host's libraries instead of ones baked into the image")


def _system_not_ready(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-system-not-ready: the Fabric Manager's refusal with both releases (its build's and the loaded kernel
    module's), or CUDA's 802 with the driver release the log shows (nvidia-smi), for the remedy's exact version."""
    fm, loaded = h.groups.get("fm_version", ""), h.groups.get("fm_driver", "")
    if fm and loaded:
        branch = loaded.split(".", 1)[0]
        return (f"the NVIDIA Fabric Manager (nv-fabricmanager) installed is of release {fm} and the loaded NVIDIA driver "
                f"(kernel module) is {loaded}: Fabric Manager runs only with the driver of its exact release, so it refuses "
                "to start, the NVSwitch fabric (HGX/DGX A100, H100, H200, B200) is never set up, and CUDA reports the system "
                "not ready (cudaErrorSystemNotReady, 802): NCCL and torch cannot use the GPUs",
                f"install the Fabric Manager of the driver's exact release {loaded} (nvidia-fabricmanager-{branch}, or "
                f"nvidia-fabricmanager where the repository names it so, pinned to {loaded}: apt-get install "
                f"nvidia-fabricmanager-{branch}={loaded}-1), or a driver of release {fm} to match it; if driver {fm} is "
                "already installed on disk, reboot so its kernel module is the one loaded; then systemctl restart "
                "nvidia-fabricmanager")
    driver = env.cuda.get("driver", "")
    if not driver:
        return None
    branch = driver.split(".", 1)[0]
    return (f"the CUDA driver refuses all work until the system is ready (cudaErrorSystemNotReady, 802): on a machine whose "
            "GPUs are joined by NVSwitch (HGX/DGX A100, H100, H200, B200) the NVIDIA Fabric Manager service must be running, "
            f"at exactly the driver's release ({driver} here), before CUDA initializes; it is stopped, failed, or of another "
            "release than the driver",
            f"start the Fabric Manager of the driver's exact release {driver} (systemctl status nvidia-fabricmanager; "
            f"install nvidia-fabricmanager-{branch} pinned to {driver}, then systemctl enable --now nvidia-fabricmanager)")


def _flash_old_gpu(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """flash-attn-gpu-too-old in text-generation-inference's words: its own capability check, or the model it then
    refuses ("<model> requires Flash Attention enabled models")."""
    g = h.groups
    if "fa_major" in g:
        cc = f"{g['fa_major']}.{g['fa_minor']}"
        return (f"the server's Flash Attention V2 check refuses this GPU: compute capability {cc}, below the 8.0 (Ampere) "
                "its flash-attn kernels need; no package version changes that",
                "serve the model on a GPU of compute capability >= 8.0, or with a server or model path that does not need "
                "Flash Attention (an unsharded model without it, transformers with attn_implementation=\"sdpa\")")
    if "fa_model" not in g:
        return None
    cap = f" (the log's GPU: compute capability {env.capability})" if env.capability else ""
    return (f"the server could not import its Flash Attention models, and {g['fa_model'].strip()} is served only with Flash "
            f"Attention{cap}: its flash-attn check refuses a GPU below compute capability 8.0 (a V100 is 7.0, a T4 7.5), "
            "the usual reason, or the flash-attn kernels are not installed in this image (the earlier warning \"Could not "
            "import Flash Attention enabled models: <why>\" says which)",
            "on a GPU below compute capability 8.0, serve the model without sharding and Flash Attention, or use a GPU of "
            "compute capability >= 8.0 (Ampere or newer); otherwise use the server's official image, which ships the "
            "flash-attn kernels")


def _pjrt(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """jax-cuda-plugin-mismatch: XLA's check of a PJRT plugin's C API version against the framework's (jaxlib's)."""
    plugin, framework = h.groups.get("plugin_api", ""), h.groups.get("framework_api", "")
    newer = "newer" if Version(plugin) > Version(framework) else "older"
    return (f"the jax CUDA plugin (PJRT plugin) speaks PJRT C API {plugin} and the installed jaxlib (the framework) "
            f"{framework}: the plugin is of a {newer} JAX release than jaxlib, so the CUDA backend does not start",
            "install the plugin and jaxlib of one release (pip install -U \"jax[cuda12]\" brings jax, jaxlib and the CUDA "
            "plugin together, or pin the plugin to jaxlib's version); uninstall a stray plugin, or try "
            "ENABLE_PJRT_COMPATIBILITY=1")


def _trt_engine(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """tensorrt-engine-version-mismatch: the TensorRT of the engine plan against the TensorRT loading it."""
    g = h.groups
    if "plan_trt" in g:
        what = f"the engine plan was built by TensorRT {g['plan_trt']} and the TensorRT library loading it is {g['lib_trt']}"
    elif "eng_tag" in g:
        what = (f"the engine's serialization version tag is {g['eng_tag']} and the loading TensorRT's is {g['cur_tag']}: "
                "another TensorRT release built it")
    else:
        what = "the engine was serialized by another TensorRT release than the one loading it"
    return (f"{what}; TensorRT engines are tied to the TensorRT version that built them (unless built version-compatible), "
            "so deserializeCudaEngine refuses it",
            "rebuild the engine with the TensorRT that loads it (trtexec --onnx=<model> --saveEngine=<plan>, or the "
            "program's own build step), or load it with the TensorRT that built it (check which libnvinfer "
            "LD_LIBRARY_PATH finds)")


# signature id -> its cause builder (:data:`glmcompat.decide.diagnose.BUILDERS` holds these and the rest)
CUDA_BUILDERS: dict[str, Callable[[Hit, Env, Facts], tuple[str, str] | None]] = {
    "driver-too-old": _driver,
    "torch-without-nccl": _thd_nccl,
    "driver-insufficient": _driver,
    "cuda-forward-compat-unsupported": _forward_compat,
    "driver-library-mismatch": _driver_mismatch,
    "cuda-system-not-ready": _system_not_ready,
    "flash-attn-gpu-too-old": _flash_old_gpu,
    "nvjitlink-mismatch": _nvjitlink,
    "cudnn-version-mismatch": _cudnn,
    "torch-cpu-only": _cpu_torch,
    "jax-cuda-plugin-mismatch": _pjrt,
    "tensorrt-engine-version-mismatch": _trt_engine,
    "cudart-missing": _cudart,
    "cudnn-sublibrary-missing": _cudnn_sub,
    "triton-ptxas-arch": _ptxas,
    "triton-cuda-too-old": _triton_cuda,
    "cuda-bindings-driver": _cuda_bindings,
    "cuda-bindings-driver-unsupported": _bindings_unsupported,
    "cuda-stub-driver": _stub,
    "cuda-lib-missing": _cuda_lib,
    "cuda-toolkit-clash": _clash_or_cublas,
    "cublas-device-removed": _cublas_device,
    "lxc-cuda-init-hmm": _hmm,
    "torch-arch-unsupported": _torch_arch,
}


__all__ = ["CUDA_BUILDERS", "CUDA_LABELS", "TORCH_SOURCE", "cudart_release", "driver_cuda", "gpu_by_name",
           "installed_torch", "invalid_function_file", "min_driver", "torch_cuda", "torch_with_code"]
