"""What the decisions read by name, declared as data: the packages the decision code spells out itself.

A verdict's inputs are the lock's packages that the matrix's rows name (every word of every row: names, pins,
requirements, stacks, models) and the packages named here. The start-up path keeps a lock's projection to those
names (:func:`glmcompat.cli.fastpath.relevant_names`), so a package named nowhere -- an untracked package bumped --
reuses the stored verdict. A rule that reads a package by a name its matrix rows do not carry lists it here (the
rules registry's per-rule ``reads`` will take this set's place: the union of every rule's ``reads``);
``tests/decide/test_reads.py`` fails while a package the decision code spells out is missing.
"""

# The packages named in glmcompat/decide/*.py (the rules, stack choice, remedies, the resolver, diagnoses), canonical.
NAMED: frozenset[str] = frozenset({
    "accelerate", "datasets", "deep-gemm", "diffusers", "flash-attn", "huggingface-hub", "nvidia-cuda-runtime", "peft",
    "tokenizers", "flashinfer-cubin", "flashinfer-jit-cache", "flashinfer-python", "mamba-ssm",
    "nvidia-nccl-cu12", "nvidia-nccl-cu13", "sgl-kernel", "sglang", "sglang-kernel", "torch", "torchao", "torchaudio",
    "torchcodec", "torchvision", "transformers", "vllm",
})
