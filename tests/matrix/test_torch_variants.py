"""Every CUDA variant PyTorch published for a torch release is known to the matrix (tests/matrix/data/
torch_variants.toml: the release channel's CUDA versions of pytorch/test-infra's build matrix, release by release,
and the TORCH_CUDA_ARCH_LIST of each variant where the release branch's build script was read); the rows agree
with those arch lists, and a probed default wheel agrees with its own CUDA's list."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

from glmcompat.matrix.load import load_facts
from glmcompat.matrix.view import Facts

TABLE = tomllib.loads((Path(__file__).parent / "data" / "torch_variants.toml").read_text())["release"]
CASES = [(v, r) for r in TABLE for v in r["versions"]]


@pytest.fixture(scope="module")
def facts() -> Facts:
    return load_facts()


def _script_sass(arch: str) -> set[str]:
    """``5.0;6.0;8.6;9.0+PTX`` -> {sm_50, sm_60, sm_86, sm_90} (the SASS a TORCH_CUDA_ARCH_LIST builds)."""
    return {"sm_" + a.removesuffix("+PTX").replace(".", "") for a in arch.split(";")}


def _extra(code: str) -> bool:
    """A per-kernel extra a probe of the default wheel finds beyond TORCH_CUDA_ARCH_LIST (the [[torch]] rows'
    header: sm_89 and the arch-specific sm_XYa / sm_XYf targets, 1-4 kernels each)."""
    return code == "sm_89" or code[-1] in "af"


def test_the_table_covers_every_release_from_2_0_to_the_newest_row(facts):
    """No release between 2.0.0 and the newest torch the matrix has a row for is left out of the table."""
    tracked = {Version(v) for t in facts.rows("torch") for v in t.versions}
    listed = {Version(v) for v, _ in CASES}
    assert tracked - listed == set() and len(listed) == len(CASES)
    assert min(listed) == Version("2.0.0") and max(listed) == max(tracked)


@pytest.mark.parametrize("release, rec", CASES, ids=[v for v, _ in CASES])
def test_every_published_variant_is_known(facts, release, rec):
    """Each (release, variant) the build matrix names has a row whose CUDA is the label's; the default wheel's
    row is the default variant; where the release branch's build script was read, each row's SASS is that list
    (a probed default wheel may add its per-kernel extras) and its PTX no more than the list's +PTX."""
    default = facts.torch_build(release)
    assert default is not None and default.variant is None
    assert "cu" + (default.cuda or "").replace(".", "") == rec["default"], release
    assert rec["default"] in rec["variants"]
    for label in rec["variants"] + rec.get("also", []):
        row = facts.torch_build(f"{release}+{label}")
        assert row is not None, f"torch {release}+{label} has no [[torch]] row"
        assert "cu" + (row.cuda or "").replace(".", "") == label, (release, label, row.cuda)
        arch = rec.get("arch", {}).get(label)
        if arch is None:
            continue
        want, have = _script_sass(arch), set(row.sass)
        assert want <= have, (release, label, sorted(want - have))
        assert all(_extra(c) for c in have - want) and (row.variant is None or have == want), (release, label)
        ptx = {"compute_" + a.removesuffix("+PTX").replace(".", "") for a in arch.split(";") if a.endswith("+PTX")}
        assert set(row.ptx) <= ptx, (release, label, row.ptx)


def test_probed_defaults_are_checked_against_the_build_scripts():
    """The arch lists cover the default wheel of every release whose build script was read (2.0 .. 2.5), so those
    probed rows (evidence arch-probe) are cross-checked, not only the variant rows written from the same script."""
    read = [r for r in TABLE if "arch" in r]
    assert {v for r in read for v in r["versions"]} >= {"2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.4.0", "2.5.0"}
    assert all(r["default"] in r["arch"] for r in read)



VARIANT_TABLES = json.loads((Path(__file__).parents[1] / "fixtures" / "torch" / "variant_tables.json").read_text())
PER_HOST = sorted(r for r, t in VARIANT_TABLES.items()
                  if isinstance(next(iter((t["PYTORCH_RELEASES_CODE_CC"] or {None: None}).values())), dict))


@pytest.mark.parametrize("release", PER_HOST)
def test_every_aarch64_variant_a_release_states_is_known(facts, release):
    """From 2.13 a release's own torch/cuda/__init__.py (read from its wheel by scripts/record_torch_variant_tables.py)
    gives each build's aarch64 TORCH_CUDA_ARCH_LIST: each has an aarch64 row, a variant row with exactly that list,
    the default aarch64 wheel's probed row at least that list (plus its per-kernel extras)."""
    arm = facts.on("aarch64")
    for cuda, hosts in VARIANT_TABLES[release]["PYTORCH_RELEASES_CODE_CC"].items():
        row = arm.torch_build(f"{release}+cu{cuda.replace('.', '')}")
        assert row is not None and row.platform == "aarch64" and row.cuda == cuda, (release, cuda)
        want, have = {f"sm_{c}" for c in hosts["aarch64"]}, set(row.sass)
        assert want <= have and all(_extra(c) for c in have - want), (release, cuda, sorted(have ^ want))
        assert row.variant is None or have == want, (release, cuda)


CONDA = [(v, label) for v, r in CASES if Version(v) < Version("2.6") for label in r["variants"]]


@pytest.mark.parametrize(("release", "label"), CONDA, ids=[f"{v}+{x}" for v, x in CONDA])
def test_every_conda_pairing_of_a_published_variant_is_judged(facts, tmp_path, release, label):
    """conda's pytorch channel built each release to 2.5 for the CUDA versions of its wheels (pytorch-cuda X.Y):
    ``pytorch=R`` with ``pytorch-cuda=X.Y`` and the release's torchvision / torchaudio reads as torch R+cuXY with its
    family at the same label, and every one of them has a row (the GPU code, the family's torch pairing)."""
    from glmcompat.readers.formats import read_lock

    cuda = f"{label[2:-1]}.{label[-1]}"
    vision, audio = facts.family_for_torch("torchvision", release), facts.family_for_torch("torchaudio", release)
    assert vision and audio, release
    p = tmp_path / "environment.yml"
    p.write_text(f"channels: [pytorch, nvidia]\ndependencies:\n  - pytorch={release}\n  - torchvision={vision}\n"
                 f"  - torchaudio={audio}\n  - pytorch-cuda={cuda}\n")
    (env,) = [e for e in read_lock(p, use_cache=False).sets if e.platform == "x86_64"]
    got = {n: env.packages[n] for n in ("torch", "torchvision", "torchaudio")}
    assert got == {"torch": f"{release}+{label}", "torchvision": f"{vision}+{label}", "torchaudio": f"{audio}+{label}"}
    assert facts.torch_build(got["torch"]) is not None and facts.torch_cuda(got["torch"]) == cuda
    for name in ("torchvision", "torchaudio"):
        assert facts.family(name, got[name]) is not None, (name, got[name])
