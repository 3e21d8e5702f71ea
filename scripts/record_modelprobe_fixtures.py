"""Record the files the model probe reads, cut to the lines it parses, into tests/fixtures/modelprobe/ (needs the index).

For each (package, version, member) below it reads the member out of the published wheel by range requests and keeps
the lines that :mod:`glmcompat.ops.modelprobe` parses (and a few around them), so the offline tests run the real
parsers on real text: ``python scripts/record_modelprobe_fixtures.py``.
"""

from __future__ import annotations

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # glmcompat and scripts/ of this checkout

from glmcompat.edges.index import IndexClient  # noqa: E402
from scripts._recording import read_member, wheel  # noqa: E402

CASES = [
    ("transformers", "5.2.0", "transformers/models/auto/configuration_auto.py", r'"(glm_moe_dsa|glm4_moe|llama)"'),
    ("transformers", "5.1.0", "transformers/models/auto/configuration_auto.py", r'"(glm4_moe|llama)"'),
    ("transformers", "5.19.0", "transformers/models/auto/auto_mappings.py", r'"(glm_moe_dsa|kimi_linear|qwen3_moe)"|CONFIG_MAPPING_NAMES'),
    ("sglang", "0.5.9", "sglang/srt/models/glm4_moe.py", r"^EntryClass|^\s*GlmMoeDsa|^\]"),
    ("sglang", "0.1.9", "sglang/srt/managers/router/model_runner.py", r"arch =="),
    ("sglang", "0.5.4.post2", "sglang/srt/configs/kimi_linear.py", r"model_type"),
    ("vllm", "0.16.0", "vllm/model_executor/models/registry.py", r'"(GlmMoeDsaForCausalLM|LlamaForCausalLM)"'),
    ("vllm", "0.2.5", "vllm/model_executor/models/__init__.py", r'"(LlamaForCausalLM|MixtralForCausalLM)"|_MODELS'),
    ("vllm", "0.11.1", "vllm/transformers_utils/config.py", r"^_CONFIG_REGISTRY|^\s+\w+=\"\w+Config\"|^\)|kimi_linear"),
]


def main() -> int:
    out = []
    with IndexClient() as ic:
        for package, version, member, keep in CASES:
            f = wheel(ic, package, version)
            text, _ = read_member(ic, f, member)
            pat = re.compile(keep)
            lines = [ln for ln in text.splitlines() if pat.search(ln)]
            out.append({"package": package, "version": version, "wheel": f.filename, "sha256": f.sha256,
                        "member": member, "kept": keep, "text": "\n".join(lines) + "\n"})
            print(f"{f.filename} {member}: {len(lines)} line(s)", file=sys.stderr)
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "modelprobe", "excerpts.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
