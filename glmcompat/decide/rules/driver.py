"""Every CUDA build of the set runs on the machine's NVIDIA driver (issue 35): the rule over
:func:`glmcompat.decide.cudadriver.check`, which the resolver, the remedy and verify share."""

from __future__ import annotations

from glmcompat.decide import cudadriver
from glmcompat.decide.rules.context import Context, Rule
from glmcompat.model.findings import Finding


def rule_driver(ctx: Context) -> list[Finding]:
    """A CUDA build the machine's driver cannot run: an error naming the build, its CUDA, the driver and the minimum."""
    pkgs = {n: v for n, v in ctx.packages.items() if not ctx.built_from_source(n)}
    return cudadriver.check(pkgs, ctx.target, ctx.facts, ctx.host)


RULE = Rule(id="driver", family="driver", check=rule_driver, reads=("cuda", "torch", "kernel", "cudart"),
            evidence=("observed-run", "documentation"), remedy="replace",
            doc="every CUDA build runs on the machine's NVIDIA driver (minor-version compatibility; PTX JIT)",
            names=('nvidia-cuda-runtime', 'torch', 'torchaudio', 'torchvision'))
