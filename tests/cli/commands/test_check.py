"""`glmcompat check` on real locks made by uv (recorded by scripts/record_lock_fixtures.py)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from glmcompat.model.errors import NoTarget
from glmcompat.readers.formats import read_lock

from tests.conftest import FIXTURES, LOCKS, ROOT, run_cli


@pytest.fixture(scope="module")
def recorded_index():
    """The recorded index (tests/fixtures/resolver/pages.json) over local HTTP: what the remedy search reads."""
    from tests.localindex import serve_recorded

    with serve_recorded(json.loads((FIXTURES / "resolver" / "pages.json").read_text())) as url:
        yield url

FORMATS = ["uv.lock", "pylock.toml", "requirements.txt"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_readers_agree_on_the_core(fmt):
    lock = read_lock(LOCKS / "glm5-sglang-0.5.9" / fmt)
    (pkgs,) = {json.dumps({k: v for k, v in s.packages.items() if k in CORE}, sort_keys=True) for s in lock.sets}
    assert json.loads(pkgs) == {"torch": "2.9.1", "torchvision": "0.24.1", "torchaudio": "2.9.1", "sgl-kernel": "0.3.21",
                                "flashinfer-python": "0.6.3", "flashinfer-cubin": "0.6.3", "sglang": "0.5.9",
                                "transformers": "5.2.0", "torchao": "0.9.0"}


CORE = {"torch", "torchvision", "torchaudio", "sgl-kernel", "flashinfer-python", "flashinfer-cubin", "sglang", "transformers", "torchao"}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("target,rc", [("sm90", 0), ("sm100", 0), ("sm120", 0), ("sm103", 1)])
def test_glm5_stack_per_target(fmt, target, rc):
    r = run_cli("check", str(LOCKS / "glm5-sglang-0.5.9" / fmt), "--target", target, "--model", "glm_moe_dsa", "--json")
    assert r.returncode == rc, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["version"] == 1 and doc["ok"] is (rc == 0) and doc["target"] == target
    if rc:
        assert [f["rule"] for f in doc["findings"] if f["severity"] == "error"] == ["gpu-code"]


def test_uv_default_torch_2_15_is_rejected(recorded_index):
    r = run_cli("check", str(LOCKS / "unpinned-torch" / "uv.lock"), "--target", "sm120", "--index-url", recorded_index)
    assert r.returncode == 1
    assert "sgl-kernel 0.3.21 was built against torch 2.9.1, but torch 2.15.0" in r.stdout
    assert "hint: the nearest safe set for sm120: torch==2.9.1 torchvision==0.24.1 triton==3.5.1 [checked: sm120" in r.stdout
    assert "triton 3.9.0 -> 3.5.1: torch 2.9.1 pins triton==3.5.1 exactly" in r.stdout
    assert "apply: pin them in pyproject.toml, then `glmcompat lock --target sm120` (it relocks uv.lock)" in r.stdout


def test_torch_2_10_bump_names_sgl_kernel_and_evidence():
    r = run_cli("check", str(LOCKS / "glm5-torch-2.10.0" / "uv.lock"), "--target", "sm120", "--json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    abi = [f for f in doc["findings"] if f["rule"] == "abi" and f["severity"] == "error"]
    assert abi and abi[0]["packages"] == ["sgl-kernel==0.3.21", "torch==2.10.0"]
    assert abi[0]["evidence"][0]["kind"] == "abi-probe" and abi[0]["evidence"][0]["source"].startswith("glmcompat abi sgl-kernel==0.3.21 --torch 2.10.0")
    assert set(abi[0]) >= {"rule", "severity", "packages", "message", "evidence", "remedy"}


def test_json_matches_its_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from tests.conftest import ROOT

    schema = json.loads((ROOT / "glmcompat" / "cli" / "schemas" / "check.schema.json").read_text())
    r = run_cli("check", str(LOCKS / "glm5-torch-2.10.0" / "uv.lock"), "--target", "sm120", "--json")
    jsonschema.validate(json.loads(r.stdout), schema)


def test_pyproject_settings_and_lock_beside(tmp_path):
    d = tmp_path / "proj"
    shutil.copytree(LOCKS / "glm5-sglang-0.5.9", d)
    text = (d / "pyproject.toml").read_text()
    r = run_cli("check", str(d / "pyproject.toml"))
    assert (r.returncode, r.stderr) == (2, f"error: {NoTarget(str(d / 'pyproject.toml')).one_line()}\n")
    (d / "pyproject.toml").write_text(text + '\n[tool.glmcompat]\ntargets = ["sm120", "sm103"]\nmodel = "glm_moe_dsa"\n')
    r = run_cli("check", str(d / "pyproject.toml"), "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1
    assert [(c["target"], c["ok"]) for c in doc["checked"]] == [("sm120", True), ("sm103", False)]
    # the lock itself picks up the settings of the pyproject.toml beside it
    r = run_cli("check", str(d / "uv.lock"), "--json")
    assert r.returncode == 1
    assert [(c["target"], c["ok"]) for c in json.loads(r.stdout)["checked"]] == [("sm120", True), ("sm103", False)]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def test_bump_mode(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shutil.copy(LOCKS / "glm5-sglang-0.5.9" / "requirements.txt", repo / "requirements.txt")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "safe")
    shutil.copy(LOCKS / "glm5-torch-2.10.0" / "requirements.txt", repo / "requirements.txt")
    r = run_cli("check", "--against", "HEAD", "requirements.txt", "--target", "sm120", cwd=repo)
    assert r.returncode == 1
    assert "torch 2.9.1 -> 2.10.0 breaks sgl-kernel 0.3.21" in r.stdout
    r = run_cli("check", "--against", "HEAD", "requirements.txt", "--target", "sm120", "--json", cwd=repo)
    errors = [(f["rule"], f["packages"]) for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]
    assert r.returncode == 1 and errors == [("abi", ["sgl-kernel==0.3.21", "torch==2.10.0"])]  # torchao's is no error
    r = run_cli("check", "--against", "nope", "requirements.txt", "--target", "sm120", cwd=repo)
    assert r.returncode == 2 and "unknown git revision 'nope'" in r.stderr


PYLOCK_HEAD = b'lock-version = "1.0"\ncreated-by = "hand"\nrequires-python = ">=3.11"\n\n'

BAD = [
    ("empty", "uv.lock", b"", "empty file"),
    ("binary", "uv.lock", b"\x00\x01\x02garbage\xff", "not UTF-8 text"),
    ("truncated", "uv.lock", b'version = 1\n[[package]]\nname = "torch', "invalid TOML"),
    ("future", "uv.lock", b'version = 9\nrevision = 1\n', "uv.lock version 9 is not supported"),
    ("pylock-version", "pylock.toml", b'lock-version = "2.0"\n', "lock-version '2.0'"),
    # packaging.pylock's validation (PEP 751), one line naming the file and, where it can, the line
    ("pylock-no-created-by", "pylock.toml", b'lock-version = "1.0"\n[[packages]]\nname = "torch"\nversion = "2.9.1"\n'
     b'wheels = [{ url = "https://index.invalid/torch-2.9.1-py3-none-any.whl", hashes = { sha256 = "00" } }]\n',
     "not a valid pylock.toml (PEP 751): Missing required value in 'created-by'"),
    ("pylock-no-distribution", "pylock.toml", b'lock-version = "1.0"\ncreated-by = "x"\n\n[[packages]]\nname = "torch"\n'
     b'version = "2.9.1"\n', "pylock.toml:4: not a valid pylock.toml (PEP 751): package 'torch': Exactly one of vcs"),
    ("pylock-name", "pylock.toml", b'lock-version = "1.0"\ncreated-by = "x"\n[[packages]]\nname = "Sgl_Kernel"\n'
     b'version = "0.3.21"\nwheels = [{ url = "https://index.invalid/sgl_kernel-0.3.21-py3-none-any.whl", '
     b'hashes = { sha256 = "00" } }]\n', "pylock.toml:4: not a valid pylock.toml (PEP 751): package 'Sgl_Kernel': "
                                         "Name 'Sgl_Kernel' is not normalized"),
    ("pylock-wheel", "pylock.toml", PYLOCK_HEAD + b'[[packages]]\nname = "torch"\nversion = "2.9.1"\n'
     b'wheels = [{ url = "https://index.invalid/torch-2.9.1-py3-none-any.whl", hashes = { sha256 = "00" } }]\n\n'
     b'[[packages]]\nname = "sgl-kernel"\nversion = "0.3.21"\nmarker = "sys_platform == \'linux\'"\n'
     b'wheels = [{ url = "https://index.invalid/sgl_kernel-0.3.20-py3-none-any.whl", hashes = { sha256 = "00" } }]\n',
     "pylock.toml:14: not a valid pylock.toml (PEP 751): package 'sgl-kernel': Version in "
     "'sgl_kernel-0.3.20-py3-none-any.whl' is not consistent with package version '0.3.21' in 'packages[1].wheels[0]'"),
    ("broken-pin", "requirements.txt", b"torch==\n", "requirements.txt:1"),
    ("cycle", "requirements.txt", b"-r requirements.txt\n", "include cycle"),
    ("badver", "requirements.txt", b"torch==2.9.1\nsgl-kernel==zz!\n", "requirements.txt:2"),
]


@pytest.mark.parametrize("name,fname,content,needle", BAD, ids=[b[0] for b in BAD])
def test_bad_input(tmp_path, name, fname, content, needle):
    p = tmp_path / fname
    p.write_bytes(content)
    before = sorted(tmp_path.iterdir())
    r = run_cli("check", str(p), "--target", "sm120")
    assert r.returncode == 2, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert needle in err and str(p) in err and "\n" not in err and "Traceback" not in err
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.parametrize("args,needle", [
    (["{d}"], "is a directory"),
    (["{d}/missing.lock.txt"], "no such file"),
    (["{lock}", "--target", "sm999"], "unknown target 'sm999'"),
    (["{lock}", "--target", "sm90", "--model", "nomodel"], "unknown model type 'nomodel'"),
    (["{lock}"], "no target"),
])
def test_bad_usage(tmp_path, args, needle):
    lock = LOCKS / "glm5-sglang-0.5.9" / "requirements.txt"
    argv = [a.format(d=tmp_path, lock=lock) for a in args]
    r = run_cli("check", *argv, cwd=tmp_path)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


# --- property: arbitrary bytes never fail the lock readers with anything but LockFormatError ------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from glmcompat.model.errors import LockFormatError  # noqa: E402

_lockish = st.one_of(
    st.binary(max_size=200),
    st.lists(st.sampled_from(['version = 1', 'version = 9', '[[package]]', 'name = "torch"', 'version = "2.9.1"',
                              'resolution-markers = ["python_version >= \'3.12\'"]', 'lock-version = "1.0"', '[[packages]]',
                              'marker = "sys_platform ==="', 'torch==2.9.1 \\', '    --hash=sha256:00', 'x==', '-e .', '# c',
                              'sgl-kernel==0.3.21 ; python_version < "3.13"', 'requires-python = 3']), max_size=12)
    .map(lambda ls: "\n".join(ls).encode()),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_lockish, name=st.sampled_from(["uv.lock", "pylock.toml", "requirements.txt"]))
def test_arbitrary_input_only_raises_lock_format_error(tmp_path, data, name):
    p = tmp_path / name
    p.write_bytes(data)
    try:
        lock = read_lock(p, use_cache=False)
    except LockFormatError as e:
        assert "\n" not in str(e) and str(p) in str(e)
    else:
        assert all(isinstance(v, str) for s in lock.sets for v in s.packages.values())


def test_unpinned_lines_are_judged_not_refused(tmp_path):
    """An unpinned coupled package is a warning; what is pinned is still judged (exit 1 here)."""
    p = tmp_path / "requirements.txt"
    p.write_text("torchvision>=0.20\ntorch==2.10.0\nsgl-kernel==0.3.21\nnumpy\n")
    r = run_cli("check", str(p), "--target", "sm90", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1, r.stderr
    rules = sorted((f["rule"], f["severity"]) for f in doc["findings"])
    # torch 2.10.0's default aarch64 wheel is CPU-only: the file does not serve GH200 (one warning)
    assert rules == [("abi", "error"), ("platform", "warning"), ("unpinned", "warning")]


def test_a_mixed_output_set_is_unsafe(tmp_path):
    """`glmcompat lock` stamps its four files as one set; a set mixed from two runs (here: requirements.txt
    from another run) is an error in `check`, although each file alone would pass."""
    from glmcompat.matrix.load import load_facts
    from glmcompat.ops.lockset import OUTPUTS, STAMP
    from glmcompat.ops.publish import stamp_of as _stamp

    src = LOCKS / "glm5-sglang-0.5.9"
    files = {n: (src / n).read_bytes() if (src / n).exists() else b"# placeholder\n" for n in OUTPUTS}
    for n, data in files.items():
        (tmp_path / n).write_bytes(data)
    (tmp_path / STAMP).write_bytes(_stamp(load_facts(), files))
    ok = run_cli("check", str(tmp_path / "requirements.txt"), "--target", "sm90", "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (tmp_path / "requirements.txt").write_bytes(files["requirements.txt"] + b"# edited by another run\n")
    r = run_cli("check", str(tmp_path / "requirements.txt"), "--target", "sm90", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and [f["rule"] for f in doc["findings"] if f["severity"] == "error"] == ["output-set"]


def test_the_platform_a_lock_was_made_for_comes_from_its_pyproject():
    """`glmcompat lock --platform aarch64` writes `[tool.glmcompat] platform = "aarch64"`: check judges that
    machine, strictly, without a warning that the lock serves no x86_64 machine."""
    d = ROOT / "locks" / "glm5-sglang-0.5.9" / "sm100-aarch64"
    r = run_cli("check", str(d / "requirements.txt"), "--target", "sm100", "--model", "glm_moe_dsa", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and not [f for f in doc["findings"] if f["rule"] == "platform"], r.stdout
    bad = run_cli("check", str(d / "requirements.txt"), "--target", "sm120")
    assert bad.returncode == 2 and "aarch64" in bad.stderr and "\n" not in bad.stderr.strip()


# --- pylock.toml: read with packaging.pylock ----------------------------------------------------------------


def test_pylock_that_uv_writes_reads_as_its_uv_lock(tmp_path):
    """A real-world uv.lock with git, direct-wheel and editable sources, exported to pylock.toml by the real
    uv (offline: --frozen): the pylock's entries are the uv.lock's, source kinds included (editable projects
    carry no version in either and are skipped)."""
    from uv import find_uv_bin

    d = tmp_path / "proj"
    shutil.copytree(ROOT / "tests" / "fixtures" / "realworld" / "07", d, ignore=shutil.ignore_patterns("SOURCE"))
    subprocess.run([find_uv_bin(), "export", "--format", "pylock.toml", "--frozen", "--all-extras", "--all-groups",
                    "--no-python-downloads", "-o", "pylock.toml", "-q"], cwd=d, check=True, capture_output=True)
    uv = {(e.name, e.version, e.source) for e in read_lock(d / "uv.lock", use_cache=False).entries}
    pylock = read_lock(d / "pylock.toml", use_cache=False)
    got = {(e.name, e.version, e.source) for e in pylock.entries}
    assert len(got) > 300 and got <= uv, sorted(got - uv)[:5]
    assert {s for _, _, s in got} == {"registry", "git", "wheel"}
    assert ("torchtitan", "0.1.0", "git") in got and ("vllm", "0.26.0+cu129", "wheel") in got
    assert not pylock.meta.get("notes")


def test_pylock_direct_sources_and_a_newer_minor_version(tmp_path):
    p = tmp_path / "pylock.toml"
    p.write_bytes(PYLOCK_HEAD.replace(b'"1.0"', b'"1.1"') + b"""
[[packages]]
name = "sgl-kernel"
version = "0.3.21"
vcs = { type = "git", url = "https://git.invalid/sgl.git", commit-id = "0123456789abcdef0123456789abcdef01234567" }

[[packages]]
name = "torch"
version = "2.9.1+cu128"
marker = "sys_platform == 'linux'"
archive = { url = "https://files.invalid/torch-2.9.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl", hashes = { sha256 = "00" } }

[[packages]]
name = "torchvision"
version = "0.24.1"
directory = { path = "../vision" }

[[packages]]
name = "mine"
directory = { path = ".", editable = true }
""")
    r = run_cli("check", str(p), "--target", "sm120", "--json")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr and r.stderr == "", r.stderr
    lock = read_lock(p, use_cache=False)
    assert [(e.name, e.version, e.marker, e.source) for e in lock.entries] == [
        ("sgl-kernel", "0.3.21", None, "git"), ("torch", "2.9.1+cu128", "sys_platform == 'linux'", "wheel"),
        ("torchvision", "0.24.1", None, "directory")]
    assert lock.meta["notes"] == ["pylock lock-version 1.1 is newer than the 1.0 glmcompat knows: read as 1.0"]
    assert [c["notes"] for c in json.loads(r.stdout)["checked"]] == [lock.meta["notes"]]


@pytest.mark.parametrize("named", ["pyproject.toml", "requirements.txt"])
def test_unknown_target_in_pyproject_names_the_file(tmp_path, named):
    """A target that [tool.glmcompat] names and the matrix does not know: exit 2, one line naming the
    pyproject.toml that said it (whether the pyproject or the lock beside it was passed)."""
    shutil.copy(ROOT / "locks" / "glm5-sglang-0.5.9" / "sm120" / "requirements.txt", tmp_path / "requirements.txt")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n\n[tool.glmcompat]\ntargets = ["sm999"]\n')
    r = run_cli("check", str(tmp_path / named))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {tmp_path / 'pyproject.toml'}: [tool.glmcompat] targets:")
    assert "unknown target 'sm999'" in lines[0] and "sm120" in lines[0]


@pytest.mark.parametrize("lock,target,extra,want", [
    ("sm120/requirements.txt", "sm120", [], ["x86_64"]),  # sm120 ships on x86_64 only
    ("sm100/requirements.txt", "sm100", [], ["x86_64", "aarch64"]),  # B200 hosts and GB200
    ("sm100/requirements.txt", "sm100", ["--platform", "x86_64"], ["x86_64"]),
    ("sm100-aarch64/requirements.txt", "sm100", [], ["aarch64"]),  # the lock's [tool.glmcompat] platform
])
def test_json_names_the_machines_judged(lock, target, extra, want):
    r = run_cli("check", str(ROOT / "locks" / "glm5-sglang-0.5.9" / lock), "--target", target, "--json", *extra)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert [c["platforms"] for c in doc["checked"]] == [want]


def test_bump_mode_reads_includes_at_the_revision(tmp_path):
    """`check requirements.txt --against REV` reads every file requirements.txt includes as it was at REV: a bump
    made only in the include is found, and a pure rename of the include is no bump (not `no such file`)."""
    repo = tmp_path / "r"
    (repo / "deps").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "requirements.txt").write_text("-r deps/gpu.txt\nsgl-kernel==0.3.21\n")
    (repo / "deps" / "gpu.txt").write_text("torch==2.9.1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    (repo / "deps" / "gpu.txt").write_text("torch==2.10.0\n")
    r = run_cli("check", str(repo / "requirements.txt"), "--target", "sm90", "--against", "HEAD")
    assert r.returncode == 1 and "torch 2.9.1 -> 2.10.0 breaks sgl-kernel 0.3.21" in r.stdout, r.stdout + r.stderr
    r = run_cli("check", str(repo / "deps" / "gpu.txt"), "--target", "sm90", "--against", "HEAD", "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    assert [c["path"].rsplit("/", 1)[-1] for c in json.loads(r.stdout)["checked"]] == ["requirements.txt"]  # through its includer
    (repo / "deps" / "gpu.txt").write_text("torch==2.9.1\n")
    _git(repo, "mv", "deps/gpu.txt", "deps/cuda.txt")
    (repo / "requirements.txt").write_text("-r deps/cuda.txt\nsgl-kernel==0.3.21\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "rename")
    r = run_cli("check", str(repo / "requirements.txt"), "--target", "sm90", "--against", "HEAD~1")
    assert r.returncode == 0 and "no unsafe bump" in r.stdout, r.stdout + r.stderr
    r = run_cli("check", str(repo / "requirements.txt"), "--target", "sm90", "--against", "HEAD~1", "--json")
    assert r.returncode == 0 and [f for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"] == []
    (repo / "notes.txt").write_text("Not a requirements file: see README.\n")
    r = run_cli("check", str(repo / "notes.txt"), "--target", "sm90", "--against", "HEAD")
    assert r.returncode == 0 and "skipped" in r.stderr, r.stdout + r.stderr


def test_bump_diff_keys_findings_on_rule_and_packages_not_prose():
    """A finding about the same packages under the same rule is the same problem whatever its text says (a note
    that changes with the rest of the file is no bump); a new package pair under that rule is a new problem."""
    from glmcompat.cli.commands.check import _bump_findings
    from glmcompat.matrix.load import load_facts
    from glmcompat.model.environments import Environment
    from glmcompat.model.findings import Finding
    from glmcompat.readers.formats.common import Lock

    pins = {"sgl-kernel": "0.3.21", "torch": "2.10.0"}
    old = Lock("old/uv.lock", "uv.lock", (), sets=(Environment("env", packages=dict(pins)),))
    new = Lock("uv.lock", "uv.lock", (), sets=(Environment("env", packages={**pins, "torchvision": "0.25.0"}),))
    was = Finding(rule="abi", severity="error", packages=(("sgl-kernel", "0.3.21"), ("torch", "2.10.0")),
                  message="torch 2.10.0 breaks sgl-kernel 0.3.21")
    reworded = Finding(rule="abi", severity="error", packages=was.packages,
                       message=was.message + " (the file does not pin torch: torchvision needs it)")
    other = Finding(rule="abi", severity="error", packages=(("torchvision", "0.25.0"), ("torch", "2.10.0")),
                    message="torch 2.10.0 breaks torchvision 0.25.0")
    found = _bump_findings(old, new, [reworded, other], [was], load_facts())
    assert [f.packages for f in found] == [other.packages]
    assert found[0].message.startswith("torchvision (none) -> 0.25.0")
