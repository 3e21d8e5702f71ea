"""The installers', builders' and loaders' raise sites (issue 38's sweep by library): each packaging or compatibility
message that pip, uv, poetry, pdm, conda/libmamba, setuptools/distutils, build, the compilers and linkers a build runs,
and the dynamic loaders (glibc's ld.so, musl's) print, as the tool formats it (tests/fixtures/raise_sites/
install-family.toml, listed by `scripts/harvest_raise_sites.py --family install` and the probes its sources name), is
named by the signature it should get, with the package, versions and library the text holds; the sweep's notices,
and lines that share a signature's words but tell of no failure, stay unclaimed."""

from __future__ import annotations

import shutil
import subprocess
import tomllib

import pytest

from tests.decide.explaining import each_row, RAISE_SITES, table, diagnoses, explain, unclaimed
from tests.decide.test_raise_site_tables import harvester as _harvester

MESSAGES = table("install-family.toml")


# words a signature reads, in lines that tell of no failure (or of one outside the stack's packaging)
UNCLAIMED = [
    "Requires-Python >=3.9 satisfied by Python 3.11.9",
    "Successfully built flash-attn",
    "Building wheel for flash-attn (pyproject.toml) ... done",
    "Created wheel for flash-attn: filename=flash_attn-2.7.4.post1-cp311-cp311-linux_x86_64.whl",
    "  Getting requirements to build wheel ... done",
    "Preparing metadata (pyproject.toml) ... done",
    "Built flash-attn==2.7.4.post1",
    "The build backend returned 0",
    "Resolving dependencies... (2.1s)",
    "Because you asked for it, version solving was skipped.",
    "Unable to find a resolution cache; resolving from scratch",
    "Solving environment: done",
    "Collecting package metadata (repodata.json): done",
    "__cuda=12.4=0 (virtual package)",
    "Your installed CUDA driver is up to date",
    "nothing provides the answer, says the docs",
    "command '/usr/bin/gcc' succeeded",
    "gcc -pthread -B /opt/conda/compiler_compat -fPIC -O2 -isystem /opt/conda/include -c ops.c -o ops.o",
    "/usr/bin/ld: warning: libcudart.so.11.0, needed by libfoo.so, may conflict with libcudart.so.12",
    "Linking against -lcudart from /usr/local/cuda/lib64",
    "libGL.so.1 => /usr/lib/x86_64-linux-gnu/libGL.so.1 (0x00007f2c)",
    "ELF class: ELFCLASS64",
    "static TLS block size: 4096",
    "execstack: cleared the executable-stack flag of libfoo.so",
    "Using the C++17 standard (-std=c++17)",
    "This environment is a virtualenv at /opt/venv",
    "Installing build dependencies ... done",
    "The current project's supported Python range (>=3.9,<4.0) is compatible with all requirements",
    "pip 25.3 from /venv/lib/python3.11/site-packages/pip (python 3.11)",
    "Looking in indexes: https://download.example/whl/cu128",
    "ninja: no work to do.",
    "Error loading configuration file ~/.config/app.toml: No such file or directory",
    # a package's own library, by its path: not a system library (bitsandbytes' CPU build, loaded by its own code)
    "OSError: /venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cpu.so: cannot open shared object file: "
    "No such file or directory",
]


def test_a_line_with_a_signatures_words_is_not_claimed(tmp_path, capsys):
    def check(line):
        unclaimed(line, tmp_path, capsys)

    each_row([(str(line), line) for line in UNCLAIMED], check)


def test_a_resolver_failure_outside_the_stack_is_not_claimed(tmp_path, capsys):
    """poetry's and pdm's solvers, and uv's derivation, over packages the stack does not hold: not this tool's remit
    (as pip's own conflict outside the stack is not)."""
    for text in ("Because myapp depends on requests (2.99) which doesn't match any versions, version solving failed.",
                 "[ResolutionImpossible]: Unable to find a resolution for requests",
                 "  ╰─▶ Because flask==9.0 depends on werkzeug==9.0 and you require werkzeug==3.0, we can conclude that "
                 "your requirements are unsatisfiable.",
                 "  RuntimeError: Unable to find installation candidates for requests (2.99)"):
        code, out = explain(text, tmp_path, capsys)
        assert code == 0 and "no known failure signature" in out, (text, out)


def test_the_cause_names_what_the_text_holds(tmp_path, capsys):
    """Each builder reads the package, the interpreter, the range, the library or the CUDA release from the line."""
    diagnoses("ERROR: Package 'vllm' requires a different Python: 3.8.10 not in '>=3.9'", "python-version-unsupported",
              ["vllm", "3.8.10", ">=3.9"], tmp_path, capsys)
    diagnoses("error: The resolved Python interpreter (Python 3.8.10) is incompatible with the project's Python "
              "requirement: `>=3.10`", "python-version-unsupported", ["3.8.10", ">=3.10", "uv"], tmp_path, capsys)
    diagnoses("  ERROR: Failed building wheel for flash-attn", "source-build-failed", ["flash-attn", "pip"],
              tmp_path, capsys)
    diagnoses("error: Failed to build `flash-attn==2.7.4.post1`", "source-build-failed", ["flash-attn 2.7.4.post1", "uv"],
              tmp_path, capsys)
    diagnoses("  - nothing provides __cuda >=12.4 needed by pytorch-2.5.1-py3.11_cuda12.4_cudnn9.1.0_0",
              "conda-cuda-too-old", ["12.4", "CONDA_OVERRIDE_CUDA=12.4"], tmp_path, capsys)
    diagnoses("ImportError: libGL.so.1: cannot open shared object file: No such file or directory", "system-lib-missing",
              ["libGL.so.1", "libgl1"], tmp_path, capsys)
    diagnoses("ImportError: /lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block",
              "static-tls-exhausted", ["LD_PRELOAD=/lib/aarch64-linux-gnu/libgomp.so.1"], tmp_path, capsys)
    diagnoses("/usr/bin/ld: cannot find -lcudart: No such file or directory", "link-library-missing",
              ["-lcudart", "LIBRARY_PATH"], tmp_path, capsys)
    diagnoses("  RuntimeError: Unable to find installation candidates for nvidia-cudnn-cu12 (8.9.2.26)",
              "no-matching-distribution", ["poetry", "nvidia-cudnn-cu12 8.9.2.26"], tmp_path, capsys)
    diagnoses("RuntimeError: torch-2.1.0-cp311-cp311-win_amd64.whl is not a supported wheel for this platform. It can't "
              "be sorted.", "wheel-not-supported", ["poetry refused", "win_amd64"], tmp_path, capsys)


def test_an_nvidia_library_keeps_its_own_signature(tmp_path, capsys):
    """system-lib-missing leaves the NVIDIA and torch libraries to the signatures that know them."""
    code, out = explain("ImportError: libcublasLt.so.12: cannot open shared object file: No such file or directory",
                        tmp_path, capsys)
    assert "cuda-lib-missing" in out and "system-lib-missing" not in out, out


def test_a_uv_wheel_tag_failure_is_not_read_as_a_conflict(tmp_path, capsys):
    """uv's "has no wheels with a matching platform tag" derivation ends like a conflict; it stays the tag check's
    (wheel-not-supported: issue 38's one vocabulary, tests/decide/test_one_vocabulary.py)."""
    code, out = explain("  ╰─▶ Because torch==2.5.1+cu124 has no wheels with a matching platform tag (e.g., "
                        "`macosx_14_0_arm64`) and you require torch==2.5.1+cu124, we can conclude that your requirements "
                        "are unsatisfiable.", tmp_path, capsys)
    assert ": wheel-not-supported" in out and "pip-resolution-impossible" not in out, out
    assert "no-matching-distribution" not in out, out


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_real_loader_and_linker_texts_are_named(tmp_path, capsys):
    """The texts as glibc's loader and GNU ld print them on this machine: a C program that dlopens a missing library and
    a 32-bit-class file, and a link against a library that is not there."""
    (tmp_path / "load.c").write_text(
        '#include <dlfcn.h>\n#include <stdio.h>\nint main(int c, char **v) {\n'
        '  if (!dlopen(v[1], RTLD_NOW)) { fprintf(stderr, "%s\\n", dlerror()); return 1; }\n  return 0;\n}\n')
    subprocess.run(["gcc", "-o", str(tmp_path / "load"), str(tmp_path / "load.c"), "-ldl"], check=True)
    # an ELF header of class 32 (e_ident[EI_CLASS] = 1), enough for the loader to read the class and refuse it
    (tmp_path / "libthirty.so").write_bytes(b"\x7fELF\x01\x01\x01" + bytes(9) + b"\x03\x00\x03\x00" + bytes(60))
    (tmp_path / "libtext.so").write_bytes(b"version https://git-lfs.github.com/spec/v1\n" + bytes(64))
    texts = {}
    for lib in ("libglmcompat_absent.so.1", str(tmp_path / "libthirty.so"), str(tmp_path / "libtext.so")):
        r = subprocess.run([str(tmp_path / "load"), lib], capture_output=True, text=True)
        texts[lib] = r.stderr.strip()
    link = subprocess.run(["gcc", "-o", str(tmp_path / "x"), str(tmp_path / "load.c"), "-lglmcompatabsent"],
                          capture_output=True, text=True)
    assert link.returncode != 0
    linked = next(ln for ln in link.stderr.splitlines() if "cannot find -lglmcompatabsent" in ln)
    diagnoses(texts["libglmcompat_absent.so.1"], "system-lib-missing", ["libglmcompat_absent.so.1"], tmp_path, capsys)
    diagnoses(texts[str(tmp_path / "libthirty.so")], "elf-wrong-class", ["ELFCLASS32"], tmp_path, capsys)
    diagnoses(texts[str(tmp_path / "libtext.so")], "elf-invalid", ["libtext.so"], tmp_path, capsys)
    diagnoses(linked, "link-library-missing", ["-lglmcompatabsent"], tmp_path, capsys)


def test_the_harvester_reads_the_installers_message_shapes():
    """The shapes pip's and poetry's sources raise in (quoted from the pip-25.3 and poetry-1.8.5 wheels): a diagnostic
    error's reference and its message= / note_stmt= keywords, a logger's error line, a plain raise."""
    source = '''
class MetadataGenerationFailed(InstallationSubprocessError, InstallationError):
    reference = "metadata-generation-failed"

    def __init__(self, *, package_details: str) -> None:
        super(InstallationSubprocessError, self).__init__(
            message="Encountered error while generating package metadata.",
            context=escape(package_details),
            hint_stmt="See above for details.",
            note_stmt="This is an issue with the package mentioned above, not pip.",
        )
def build_one(name):
    logger.error("Failed building wheel for %s", name)
def choose(package):
    raise RuntimeError(f"Unable to find installation candidates for {package}")
'''
    got = {(kind, text) for _, kind, text in _harvester().install_sites(source)}
    assert ("reference of MetadataGenerationFailed", "metadata-generation-failed") in got
    assert any(k.endswith("(message=)") and t == "Encountered error while generating package metadata." for k, t in got)
    assert ("log error", "Failed building wheel for %s") in got
    assert ("raise RuntimeError", "Unable to find installation candidates for {package}") in got


REAL = tomllib.loads((RAISE_SITES / "install-real.toml").read_text(encoding="utf-8"))["run"]


def test_what_the_tools_really_print_is_named(tmp_path, capsys):
    """pip's, setuptools' and gcc's whole output on this project's small failing packages, as recorded by
    scripts/record_install_messages.py: explain names each cause the run holds."""
    def check(run):
        code, out = explain(run["output"], tmp_path, capsys)
        assert code == 1 and all(f": {sid}" in out for sid in run["expect"]), out

    each_row([(run["command"][:60], run) for run in REAL], check)


def test_the_recorded_runs_cover_the_installers_failures():
    assert {s for r in REAL for s in r["expect"]} >= {"wheel-not-supported", "python-version-unsupported",
                                                     "build-backend-too-old", "build-header-missing",
                                                     "source-build-failed", "build-tool-missing",
                                                     "externally-managed-environment"}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_real_nvcc_option_checks_are_named(tmp_path, capsys):
    """nvcc's own refusals as it prints them here: an architecture it does not know, a C++ dialect it does not know."""
    (tmp_path / "a.cu").write_text("int main() { return 0; }\n")
    arch = subprocess.run(["nvcc", "-arch=sm_200", "-c", "a.cu", "-o", "a.o"], cwd=tmp_path, capture_output=True, text=True)
    std = subprocess.run(["nvcc", "-std=c++99", "-c", "a.cu", "-o", "a.o"], cwd=tmp_path, capture_output=True, text=True)
    assert arch.returncode != 0 and std.returncode != 0
    diagnoses(arch.stderr, "nvcc-unsupported-arch", ["sm_200"], tmp_path, capsys)
    diagnoses(std.stderr, "cxx-standard-unsupported", [], tmp_path, capsys)


@pytest.mark.parametrize("line", [
    # uv 0.2.x-0.4.x (astral-sh/uv@f3430c3a2a crates/uv-resolver/src/lock.rs: "distribution {id} can't be installed ...")
    "error: distribution torch==2.4.1 @ registry+https://index.invalid/whl/cu124 can't be installed because it doesn't "
    "have a source distribution or wheel for the current platform",
    # uv 0.5 on (crates/uv-resolver/src/lock/mod.rs: "Distribution `{id}` can't be installed ...")
    "error: Distribution `torch==2.4.1 @ registry+https://index.invalid/whl/cu124` can't be installed because it "
    "doesn't have a source distribution or wheel for the current platform",
    # a direct wheel the lock holds whose tags do not fit (the same file, its other variant)
    "error: Distribution `torch==2.4.1 @ registry+https://index.invalid/whl/cu124` can't be installed because the "
    "binary distribution is incompatible with the current platform",
])
def test_uv_no_wheel_for_this_platform_names_the_release_in_every_form(line, tmp_path, capsys):
    """uv's installer words, in each form its releases printed, are wheel-not-supported's alone (the tag check: issue
    38's one vocabulary, tests/decide/test_one_vocabulary.py), with the package and version the line names."""
    out = diagnoses(line, "wheel-not-supported", ["torch==2.4.1"], tmp_path, capsys)
    assert ": no-matching-distribution" not in out, out


def test_uv_pylock_form_names_the_package(tmp_path, capsys):
    """`uv pip sync` of a pylock.toml (crates/uv-resolver/src/lock/export/pylock_toml.rs): the package alone."""
    diagnoses("error: Package `torch` can't be installed because it doesn't have a source distribution or wheel for "
              "the current platform", "wheel-not-supported", ["torch"], tmp_path, capsys)


@pytest.mark.parametrize(("tag", "words"), [
    ("no wheels with a matching Python ABI tag (e.g., `cp312`)", ["Python's ABI"]),
    ("no wheels with valid tags", ["invalid tags"]),
    ("no wheels with a free-threading compatible ABI tag", ["free-threaded"]),
])
def test_uv_derivation_tag_clauses_are_wheel_not_supported(tag, words, tmp_path, capsys):
    """Each of IncompatibleTag's wordings (crates/uv-distribution-types/src/prioritized_distribution.rs, Display of
    IncompatibleDist), as uv's derivation prints them, a terminal's wrap leaving the clause on a line of its own."""
    diagnoses(f"      and flashinfer==0.1.2+cu121torch2.3 has {tag}, we can conclude that", "wheel-not-supported",
              ["flashinfer==0.1.2+cu121torch2.3", *words], tmp_path, capsys)


def test_uv_tag_clause_outside_the_stack_is_named(tmp_path, capsys):
    """uv's tag check is the cause whatever the package (fix-last2: the boltz log's cuequivariance-ops-cu12 is none of
    the stack's): named with the package and the tag uv printed for this interpreter."""
    diagnoses("  ╰─▶ Because dearpygui==1.9.1 has no wheels with a matching Python version tag (e.g., `cp312`) and your "
              "project depends on dearpygui==1.9.1, we can conclude that your project's requirements are unsatisfiable.",
              "wheel-not-supported", ["dearpygui==1.9.1", "cp312"], tmp_path, capsys)


def test_pips_conflict_report_without_its_head(tmp_path, capsys):
    """pip's causes (src/pip/_internal/resolution/resolvelib/factory.py get_installation_error: "The conflict is caused
    by:", then "The user requested ..." / "<parent> <version> depends on ...") pasted without "Cannot install ...":
    the package two of them pin, and a fix that names both pins; the same words over packages outside the stack stay
    unclaimed."""
    out = diagnoses("The conflict is caused by:\n    The user requested nvidia-cudnn-cu12==9.1.0.70\n"
                    "    The user requested nvidia-cudnn-cu12==8.9.2.26", "pip-resolution-impossible",
                    ["nvidia-cudnn-cu12==9.1.0.70 and nvidia-cudnn-cu12==8.9.2.26"], tmp_path, capsys)
    assert "request nvidia-cudnn-cu12 once" in out, out
    diagnoses("    The user requested torch==2.5.1\n    chatterbox-tts 0.1.2 depends on torch==2.6.0",
              "pip-resolution-impossible", ["torch==2.6.0", "chatterbox-tts"], tmp_path, capsys)
    unclaimed("The conflict is caused by:\n    The user requested requests==2.0\n    The user requested requests==3.0",
              tmp_path, capsys)


def test_condas_classic_conflict_report_names_the_packages(tmp_path, capsys):
    """conda's UnsatisfiableError of the "direct" class (conda/exceptions.py: "Package {dep} conflicts for:" then the
    chains), pasted without its head: every package it lists, the stack's first in the remedy."""
    out = diagnoses("Package libcxxabi conflicts for:\npython=3.8 -> libcxx[version='>=4.0.1'] -> libcxxabi==4.0.1\n"
                    "\nPackage pytorch conflicts for:\npytorch\ntorchvision -> pytorch[version='1.10.0|1.13.1']",
                    "conda-unsatisfiable", ["libcxxabi", "pytorch"], tmp_path, capsys)
    assert 'under "Package pytorch conflicts for:"' in out, out
    diagnoses("The following specifications were found to be incompatible with each other:", "conda-unsatisfiable", [],
              tmp_path, capsys)


def test_libsolv_and_libmamba_problems_name_the_builds(tmp_path, capsys):
    """libsolv's problem rules (openSUSE/libsolv src/problems.c solver_problemruleinfo2str) and libmamba's explained
    tree (libmamba/src/solver/problems_graph.cpp), as conda's libmamba solver prints them: the package and version of
    the build they blame; the same rules over a system package manager's packages stay unclaimed."""
    diagnoses("  - package torchvision-0.20.1-py311_cu124 requires pytorch 2.5.1, but none of the providers can be "
              "installed", "conda-unsatisfiable", ["torchvision 0.20.1", "pytorch 2.5.1"], tmp_path, capsys)
    diagnoses("  - cannot install both pytorch-2.5.1-py3.11_cuda12.4_cudnn9.1.0_0 and pytorch-2.4.0-py3.11_cpu_0",
              "conda-unsatisfiable", ["2.5.1", "2.4.0"], tmp_path, capsys)
    diagnoses("└─ pytorch-cuda 12.4** is not installable because it requires", "conda-unsatisfiable",
              ["pytorch-cuda 12.4"], tmp_path, capsys)
    diagnoses("└─ pytorch =2.6 * does not exist (perhaps a typo or a missing channel).", "conda-package-not-found",
              ["pytorch 2.6"], tmp_path, capsys)
    unclaimed("  - package foo-1.0-1.x86_64 requires libbar.so.2()(64bit), but none of the providers can be installed",
              tmp_path, capsys)


def test_uv_wheel_hints_name_the_release_and_its_tags(tmp_path, capsys):
    """uv's hints under a failed resolution or sync (crates/uv-resolver/src/pubgrub/report.rs "Wheels are available for
    ...", crates/uv-resolver/src/lock/mod.rs "You're on ..., but ... only has wheels for ..."), pasted alone."""
    diagnoses("hint: You're on Linux (`manylinux_2_38_aarch64`), but `torchaudio` (v2.6.0+cpu) only has wheels for the "
              "following platforms: `linux_x86_64`, `win_amd64`", "wheel-not-supported",
              ["torchaudio 2.6.0+cpu", "manylinux_2_38_aarch64", "win_amd64"], tmp_path, capsys)
    diagnoses("hint: Wheels are available for `torch` (v2.1.0) with the following Python ABI tags: `cp38`, `cp311`",
              "wheel-not-supported", ["torch 2.1.0", "cp38, cp311"], tmp_path, capsys)


def test_pips_several_package_python_report_names_each(tmp_path, capsys):
    """pip's _report_requires_python_error for several causes: the head names the interpreter, each line a package."""
    diagnoses("ERROR: Packages require a different Python. 3.8.10 not in:\n'>=3.9' (required by vllm 0.6.3)",
              "python-version-unsupported", ["vllm", ">=3.9", "3.8.10"], tmp_path, capsys)


def test_poetrys_package_not_found_names_it(tmp_path, capsys):
    diagnoses("Package torch (2.1.0+cu121) not found.", "no-matching-distribution", ["torch 2.1.0+cu121", "poetry"],
              tmp_path, capsys)
