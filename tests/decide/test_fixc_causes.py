"""fix-c (issue 38): CPython's "No module named 'torch'" raised by a package's setup.py that pip runs (its legacy
``python setup.py egg_info`` or a PEP 517 hook) is build-isolation-no-torch naming the package being built (diagnose
reads the traceback's setup.py frame and pip's build step, so these multi-line messages are tested here and not in a
raise-site table); a plain import of torch stays package-not-installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, explain

# pip-22+ (subprocess-exited-with-error; its build directory pip-install-<random>/<name>_<uuid hex>: pip-23.2.1 wheel
# pip/_internal/req/req_install.py ensure_build_location), dmlc/dgl#7040
NEW_PIP = """  × python setup.py egg_info did not run successfully.
  │ exit code: 1
  ╰─> [6 lines of output]
      Traceback (most recent call last):
        File "<string>", line 2, in <module>
        File "<pip-setuptools-caller>", line 34, in <module>
        File "/tmp/pip-install-a2ats_je/torch-scatter_6a1b8a286a7c4beda16d4b18523d6e0f/setup.py", line 8, in <module>
          import torch
      ModuleNotFoundError: No module named 'torch'"""
# pip before 20.2 (pip-install-<random>/<canonical name>/: pypa/pip@127acd8c9eed66f1c0e2d251639b6d378f66b488, tag 20.2,
# src/pip/_internal/req/req_install.py:366-368), pyg-team/pytorch_geometric#2002
OLD_PIP = """ERROR: Command errored out with exit status 1:
     cwd: /tmp/pip-install-0dzo7n79/torch-sparse/
    Complete output (5 lines):
    Traceback (most recent call last):
      File "<string>", line 1, in <module>
      File "/tmp/pip-install-0dzo7n79/torch-sparse/setup.py", line 6, in <module>
        import torch
    ModuleNotFoundError: No module named 'torch'
    ----------------------------------------
ERROR: Command errored out with exit status 1: python setup.py egg_info Check the logs for full command output."""


@pytest.mark.parametrize(("text", "package"), [(NEW_PIP, "torch-scatter"), (OLD_PIP, "torch-sparse")])
def test_no_torch_in_a_setup_py_that_pip_runs(text: str, package: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = diagnoses(text, "build-isolation-no-torch", [package, "--no-build-isolation"], tmp_path, capsys)
    assert ": package-not-installed" not in out, out


def test_a_plain_import_of_torch_stays_not_installed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("Traceback (most recent call last):\n  File \"/home/u/app/train.py\", line 3, in <module>\n"
                        "    import torch\nModuleNotFoundError: No module named 'torch'", tmp_path, capsys)
    assert code == 1 and ": package-not-installed" in out and "build-isolation-no-torch" not in out, out
