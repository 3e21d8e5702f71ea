"""What the decisions read by name, declared as data: the packages the decision code spells out itself.

A verdict's inputs are the lock's packages that the matrix's rows name (every word of every row: names, pins,
requirements, stacks, models) and the packages named here. The start-up path keeps a lock's projection to those
names (:func:`glmcompat.cli.fastpath.relevant_names`), so a package named nowhere -- an untracked package bumped --
reuses the stored verdict. Each rule declares the packages it reads by name beside its check (``Rule.names`` in its
module, :data:`glmcompat.decide.rules.registry.RULES`): a new rule is never an edit here. :data:`SHARED` declares
those of the decision code outside the rules; ``tests/decide/test_reads.py`` fails while a package the decision code
spells out is declared by neither.
"""

from glmcompat.decide.rules.registry import RULES

# The packages named by the decision code outside the rules (glmcompat/decide/*.py: the rules' shared helpers, stack
# choice, remedies, the resolver, diagnoses), canonical.
SHARED: frozenset[str] = frozenset({
    "accelerate", "datasets", "deep-gemm", "diffusers", "flash-attn", "huggingface-hub", "nvidia-cuda-runtime", "peft",
    "tokenizers", "flashinfer-cubin", "flashinfer-jit-cache", "flashinfer-python", "mamba-ssm",
    "nvidia-nccl-cu12", "nvidia-nccl-cu13", "sgl-kernel", "sglang", "sglang-kernel", "torch", "torchao", "torchaudio",
    "torchvision", "transformers", "vllm",
})

# Every package the decision code reads by name: the rules' declarations and the shared code's, canonical.
NAMED: frozenset[str] = SHARED.union(*(r.names for r in RULES))
