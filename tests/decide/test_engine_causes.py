"""``glmcompat explain`` on the text the engines and their companions raise, warn or log (quoted from the raise sites
each [[signature]] row of glmcompat/matrix/data/engines-signatures.toml cites, at the releases scripts/harvest_engine_raise_sites.py
read), in each phrasing the sources produce across releases, and the lines that share their words but are no such
failure and must stay unclaimed."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.decide.explaining import explain, unclaimed

POSITIVE = [
    # transformers utils/import_utils.py SENTENCEPIECE_IMPORT_ERROR / DATASETS_IMPORT_ERROR, through requires_backends
    ("ImportError: \nLlamaTokenizer requires the SentencePiece library but it was not found in your environment. "
     "Check out the instructions on the", "library-needs-package", ["SentencePiece", "LlamaTokenizer"]),
    ("ImportError: WhisperFeatureExtractor requires the \U0001f917 Datasets library but it was not found in your "
     "environment. You can install it with:", "library-needs-package", ["Datasets"]),
    # transformers quantizers/quantizer_awq.py, quantizer_gptq.py, quantizer_bnb_4bit.py (4.57.1), quantizer_eetq.py (5.25.0)
    ("ImportError: Loading an AWQ quantized model requires auto-awq library (`pip install autoawq`)",
     "library-needs-package", ["auto-awq", "AWQ"]),
    ("ImportError: Loading a GPTQ quantized model requires optimum (`pip install optimum`)", "library-needs-package",
     ["optimum", "GPTQ"]),
    ("ImportError: Loading an EETQ quantized model requires kernels (`pip install kernels`)", "library-needs-package",
     ["kernels", "EETQ"]),
    ("ImportError: Using `bitsandbytes` 4-bit quantization requires Accelerate: `pip install 'accelerate>=0.26.0'`",
     "library-needs-package", ["pip install 'accelerate>=0.26.0'"]),
    ("ValueError: AQLM requires Accelerate to be installed: `pip install 'accelerate>=0.26.0'`", "library-needs-package",
     ["accelerate>=0.26.0"]),
    # accelerate accelerator.py:364, state.py:203
    ("ImportError: DeepSpeed is not installed => run `pip install deepspeed` or build it from source.",
     "library-needs-package", ["DeepSpeed", "pip install 'deepspeed'"]),
    ("ImportError: DeepSpeed is not available => install it using `pip3 install deepspeed` or build it from source",
     "library-needs-package", ["pip install 'deepspeed'"]),
    # mmdet memory_profiler_hook.py:27 and the multi-space continuation of byte_tracker.py:53
    ("ImportError: psutil is not installed, please install it by: pip install psutil", "library-needs-package",
     ["psutil"]),
    ("RuntimeError: lap is not installed,                 please install it by: pip install lap",
     "library-needs-package", ["pip install 'lap'"]),
    # flashinfer comm/mnnvl.py:37, sglang breakable_cuda_graph.py:55 and cuda_utils.py:35
    ("ImportError: Could not import the 'cuda' module. Please install cuda-python that matches your CUDA version.",
     "library-needs-package", ["cuda-python", "12.*"]),
    ("ImportError: Breakable CUDA graph on NVIDIA requires the 'cuda-python' package. Install it with: pip install "
     "cuda-python", "library-needs-package", ["pip install 'cuda-python'"]),
    ("RuntimeError: cuda.bindings is not available. Install it with: pip install cuda-python", "library-needs-package",
     ["cuda-python"]),
    # vllm models/flint/gguf_nvfp4.py:174
    ("ImportError: Loading Flint NVFP4 GGUF checkpoints requires the `gguf` package (pip install 'gguf>=0.19.0').",
     "library-needs-package", ["gguf>=0.19.0"]),
    # peft import_utils.py (0.10.0 and 0.21.2 phrasings), other.py:1696
    ("ImportError: Found an incompatible version of auto-gptq. Found version 0.4.2, but only versions above 0.5.0 are "
     "supported", "library-needs-newer-package", ["auto-gptq 0.4.2", ">= 0.5.0"]),
    ("ImportError: Found an incompatible version of gptqmodel. Found version `1.2.0`, but only versions `2.0.0` or "
     "higher are supported", "library-needs-newer-package", ["gptqmodel 1.2.0", "gptqmodel>=2.0.0"]),
    ("ImportError: Your transformers version is too old, please upgrade it to >= 4.53.1", "library-needs-newer-package",
     ["transformers>=4.53.1"]),
    # accelerate accelerator.py:302 and dataclasses.py:990
    ("ImportError: DeepSpeed version must be >= 0.9.3. Please update DeepSpeed.", "library-needs-newer-package",
     ["deepspeed>=0.9.3"]),
    ("ImportError: DeepSpeed version must be >= 0.14.0 to use MOE support. Please update DeepSpeed.",
     "library-needs-newer-package", ["deepspeed>=0.14.0"]),
    # vLLM's and SGLang's quantization/bitsandbytes.py
    ("ImportError: bitsandbytes version is wrong. Please install bitsandbytes>=0.46.1.", "library-needs-newer-package",
     ["bitsandbytes>=0.46.1"]),
    # flashinfer experimental/b12x/_lib/gating.py:61, cudnn/linear_attention.py:185, testing/utils.py:1065
    ("ImportError: b12x requires nvidia-cutlass-dsl >= 4.5.0, found 4.2.1. Upgrade with: pip install "
     "'nvidia-cutlass-dsl>=4.5.0'", "library-needs-newer-package", ["nvidia-cutlass-dsl 4.2.1", ">= 4.5.0"]),
    ("RuntimeError: cuDNN GDN requires cudnn-frontend >= 1.14.0, found 1.12.0. Upgrade with: pip install -U "
     "'nvidia-cudnn-frontend[cutedsl]'", "library-needs-newer-package", ["cudnn-frontend 1.12.0"]),
    ("Exception: CUPTI needs to be >= 13.0.0. Try 'pip install -U cupti-python'.", "library-needs-newer-package",
     ["cupti-python>=13.0.0"]),
    # xformers ops/fmha/flash.py:73
    ("ImportError: Requires Flash-Attention version >=2.7.1,<=2.8.2 but got 2.8.3.", "library-needs-newer-package",
     ["flash-attn 2.8.3", "flash-attn>=2.7.1,<=2.8.2", "xformers"]),
    # transformers modeling_utils.py:4304 (4.40.0), quantizer_torchao.py:140 (4.57.1)
    ("ImportError: Please install optimum>=1.7.0 to use Better Transformer. The version 1.6.1 was found.",
     "library-needs-newer-package", ["optimum 1.6.1", "optimum>=1.7.0"]),
    ("RuntimeError: In order to use torchao pre-quantized model, you need to have torch>=2.5.0. However, the current "
     "version is 2.4.1+cu121. You can also set", "library-needs-newer-package", ["torch 2.4.1+cu121", "torch>=2.5.0"]),
    # fla's check in sglang's attention/fla/utils.py:42: triton follows torch's pin
    ("Current Triton version 3.1.0 is below the recommended 3.2.0 version. Errors may occur and these issues will not "
     "be fixed. Please consider upgrading Triton.", "library-needs-newer-package", ["triton 3.1.0", "torch release"]),
    # TGI models/__init__.py, layers/attention/cuda.py, kv_cache.py, gptq/__init__.py, marlin/util.py (v3.3.7) and
    # utils/flash_attn.py, gptq/exllamav2.py (v2.0.4)
    ("2024-05-01T10:00:00.000000Z  WARN text_generation_launcher: Could not import Flash Attention enabled models: "
     "/opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
     "_ZN3c104cuda9SetDeviceEi", "tgi-kernels-missing", ["text-generation-inference", "make install"]),
    ("ImportError: Could not import attention kernels. Make sure your installation is correct. Complete error: "
     "libcudart.so.11.0: cannot open shared object file", "tgi-kernels-missing", ["official image"]),
    ("ImportError: Could not import vllm paged attention. Make sure your installation is correct. Complete error: X",
     "tgi-kernels-missing", ["paged attention"]),
    ("ImportError: Flash Attention V2 is not installed.\nUse the official Docker image "
     "(ghcr.io/huggingface/text-generation-inference:latest)", "tgi-kernels-missing", ["flash-attention"]),
    ("WARNING exllamav2_kernels not installed.", "tgi-kernels-missing", ["exllama"]),
    ("NotImplementedError: marlin is not installed, install it with: pip install server/marlin", "tgi-kernels-missing",
     ["marlin"]),
    ("NotImplementedError: You do not seem to have awq installed, either install it (cd server &&  make install-awq)",
     "tgi-kernels-missing", ["AWQ"]),
    # sgl_kernel/load_utils.py:170-188 (0.3.21)
    ("ImportError: \n[sgl_kernel] CRITICAL: Could not load any common_ops library!", "sgl-kernel-load-failed",
     ["sgl-kernel", "common_ops", "torch"]),
    # flash-attn setup.py (2.5.9.post1: 11.6; 2.8.3: 11.7)
    ("RuntimeError: FlashAttention is only supported on CUDA 11.7 and above.  Note: make sure nvcc has a supported "
     "version by running nvcc -V.\nCuda compilation tools, release 11.5, V11.5.119", "flash-attn-build-cuda-too-old",
     ["CUDA 11.7", "CUDA_HOME", "flash-attn"]),
    ("RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.", "flash-attn-build-cuda-too-old",
     ["CUDA 11.6"]),
    # flash_attn/cute/interface.py:216 (2.8.3); vLLM's vendored FA4 says more families
    ("ValueError: Unsupported compute capability: 8.6. Supported: 9.x, 10.x", "flash-attn-arch-unsupported",
     ["flash-attn", "FA2"]),
    ("ValueError: Unsupported compute capability: 7.5. Supported: 8.x, 9.x, 10.x, 11.x, 12.x",
     "flash-attn-arch-unsupported", ["CuTe"]),
    # vllm utils/flashinfer.py:151 and :107 (0.34.0)
    ("WARNING 05-01 10:00:00 [flashinfer.py:151] FlashInfer's precompiled kernels are missing or do not match "
     "flashinfer-python 0.6.3 (0.6.3). FlashInfer then downloads", "flashinfer-kernels-unavailable",
     ["flashinfer-cubin==0.6.3", "flashinfer-jit-cache==0.6.3"]),
    ("WARNING FlashInfer kernels are disabled: flashinfer-cubin is not installed and nvcc (CUDA_HOME, CUDA_PATH, PATH "
     "or /usr/local/cuda) or ninja (PATH) is missing.", "flashinfer-kernels-unavailable", ["vllm download-kernels"]),
    # vllm utils/deep_gemm.py:169 and :160 (0.34.0)
    ("WARNING [deep_gemm.py:169] DeepGEMM kernels are disabled: DeepGEMM's JIT needs nvcc 12.9 or newer, found 12.4 "
     "at /usr/local/cuda/bin/nvcc. Set CUDA_HOME to a newer CUDA toolkit to enable them.", "deepgemm-nvcc-unusable",
     ["12.9", "12.4", "/usr/local/cuda/bin/nvcc"]),
    ("WARNING DeepGEMM kernels are disabled: DeepGEMM JIT-compiles its kernels with nvcc, which is missing (CUDA_HOME, "
     "CUDA_PATH, PATH or /usr/local/cuda).", "deepgemm-nvcc-unusable", ["CUDA_HOME"]),
    # vllm distributed/device_communicators/pynccl_wrapper.py:414 (0.34.0)
    ("WARNING The symbol ncclCommWindowRegister is not found in the NCCL library /usr/lib/x86_64-linux-gnu/libnccl.so.2. "
     "To enable VLLM_USE_NCCL_SYMM_MEM  please update your NCCL version to >= 2.27.03.", "nccl-too-old-for-feature",
     ["2.27.03", "/usr/lib/x86_64-linux-gnu/libnccl.so.2", "system NCCL"]),
    # deepspeed op_builder/builder.py (0.14.4 :149, 0.19.8 :570, :577), async_io.py
    ("RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different version than "
     "what is being used at runtime. Please re-install DeepSpeed or switch torch versions. Install torch version=2.1, "
     "Runtime torch version=2.3", "deepspeed-ops-mismatch", ["torch 2.1", "torch 2.3"]),
    ("RuntimeError: CUDA version mismatch! DeepSpeed ops were compiled and installed with a different version than "
     "what is being used at runtime. Please re-install DeepSpeed or switch torch versions. Install CUDA version=11.8, "
     "Runtime CUDA version=12.1", "deepspeed-ops-mismatch", ["CUDA 11.8", "CUDA 12.1"]),
    ("RuntimeError: Unable to JIT load the fused_adam op due to it not being compatible due to hardware/software issue. "
     "None", "deepspeed-ops-mismatch", ["ds_report"]),
    ("RuntimeError: Unable to JIT load the cpu_adam op due to ninja not being installed.", "deepspeed-ops-mismatch",
     ["pip install ninja"]),
    (" [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.",
     "deepspeed-ops-mismatch", ["libaio-dev"]),
    # apex optimizers/fused_adam.py, multi_tensor_apply/multi_tensor_apply.py:18
    ("RuntimeError: apex.optimizers.FusedAdam requires cuda extensions", "apex-built-without-extensions",
     ["--cuda_ext"]),
    ("RuntimeError: FP16_Optimizer requires cuda extensions", "apex-built-without-extensions", ["--cuda_ext"]),
    ("RuntimeError: Attempted to call MultiTensorApply method, but MultiTensorApply is not available, possibly because "
     "Apex was installed without --cpp_ext --cuda_ext.  Original import error message: X",
     "apex-built-without-extensions", ["--cpp_ext"]),
    # bitsandbytes cextension.py:98, __init__.py:67 (0.50.2)
    ("RuntimeError: Method 'cdequantize_blockwise_fp32' not available in CPU-only version of bitsandbytes.",
     "bitsandbytes-cpu-library", ["python -m bitsandbytes"]),
    ("RuntimeError: bitsandbytes: failed to load backend cuda: libcudart.so.12: cannot open shared object file",
     "bitsandbytes-cpu-library", ["BNB_CUDA_VERSION"]),
    # bitsandbytes nn/triton_based_modules.py:166 (0.41.3); flash-attn's csrc extensions (flash_attn/models/bert.py:440,
    # layers/patch_embed.py:40)
    ("ImportError: Could not import triton. Please install triton to use SwitchBackLinear.", "library-needs-package",
     ["triton"]),
    ("ImportError: xentropy_cuda is not installed", "library-needs-package", ["csrc/xentropy", "flash-attn"]),
    ("ImportError: fused_dense is not installed", "library-needs-package", ["csrc/fused_dense_lib"]),
    # TGI v2.0.4 layers/linear.py:118, utils/flash_attn.py:293
    ("NotImplementedError: Bitsandbytes is missing install it with `pip install bitsandbytes`.", "tgi-kernels-missing",
     ["text-generation-inference"]),
    ("NotImplementedError: flash attention is not installed", "tgi-kernels-missing", ["flash-attention"]),
    # xformers ops/fmha/torch_attention_compat.py:105 (0.0.28.post3)
    ("ImportError: Current Torch with Flash-Attention 2.5.6 doesnt have a compatible aten::_flash_attention_forward "
     "schema", "xformers-torch-flash-mismatch", ["another torch", "xformers"]),
    ("ImportError: Current Torch 2.3.1+cu121 doesnt implement torch.nn.attention._get_flash_version()",
     "xformers-torch-flash-mismatch", ["another torch"]),
    # the backtick-quoted pip command of transformers' integration_utils.py:1122 and vLLM's utils/hashing.py:65
    ("ImportError: DagsHubCallback requires dagshub to be installed. Run `pip install dagshub`.",
     "library-needs-package", ["pip install 'dagshub'"]),
    ("ModuleNotFoundError: xxhash is required for the 'xxhash' prefix caching hash algorithms. Install it via `pip "
     "install xxhash`.", "library-needs-package", ["xxhash"]),
    # deepspeed compile/custom_ops/sp_compat.py:15, module_inject/auto_ep_presets/base.py:235 (0.19.8)
    ("RuntimeError: AutoSP requires PyTorch >= 2.9, found 2.5.1.", "library-needs-newer-package",
     ["torch 2.5.1", "torch>=2.9"]),
    ("ValueError: AutoEP preset 'x' for model_type='y' requires Transformers >= 4.56.0, but installed "
     "transformers==4.51.3. Upgrade", "library-needs-newer-package", ["transformers 4.51.3", "transformers>=4.56.0"]),
    # deepspeed op_builder/builder.py:170 (0.14.4), HIP's words
    ("RuntimeError: HIP version mismatch! DeepSpeed ops were compiled and installed with a different version than what "
     "is being used at runtime. Please re-install DeepSpeed or switch torch versions. Install HIP version=6.1, Runtime "
     "HIP version=6.2", "deepspeed-ops-mismatch", ["HIP 6.1", "HIP 6.2"]),
    # vllm distributed/device_communicators/pynccl.py:648 (0.34.0)
    ("WARNING ncclCommSuspend is not available in the loaded NCCL/RCCL library (requires NCCL >= 2.29.7); skipping "
     "communicator memory suspension", "nccl-too-old-for-feature", ["2.29.7", "ncclCommSuspend"]),
    # transformers quantizer_fp_quant.py:59 and quantizer_finegrained_fp8.py:52 (5.25.0), deepspeed blocked_flash.py:22
    ("ValueError: NVFP4 pseudoquantization requires a GPU with compute capability >= 9.0 (Hopper or newer) because",
     "gpu-capability-too-old", ["sm_90"]),
    ("WARNING FP8 quantized models is only supported on GPUs with compute capability >= 8.9 (e.g 4090/H100), actual = "
     "`8.6`. We will default to dequantizing", "gpu-capability-too-old", ["sm_89", "sm_86"]),
    ("RuntimeError: Blocked attention requires CUDA compute capability >= 8.0", "gpu-capability-too-old", ["sm_80"]),
    # flashinfer jit/env.py:168 and :182 (0.7.4): a provider wheel against flashinfer and against the shim
    ("RuntimeError: flashinfer-jit-cache-cu129 version (0.7.2+cu129) does not match flashinfer version (0.7.4). Run",
     "flashinfer-jit-cache-provider-version", ["flashinfer download-kernels"]),
    ("RuntimeError: flashinfer-jit-cache-cu129 version (0.7.4+cu129) does not match flashinfer-jit-cache version "
     "(0.7.4+cu130). Please install", "flashinfer-jit-cache-provider-version", ["shim"]),
    # flashinfer compilation_context.py:104, :107, gemm_svdquant.py:641, cake_build.py:199; sglang attention_hook.py:390
    ("RuntimeError: SM 120 requires CUDA >= 12.8", "cuda-too-old-for-kernel", ["sm_120", "12.8", "cu128"]),
    ("RuntimeError: SM 12.1+ requires CUDA >= 12.9\ntorch 2.7.1+cu126", "cuda-too-old-for-kernel", ["12.9"]),
    ("ValueError: Cake NVFP4 SVDQuant requires CUDA 13.0 or later. Current CUDA version: 12.8.", "cuda-too-old-for-kernel",
     ["CUDA 13.0", "12.8"]),
    ("RuntimeError: causal_conv1d needs CUDA 12.9 or newer; the local toolkit is 12.4", "cuda-too-old-for-kernel",
     ["12.9", "12.4"]),
    ("ValueError: --linear-attn-prefill-backend flashinfer on SM100+ requires CUDA 13+, got CUDA 12.9",
     "cuda-too-old-for-kernel", ["CUDA 13", "12.9"]),
    # TensorRT-LLM _common.py (_init) and plugin/plugin.py (_load_plugin_lib)
    ("ImportError: /usr/local/lib/python3.10/dist-packages/tensorrt_llm/libs/libth_common.so: undefined symbol: "
     "_ZN3c1017RegisterOperatorsD1Ev\nFATAL: Decoding operators failed to load. This may be caused by an "
     "incompatibility between PyTorch and TensorRT-LLM. Please rebuild and install TensorRT-LLM.",
     "tensorrt-llm-ops-load-failed", ["torch and tensorrt"]),
    ("ImportError: TensorRT LLM Plugin is unavailable", "tensorrt-llm-ops-load-failed", ["libnvinfer"]),
    # vLLM's and transformers' ". Install it with" lines, transformers' flash-attn checks
    ("ImportError: ConfigManager requires helion to be installed. Install it with: pip install helion",
     "library-needs-package", ["pip install 'helion'"]),
    ("ImportError: The 'sinq' package is not installed. Please install it with: pip install sinq", "library-needs-package",
     ["sinq"]),
    ("ImportError: tilelang is required for mhc but is not installed. Install it with `pip install tilelang`.",
     "library-needs-package", ["tilelang"]),
    ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package "
     "flash_attn seems to be not installed. Please refer to the documentation", "library-needs-package",
     ["flash-attn", "--no-build-isolation", "sdpa"]),
    ("RuntimeError: Flash Attention 2 is not installed. Please refer to "
     "https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 to install it", "library-needs-package",
     ["flash-attn"]),
    # more minimums: vLLM's quantization imports, transformers' chat template / offload / torchao / GPTQ, accelerate's TP
    ("ImportError: Please install torchao>=0.10.0 via `pip install torchao>=0.10.0` to use torchao quantization.",
     "library-needs-newer-package", ["torchao>=0.10.0"]),
    ("ImportError: apply_chat_template requires jinja2>=3.1.6 to be installed. Your version is 3.1.4. You can upgrade",
     "library-needs-newer-package", ["jinja2 3.1.4", "jinja2>=3.1.6"]),
    ("ImportError: You need accelerate version to be greater or equal than 0.31 to save models with offloaded "
     "parameters. Detected version 0.30.1.", "library-needs-newer-package", ["accelerate>=0.31"]),
    ("RuntimeError: In order to use safetensors with torchao, please use torchao version >= 0.14.0. Current version: "
     "0.12.0", "library-needs-newer-package", ["torchao 0.12.0", "torchao>=0.14.0"]),
    ("ImportError: You need a version of auto_gptq >= 0.4.2 to use GPTQ: `pip install --upgrade auto-gptq`",
     "library-needs-newer-package", ["auto-gptq>=0.4.2"]),
    ("ImportError: Deepspeed TP requires deepspeed >= 0.16.4, Please update DeepSpeed via `pip install deepspeed -U`.",
     "library-needs-newer-package", ["deepspeed>=0.16.4"]),
    # SGLang's "Please install X via", "X is not installed. Please install", "vllm is not installed, to use"
    ("ImportError: Please install gguf via `pip install gguf` to use gguf quantizer.", "library-needs-package", ["gguf"]),
    ("ImportError: DeepEP is not installed. Please install DeepEP package from https://github.com/deepseek-ai/deepep.",
     "library-needs-package", ["DeepEP"]),
    ("ImportError: vllm is not installed, to use CompressedTensorsW8A16Fp8, please install vllm", "library-needs-package",
     ["vllm"]),
    # SGLang's SM checks (quantization/mxfp4.py:655, :439, mxfp4_marlin_moe.py:161)
    ("RuntimeError: MXFP4 Marlin requires SM90+.", "gpu-capability-too-old", ["9.0", "sm_90"]),
    ("NotImplementedError: moe_runner_backend=flashinfer_mxfp4 requires SM90, SM100, or SM120.",
     "gpu-capability-too-old", ["SM90, SM100, or SM120"]),
    ("RuntimeError: MXFP4 Marlin requires SM90 or SM120.", "gpu-capability-too-old", ["SM90 or SM120"]),
    ("RuntimeError: Cannot find any available NVCC compiler", "cuda-toolkit-not-found", ["CUDA_HOME"]),
    # vLLM 0.34.0's kernel builders (fmha_sm100 decode_q8kv4/_build_utils.py:141)
    ("RuntimeError: No runnable CUDA toolkit was found. Set CUDA_HOME or CUDACXX to a toolkit containing a host-compatible "
     "bin/nvcc. Tried: /usr/local/cuda", "cuda-toolkit-not-found", ["CUDA_HOME"]),
    ("RuntimeError: CUDA_HOME/nvcc not found; a CUDA 13 toolkit is required", "cuda-toolkit-not-found", ["nvcc"]),
    # vllm fused_moe/config.py:23 (0.11.0), third_party/pynvml.py:2367 (0.9.2)
    ("ERROR Failed to import Triton kernels. Please make sure your triton version is compatible. Error: X",
     "vllm-triton-kernels-unavailable", ["triton_kernels"]),
    ("pynvml.NVMLLibraryMismatchError: Unversioned function called and the pyNVML version does not match the NVML lib "
     "version.", "nvml-binding-mismatch", ["nvidia-ml-py"]),
    # llama.cpp src/llama-model.cpp load_arch ("unknown model architecture: '<name>'"), wrapped by llama_model_load
    ("llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'gemma3n'",
     "llama-cpp-arch-unknown", ["'gemma3n'", "upgrade the runtime"]),
]


@pytest.mark.parametrize(("text", "sid", "words"), POSITIVE)
def test_engine_raise_sites(text: str, sid: str, words: list[str], tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and f": {sid}" in out, out
    assert [w for w in words if w not in out] == [], out


def test_every_engine_signature_is_tested() -> None:
    path = Path(__file__).resolve().parents[2] / "glmcompat" / "matrix" / "data" / "engines-signatures.toml"
    ids = {row["id"] for row in tomllib.loads(path.read_text(encoding="utf-8"))["signature"]}
    assert ids == {sid for _, sid, _ in POSITIVE}


@pytest.mark.parametrize("text", [
    # words of library-needs-package in a log that is no missing package: a model's size, a tokenizer's own note
    "Loading a large model requires more GPU memory than this card has",
    "INFO Loading an AWQ quantized model with 4 bits from /models/x",
    "WARNING: tokenizers is not installed properly? no: the tokenizer was saved with an older format",
    "The PyTorch library but it was not found message is printed by transformers",
    # transformers' own PyTorch line is package-not-installed's, not this one's
    # words of library-needs-newer-package: a version printed, not checked
    "INFO Found version 0.5.0 of auto-gptq, OK",
    "DeepSpeed version 0.14.0 is installed",
    # TGI's own successful start-up and kernel choices
    "INFO text_generation_launcher: Using Attention = flashinfer",
    "Could not import the requested model card: HTTP 404",
    # sgl-kernel's debug lines on success
    "[sgl_kernel] ✓ Successfully loaded common_ops",
    # flash-attn: a CUDA version printed by its build, not refused
    "FlashAttention is supported on CUDA 12.4",
    "Unsupported compute capability for fp8 weights in this checkpoint",
    # xformers: each operator's reasons under "No operator found" are its limits (facebookresearch/xformers#1263: an
    # unaligned attn_bias on sm_89, where fa3F also says it needs sm_90 and was not built)
    "`fa3F@0.0.0` is not supported because:\n    requires device with capability > (9, 0) but your GPU has capability "
    "(8, 9) (too old)\n    operator wasn't built - see `python -m xformers.info` for more info",
    "    bf16 is only supported on A100+ GPUs",
    "    `cutlassF` is not supported because:\n        dtype=torch.float32 (supported: {torch.float16})",
    "    attn_bias type is <class 'torch.Tensor'>",
    # vLLM's FlashInfer and DeepGEMM choices logged on a working stack
    "INFO Using FlashInfer precompiled kernels from flashinfer-cubin 0.6.3",
    "INFO DeepGEMM kernels are enabled (nvcc 12.9)",
    "The symbol table of the NCCL library was read",
    # DeepSpeed: a report line of a compatible op, and a successful JIT load
    "fused_adam ............. [NO] ....... [OKAY]",
    "Loading extension module fused_adam... Time to load fused_adam op: 0.05 seconds",
    # apex and bitsandbytes words in working logs
    "apex.optimizers.FusedAdam uses cuda extensions",
    "bitsandbytes: loaded backend cuda from libbitsandbytes_cuda121.so",
    "Triton kernels imported",
    "pyNVML version 12.560.30 matches the NVML lib version",
    # the generic pip phrasing needs the words and the backtick-quoted command
    "xxhash is required for the 'xxhash' prefix caching hash algorithms",
    "Run `pip install -r requirements.txt` to set up the examples",
    "AutoSP requires PyTorch >= 2.9",
    "ncclCommSuspend is available in the loaded NCCL library",
    "FP8 runs on GPUs with compute capability >= 8.9",
    "flashinfer-jit-cache-cu129 version (0.7.4+cu129) matches flashinfer version (0.7.4)",
    "Please install the package from the release page if you build from source",
    "the cluster requires SM90 nodes for this job; scheduling on sm_90 queue",
    "See the docs. Install it with care: the plugin is optional",
    "Please install torchao to get the fastest kernels",
    "INFO CUDA toolkit found at /usr/local/cuda; CUDA_HOME set",
    "INFO TensorRT LLM plugin loaded; decoding operators are available",
    "INFO SM 120 detected, CUDA 12.8 found: compiling for sm_120a",
    "ImportError: fused_dense is not installed in /opt/ext, rebuilding",
    "flash attention is not installed by default on CPU images, see the docs",
])
def test_lines_sharing_the_words_stay_unclaimed(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


def test_tgi_missing_module_is_the_wider_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a missing module behind TGI's import: package-not-installed's wider match names it
    code, out = explain("WARN text_generation_launcher: Could not import Flash Attention enabled models: No module named "
                        "'dropout_layer_norm'", tmp_path, capsys)
    assert code == 1 and ": package-not-installed" in out and "tgi-kernels-missing" not in out, out


def test_tgi_without_cuda_is_the_wider_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # TGI's own "CUDA is not available" behind the import: cuda-not-available's wider match wins the line
    code, out = explain("WARN text_generation_launcher: Could not import Flash Attention enabled models: CUDA is not "
                        "available", tmp_path, capsys)
    assert code == 1 and ": cuda-not-available" in out and "tgi-kernels-missing" not in out, out


def test_transformers_pytorch_line_stays_package_not_installed(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("ImportError: AutoModel requires the PyTorch library but it was not found in your environment.",
                        tmp_path, capsys)
    assert code == 1 and ": package-not-installed" in out and "library-needs-package" not in out, out
