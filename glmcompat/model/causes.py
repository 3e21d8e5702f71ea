"""One vocabulary of causes, shared by ``check``, ``verify`` and ``explain``: the same break reads the same in all three.

A break has one id, that of the check rule that reports it (:data:`glmcompat.model.findings.CheckRule`), and one
sentence, :meth:`Break.sentence`, built from the same parts wherever it was found: a set's pins (``check``), what
the probes read of the installation (``verify``), what a log shows (``explain``). ``check`` and ``verify`` report a
break as a finding whose ``rule`` is that id; ``explain`` (and ``verify`` on a probe's error text) as a signature hit
whose ``rule`` is :data:`CAUSE_OF` its signature. So a log's diagnosis and a lock's verdict can be compared by id, and
read side by side. Pure: text only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from glmcompat.model.findings import CheckRule

# The cause a failure signature names (a [[signature]] id of the matrix) and a failed import of verify's extension
# probe (its kind: glmcompat.ops.verify.extensions.cause_of), as the id of the check rule that reports the same break.
# A signature missing here has no counterpart in the check (an operator missing, the kernel's shared memory).
CAUSE_OF: Mapping[str, CheckRule] = {
    "numpy-abi": "numpy-abi",
    "undefined-symbol": "abi", "vllm-undefined-symbol": "abi", "torch-symbol": "abi",
    "torchvision-nms-missing": "family", "torchaudio-load-failure": "family",
    "driver-too-old": "driver", "driver-insufficient": "driver", "cuda-forward-compat-unsupported": "driver",
    "ptx-unsupported-toolchain": "driver",
    "torch-cpu-only": "gpu-code", "no-kernel-image": "gpu-code", "torch-arch-unsupported": "gpu-code",
    "cudart-missing": "cuda",
    "glibc-too-old": "glibc",
    "model-type-unknown": "model",
}


def cause_name(sid: str, family: str = "") -> str:
    """A signature's id as every command prints it: with the more general cause it is always a case of, where its row
    declares one (``torch-arch-unsupported (a no-kernel-image)``), so that the family's name is in the text too."""
    return f"{sid} ({'an' if family[:1] in 'aeiou' else 'a'} {family})" if family else sid


def _who(package: str, version: str, default: str) -> str:
    return f"{package} {version}".strip() if package else default


@dataclass(frozen=True, kw_only=True)
class Break:
    """One break, as any of the three commands found it: ``rule`` (its cause id), ``package`` and ``version`` (what
    breaks; "" where the source names none), ``against`` (the version of what it breaks against: numpy's, torch's
    public version, the NVIDIA driver's) and ``built`` (what it was built for: the torch it was built against, its
    CUDA; ``cpu`` for a CPU-only build). Parts a source does not show are "" and the sentence words them generically;
    what only one source knows (a missing symbol, where the driver version came from) follows the sentence there."""

    rule: CheckRule
    package: str = ""
    version: str = ""
    against: str = ""
    built: str = ""

    def sentence(self) -> str:
        """The break in one sentence (no trailing dot): the one formatter of the vocabulary's causes."""
        who = f"{self.package} {self.version}".strip()
        if self.rule == "numpy-abi":
            np = f"numpy {self.against} (NumPy 2)" if self.against else "NumPy 2"
            return f"{who or 'a compiled extension'} was compiled against NumPy 1.x, whose C ABI {np} changed: its import fails"
        if self.rule == "abi":
            built = f"torch {self.built}" if self.built else "another torch"
            torch = f"torch {self.against}" if self.against else "the torch beside it"
            return (f"{who or 'a compiled extension'} was built against {built}, and {torch} does not export the torch "
                    "symbols it needs: it fails to load ('undefined symbol')")
        if self.rule == "driver":
            drv = f"the NVIDIA driver{' ' + self.against if self.against else ''}"
            of = f"{who or 'the process'}{f' (CUDA {self.built})' if self.built else ''}"
            return (f"{drv} is older than the CUDA runtime of {of}: CUDA cannot initialise ('The NVIDIA driver on your "
                    "system is too old')")
        if self.rule == "gpu-code" and self.built == "cpu":
            return f"{who or 'the installed torch'} is a CPU-only build: it has no CUDA at all"
        raise ValueError(f"no sentence for the cause {self.rule!r} (built {self.built!r})")


__all__ = ["CAUSE_OF", "Break", "cause_name"]
