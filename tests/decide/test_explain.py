"""``glmcompat explain LOGFILE|-``: known failure signatures in a server log -> cause and remedy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from glmcompat.model.signatures import match_signatures, scan_lines

from tests.conftest import run_cli

# One line per known incident (GLM-5 on sm_120, the H200 runs), as the servers printed them.
LOG = """\
[2026-01-12 10:00:01] INFO server starting
Traceback (most recent call last):
RuntimeError: operator torchvision::nms does not exist
ImportError: /venv/lib/python3.12/site-packages/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZN3c1013MessageLoggerC1EPKcii
KeyError: 'glm_moe_dsa'
triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 106496, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.
RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.
OSError: Could not load this library: /venv/lib/python3.12/site-packages/torchaudio/lib/libtorchaudio.so
ImportError: /venv/lib/python3.12/site-packages/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZN3c1013MessageLoggerC1EPKcii
"""

EXPECTED = [
    ("torchvision-nms-missing", 3),
    ("undefined-symbol", 4),
    ("model-type-unknown", 5),
    ("smem-hardware-limit", 6),
    ("lxc-cuda-init-hmm", 7),
    ("torchaudio-load-failure", 8),
]


def test_every_incident_is_explained() -> None:
    hits = scan_lines(LOG.splitlines(), load_facts().rows("signature"))
    assert [(h.id, h.line) for h in hits] == EXPECTED
    sym = next(h for h in hits if h.id == "undefined-symbol")
    assert sym.count == 2 and sym.groups == {"symbol": "_ZN3c1013MessageLoggerC1EPKcii",
                                             "library": "/venv/lib/python3.12/site-packages/sgl_kernel/sm100/common_ops.abi3.so"}
    assert all(h.cause and h.remedy for h in hits)


def test_probe_error_text() -> None:
    hits = match_signatures("RuntimeError: operator torchvision::nms does not exist", load_facts().rows("signature"))
    assert [h.id for h in hits] == ["torchvision-nms-missing"] and hits[0].line == 0


def test_cli_file_json_and_exit_codes(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(LOG.encode() + b"\xff\xfe binary junk\n")
    r = run_cli("explain", str(log), "--json")
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["version"] == 1 and data["found"] is True
    # CUDA's init failing is claimed as the Proxmox LXC / HMM incident only where the log shows that scene (open-ce/open-ce#1371:
    # the same words from a faulty motherboard)
    assert [(s["id"], s["line"]) for s in data["signatures"]] == [e for e in EXPECTED if e[0] != "lxc-cuda-init-hmm"]
    log.write_bytes(LOG.encode() + b"host: Proxmox VE 8.2, LXC container 101, nvidia_uvm with HMM\n")
    assert [(s["id"], s["line"]) for s in json.loads(run_cli("explain", str(log), "--json").stdout)["signatures"]] == EXPECTED
    text = run_cli("explain", str(log))
    assert "hint:" in text.stdout and "uvm_disable_hmm=1" in text.stdout
    clean = tmp_path / "clean.log"
    clean.write_text("all good\n")
    r = run_cli("explain", str(clean))
    assert r.returncode == 0 and "no known failure signature" in r.stdout
    r = run_cli("explain", str(clean), "--json")
    assert r.returncode == 0 and (json.loads(r.stdout)["found"], json.loads(r.stdout)["signatures"]) == (False, [])


def test_cli_stdin() -> None:
    r = subprocess.run([sys.executable, "-m", "glmcompat", "explain", "-", "--json"], input="KeyError: 'glm_moe_dsa'\n",
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["log"], doc["found"]) == ("<stdin>", True)
    assert [(h["id"], h["line"], h["groups"]) for h in doc["signatures"]] == [("model-type-unknown", 1, {"key": "glm_moe_dsa"})]
    assert doc["signatures"][0]["remedy"].startswith("install transformers>=5.2.0")


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_unreadable_log_exits_2(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "nope.log" if kind == "missing" else tmp_path
    r = run_cli("explain", str(path))
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    assert str(path) in r.stderr


# vLLM's failures as its logs print them (glmcompat/matrix/data/vllm-signatures.toml); each line names its source.
VLLM_LOG = """\
WARNING 01-12 10:00:01 [interface.py:225] Failed to import from vllm._C: ImportError('/venv/lib/python3.12/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c1013MessageLoggerC1EPKciib')
AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'
ImportError: libcudart.so.12: cannot open shared object file: No such file or directory
torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device
RuntimeError: operator _moe_C::topk_softmax does not exist
ValueError: No valid attention backend found for NVIDIA RTX PRO 6000 Blackwell Server Edition with AttentionSelectorConfig(head_size=576). Reasons: {FLASH_ATTN_MLA: [FA3 is only supported on devices with compute capability 9.x]}
"""


def test_vllm_signatures() -> None:
    hits = scan_lines(VLLM_LOG.splitlines(), load_facts().rows("signature"))
    got = [(h.id, h.line) for h in hits]
    # line 3 is read by both cudart-missing and extension-cuda-mismatch (an extension of another CUDA than the log's torch,
    # decided by diagnose where the log shows torch's build; none here): a listed refinement of one vocabulary
    assert got == [("vllm-undefined-symbol", 1), ("vllm-extension-import-failed", 1), ("vllm-op-missing", 2),
                   ("extension-cuda-mismatch", 3), ("cudart-missing", 3), ("no-kernel-image", 4),
                   ("vllm-flash-attn-capability", 6), ("vllm-no-attention-backend", 6)], got
    by = {h.id: h for h in hits}
    # the generic undefined-symbol signature matched inside vLLM's on line 1: the specific one wins
    assert "undefined-symbol" not in by
    assert by["vllm-undefined-symbol"].groups == {"module": "_C", "symbol": "_ZN3c1013MessageLoggerC1EPKciib"}
    assert by["vllm-op-missing"].count == 2 and by["vllm-op-missing"].groups == {"namespace": "_C", "name": "rms_norm"}
    assert by["cudart-missing"].groups == {"library": "libcudart.so.12"}
    assert by["vllm-flash-attn-capability"].groups == {"version": "3"}
    for h in hits:
        sig = next(s for s in load_facts().rows("signature") if s.id == h.id)
        assert sig.source and "FACTS.md" not in sig.source


def test_generic_signature_still_wins_alone() -> None:
    """Outside vLLM the generic undefined-symbol signature is still reported (nothing wider matched)."""
    line = "ImportError: /venv/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZN3c10foo"
    assert [h.id for h in scan_lines([line], load_facts().rows("signature"))] == ["undefined-symbol"]


# xformers' load-failure phrasings as its source formats them (xformers-0.0.21 wheel xformers/_cpp_lib.py, the same in
# the current xformers/_cpp_lib.py): with build metadata, without it, and with no compiled extension at all
@pytest.mark.parametrize(("line", "groups"), [
    ("    PyTorch 2.9.1+cu128 with CUDA 1208 (you have 2.8.0+cu128)",
     {"built": "2.9.1+cu128", "cuda": "1208", "have": "2.8.0+cu128"}),
    ("    PyTorch 2.0.1 (you have 2.1.0+cu121)", {"built": "2.0.1", "have": "2.1.0+cu121"}),
    ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for a different version of "
     "PyTorch or Python.", {}),
    ("WARNING[XFORMERS]: Need to compile C++ extensions to use all xFormers features.", {}),
])
def test_every_xformers_load_failure_phrasing(line: str, groups: dict[str, str]) -> None:
    [h] = scan_lines([line], load_facts().rows("signature"))
    assert (h.id, {k: v for k, v in h.groups.items() if v}) == ("xformers-built-for-other-torch", groups)
