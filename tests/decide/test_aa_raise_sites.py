"""The messages of tests/fixtures/raise_sites/aa-signatures.toml (issue 38, branch fix-aa): a symbol cuDNN owns (its C
API, its C++ namespace cudnn::, or a name the loader's version node binds to a cuDNN sub-library) missing inside a cuDNN
library, in each form the loader and cuDNN 8 print it, and torchvision's import failing part-way ("partially initialized
module 'torchvision'" in its own frames); each named with its words, and each near miss left unclaimed."""

from __future__ import annotations

import sys
import traceback


from tests.decide.explaining import diagnoses, table

MESSAGES = table("aa-signatures.toml")



# torchvision/__init__.py's order (from .extension import _HAS_OPS, then _meta_registrations, whose register_meta asks
# torchvision.extension._has_ops()), with _meta_registrations raising torchvision's own error on the first import
STAND_IN = {
    "__init__.py": "from .extension import _HAS_OPS  # usort:skip\nfrom torchvision import _meta_registrations  # usort:skip\n",
    "extension.py": "_HAS_OPS = False\n\n\ndef _has_ops():\n    return _HAS_OPS\n",
    "_meta_registrations.py": (
        "import os\n\nimport torchvision.extension  # noqa: F401\n\n\n"
        "def register_meta(op_name):\n    def wrapper(fn):\n        if torchvision.extension._has_ops():\n"
        "            pass\n        return fn\n\n    return wrapper\n\n\n"
        "if not os.environ.get('_AA_SECOND'):\n    os.environ['_AA_SECOND'] = '1'\n"
        "    raise RuntimeError('operator torchvision::nms does not exist')\n\n\n"
        "@register_meta('roi_align')\ndef meta_roi_align():\n    pass\n"),
}


def test_the_second_import_after_a_failed_one_is_read_from_cpythons_own_words(tmp_path, capsys, monkeypatch):
    """CPython's own message and frames: a stand-in torchvision under site-packages whose first import fails in
    _meta_registrations (the ops not registering) and whose second import then raises the partially initialized
    AttributeError; explain reads it as torchvision's import failing part-way."""
    pkg = tmp_path / "site-packages" / "torchvision"
    pkg.mkdir(parents=True)
    for name, text in STAND_IN.items():
        (pkg / name).write_text(text, encoding="utf-8")
    saved = {k: v for k, v in sys.modules.items() if k == "torchvision" or k.startswith("torchvision.")}
    for k in saved:
        monkeypatch.delitem(sys.modules, k)
    monkeypatch.syspath_prepend(str(pkg.parent))
    monkeypatch.delenv("_AA_SECOND", raising=False)
    outputs = []
    try:
        for _ in range(2):
            try:
                __import__("torchvision")
            except Exception:  # the first: RuntimeError; the second: the AttributeError
                outputs.append(traceback.format_exc())
    finally:
        for k in [k for k in sys.modules if k == "torchvision" or k.startswith("torchvision.")]:
            del sys.modules[k]
        sys.modules.update(saved)
    assert "operator torchvision::nms does not exist" in outputs[0]
    assert "partially initialized module 'torchvision' has no attribute 'extension'" in outputs[1]
    out = diagnoses(outputs[1], "torchvision-nms-missing", ["partially initialized", "restart"], tmp_path, capsys)
    assert "companion-too-old" not in out
