"""The resolver and `glmcompat upgrade`: the package set from sglang's METADATA, skip reasons derived from
structured causes, targets nothing runs on, memoisation. Offline against the recorded index
(tests/fixtures/resolver/: index.json and pages.json, recorded by record.py there, hosts replaced by
index.invalid); one `network` test against the real index."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from packaging.version import Version

from glmcompat.decide.explain import Skip, resolve, skip_reasons
from glmcompat.decide.resolver import Provider, Request, parse_cutoff
from glmcompat.decide.rules import evaluate
from glmcompat.edges.cache import Cache
from glmcompat.edges.index import ACCEPT_JSON, IndexClient
from glmcompat.edges.sources import IndexSource, RecordedSource
from glmcompat.matrix.load import load_facts
from glmcompat.model.environments import Environment
from glmcompat.model.errors import InputError, UnsafeError

from tests.conftest import FIXTURES, ROOT, run_cli

HERE = FIXTURES / "resolver"
STACK = "glm5-sglang-0.5.9"
CUTOFF = "2026-11-29"
NEWEST = {"sglang": "0.5.23", "torch": "2.14.1", "sglang-kernel": "0.4.10", "torchvision": "0.29.1", "torchaudio": "2.11.0",
          "flashinfer-python": "0.7.2", "transformers": "5.19.0"}


@pytest.fixture(scope="module")
def facts():
    return load_facts()


@pytest.fixture(scope="module")
def recorded():
    return json.loads((HERE / "pages.json").read_text())


def mock_index(recorded: dict, cache_dir: Path) -> IndexClient:
    """An IndexClient whose transport serves the recorded pages and METADATA at index.invalid."""
    pages, metadata = recorded["pages"], recorded["metadata"]

    def handler(request: httpx.Request) -> httpx.Response:
        parts = request.url.path.strip("/").split("/")
        if request.url.host == "index.invalid" and len(parts) == 2 and parts[0] == "simple" and parts[1] in pages:
            return httpx.Response(200, json=pages[parts[1]], headers={"content-type": ACCEPT_JSON})
        if str(request.url) in metadata:
            return httpx.Response(200, content=metadata[str(request.url)].encode())
        return httpx.Response(404)

    return IndexClient("https://index.invalid/simple/", client=httpx.Client(transport=httpx.MockTransport(handler)),
                       cache=Cache(cache_dir), retries=0)


@pytest.fixture(scope="module")
def index(recorded, tmp_path_factory):
    with mock_index(recorded, tmp_path_factory.mktemp("index-cache")) as client:
        yield client


@pytest.fixture(scope="module")
def src(index):
    return IndexSource(index, exclude_newer=CUTOFF)


def upgrade(facts, src, target="sm120", with_=(), stack=STACK):
    req = Request(stack, facts.target(target), "glm_moe_dsa", tuple(with_), True)
    out = resolve(facts, src, req)
    return req, out, skip_reasons(facts, src, req, out)


# ------------------------------------------------------------------------------------------------
# The newest safe set
# ------------------------------------------------------------------------------------------------


def test_upgrade_sm120_reaches_sglang_0_5_23_without_cubin(facts, src):
    _, out, skipped = upgrade(facts, src)
    assert out.pins == NEWEST  # no flashinfer-cubin, no sgl-kernel: sglang 0.5.23's METADATA asks for neither
    assert not [f for f in evaluate(out.pins, target="sm120", model="glm_moe_dsa", matrix=facts) if f.severity == "error"]
    assert "sglang" not in skipped  # nothing newer than 0.5.23 before the cutoff


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm103"])
def test_upgrade_other_targets(facts, src, target):
    assert upgrade(facts, src, target)[1].pins == NEWEST


def test_recorded_source_gives_the_same_set(facts):
    out = resolve(facts, RecordedSource(HERE / "index.json"), Request(STACK, facts.target("sm120"), "glm_moe_dsa", (), True))
    assert out.pins == NEWEST


def test_plain_lock_keeps_the_stack_and_its_cubin(facts, src):
    out = resolve(facts, src, Request(STACK, facts.target("sm120"), "glm_moe_dsa"))
    assert out.pins["sglang"] == "0.5.9" and out.pins["flashinfer-cubin"] == out.pins["flashinfer-python"] == "0.6.3"


def test_exclude_newer_hides_later_uploads(facts, recorded, tmp_path):
    with mock_index(recorded, tmp_path) as client:
        early = IndexSource(client, exclude_newer=recorded["early_cutoff"])
        assert "0.5.23" not in early.versions("sglang") and "0.5.22" in early.versions("sglang")
        out = resolve(facts, early, Request(STACK, facts.target("sm120"), "glm_moe_dsa", (), True))
    assert out.pins["sglang"] == "0.5.22" and out.pins["sglang-kernel"] == "0.4.9" and out.pins["flashinfer-python"] == "0.7.1"


# ------------------------------------------------------------------------------------------------
# Skip reasons: the first clause that rules a release out, and one remedy
# ------------------------------------------------------------------------------------------------


def test_skip_reasons_for_the_newest_set(facts, src):
    _, _, skipped = upgrade(facts, src)
    torch = skipped["torch"]["2.15.0"]
    assert isinstance(torch, Skip) and torch.kind == "pinned"
    assert torch.clauses[0] == "sglang 0.5.23 requires torch==2.14.1"
    assert torch.because().startswith("Because sglang 0.5.23 requires torch==2.14.1, and no other sglang release that fits")
    assert torch.conclusion == "torch 2.15.0 cannot join the set"
    assert "newer sglang release" in torch.remedy
    tv = skipped["torchvision"]["0.29.2"]
    assert (tv.kind, tv.subject) == ("preference", "torchvision") and "resolves too" in tv.because()
    assert tv.clauses == ("sglang 0.5.23 leaves torchvision open, and stack sglang-0.5.23 (known to work on sm120) pins "
                          "torchvision 0.29.1",)
    assert tv.remedy == "`--with torchvision==0.29.2` takes it"
    assert skipped["torchaudio"]["2.11.1"].clauses[0] == "sglang 0.5.23 requires torchaudio==2.11.0"
    assert skipped["flashinfer-python"]["0.7.4"].clauses[0] == "sglang 0.5.23 requires flashinfer-python==0.7.2"
    tf = skipped["transformers"]["5.24.0"]  # a set exists with sglang 0.5.9, whose transformers pin the stack overrides
    assert tf.kind == "preference" and tf.subject == "sglang" and "overridden" in tf.because()


def test_remedy_is_real(facts, src):
    """The remedy `--with torchvision==0.29.2` resolves, to the same set but torchvision."""
    out = resolve(facts, src, Request(STACK, facts.target("sm120"), "glm_moe_dsa", ("torchvision==0.29.2",), True))
    assert out.pins == {**NEWEST, "torchvision": "0.29.2"}


def test_newer_sglang_gets_its_true_reason(facts, src):
    """Asking for flashinfer-cubin holds sglang at 0.5.15.post1 (no cubin after 0.6.13 on the index): each newer
    sglang is skipped for that, not for a torchaudio or torch story."""
    _, out, skipped = upgrade(facts, src, with_=("flashinfer-cubin",))
    assert out.pins["sglang"] == "0.5.15.post1" and out.pins["flashinfer-cubin"] == out.pins["flashinfer-python"] == "0.6.12"
    s = skipped["sglang"]["0.5.23"]
    assert s.kind == "conflict" and s.subject == "flashinfer-cubin"
    assert s.clauses == ("sglang 0.5.23 requires flashinfer-python==0.7.2",
                         "flashinfer-python 0.7.2 and flashinfer-cubin must be the same version when both are installed",
                         "you require flashinfer-cubin", "no flashinfer-cubin 0.7.2 is on the index")
    assert s.because().endswith("we can conclude that sglang 0.5.23 cannot be used.")
    assert s.remedy == "relax or drop `--with flashinfer-cubin`"
    assert skipped["sglang"]["..."] == "5 more newer release(s) not examined"
    # torchvision 0.29.0 needs torch 2.14.0, which sglang's torch pin rules out (not "no torchaudio for torch 2.14.0").
    tv = skipped["torchvision"]["0.29.0"]
    assert tv.clauses[:2] == ("torchvision 0.29.0 requires torch==2.14.0", "sglang 0.5.15.post1 requires torch==2.11.0")
    assert all("torchaudio" not in c for c in tv.clauses)
    # ... and torch 2.14.1 only with the sglang releases that need flashinfer 0.7.x: the cubin again.
    t = skipped["torch"]["2.14.1"]
    assert t.clauses[0].startswith("only sglang 0.5.22 .. 0.5.23 would take torch 2.14.1") and t.subject == "flashinfer-cubin"


def test_cubin_equals_python_only_when_both_are_in_the_set(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, Request("sglang-0.5.23", facts.target("sm120"), "glm_moe_dsa", ("flashinfer-cubin==0.6.13", "sglang==0.5.23")))
    (cause,) = e.value.causes
    assert "flashinfer-python 0.7.2 and flashinfer-cubin must be the same version when both are installed" in cause.clauses
    assert "you require flashinfer-cubin==0.6.13" in cause.clauses


def test_renamed_kernel_is_never_installed_twice(facts, src):
    """sgl-kernel and sglang-kernel ship one package: asking for sgl-kernel keeps sglang at 0.5.9."""
    _, out, skipped = upgrade(facts, src, with_=("sgl-kernel==0.3.21",))
    assert out.pins["sglang"] == "0.5.9" and "sglang-kernel" not in out.pins
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, Request(STACK, facts.target("sm120"), "glm_moe_dsa", ("sgl-kernel==0.3.21", "sglang==0.5.23")))
    (cause,) = e.value.causes
    assert "sglang-kernel 0.4.10 and sgl-kernel are one project under two names (only one of them can be installed)" in cause.clauses


def test_resolution_failure_carries_its_causes(facts, src):
    """The UnsafeError of a failed resolution holds the derivation structured (kind, subject, clauses, conclusion,
    remedy): its message is exactly that cause rendered, and its JSON form has every part."""
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, Request("sglang-0.5.23", facts.target("sm120"), "glm_moe_dsa", ("flashinfer-cubin==0.6.13", "sglang==0.5.23")))
    (cause,) = e.value.causes
    assert isinstance(cause, Skip) and e.value.exit_code == 1
    assert str(e.value) == f"{cause.because()}\nhint: {cause.remedy}"
    assert cause.conclusion == "no safe set of the core exists for sm120 (stack sglang-0.5.23, model glm_moe_dsa)"
    assert "you require flashinfer-cubin==0.6.13" in cause.clauses and cause.kind == "conflict"
    assert cause.as_json()["because"] == list(cause.clauses) and cause.as_json()["reason"] == cause.because()


# ------------------------------------------------------------------------------------------------
# A target nothing runs on
# ------------------------------------------------------------------------------------------------


def _no_sm121a(facts):
    """The matrix as if no aarch64 kernel carried code for 12.1 yet (sm_121a taken out of every kernel row)."""
    from dataclasses import replace

    from glmcompat.matrix.view import Facts

    def cut(row):
        if row.platform == "aarch64" and row.sass:
            return replace(row, sass=tuple(c for c in row.sass if c != "sm_121a"))
        return row

    data = {t: tuple(cut(r) for r in rows) if t in ("kernel", "arch_probe") else rows for t, rows in facts.data.items()}
    return Facts(data, facts.key + "-no-sm121a")


def test_sm121_explains_the_kernel_gpu_code(facts, arm_src):
    """Where no kernel release carries code for 12.1, the derivation names the kernels' GPU code (sm_120a is 12.0
    only), every sglang release fails the same way, the hint says none runs there yet, and the matrix prunes
    before resolving."""
    calls = []
    orig = Provider.get_dependencies

    def counting(self, candidate):
        calls.append(candidate)
        return orig(self, candidate)

    Provider.get_dependencies = counting
    try:
        with pytest.raises(UnsafeError) as e:
            resolve(_no_sm121a(facts), arm_src, Request(STACK, facts.target("sm121"), "glm_moe_dsa", (), True))
    finally:
        Provider.get_dependencies = orig
    text = str(e.value)
    assert text.startswith("Because sglang 0.5.23 requires sglang-kernel==0.4.10, and you lock for sm121 (compute capability 12.1), "
                           "and sglang-kernel 0.4.10's Linux aarch64 wheel carries sm_90, sm_100f, sm_110a, sm_120a, which runs "
                           "only on compute capability ")
    assert "(sm_120a is arch-specific: 12.0 only)" in text
    assert "every older sglang release that fits (0.5.9 .. 0.5.22) requires a kernel release" in text
    assert "we can conclude that no safe set of the core exists for sm121" in text
    hint = text.splitlines()[-1]
    assert hint.startswith("hint: no sgl-kernel / sglang-kernel release (aarch64 wheels) in the matrix carries GPU code that "
                           "runs on sm121")
    assert "rounds" not in text
    assert len(calls) < 60  # pruned before resolving: one try per sglang release, no search through kernels


# ------------------------------------------------------------------------------------------------
# Linux aarch64: GH200, GB200, GB300, DGX Spark
# ------------------------------------------------------------------------------------------------

ARM = {"flashinfer-python": "0.7.2", "sglang": "0.5.23", "sglang-kernel": "0.4.10", "torch": "2.14.1", "torchaudio": "2.11.0",
       "torchvision": "0.29.2", "transformers": "5.19.0"}
ARM_UPGRADE = {**ARM, "torchvision": "0.29.1"}  # --upgrade prefers stack sglang-0.5.23's torchvision pin (a known-good set)


@pytest.fixture(scope="module")
def arm_src(index):
    return IndexSource(index, exclude_newer=CUTOFF, platform="aarch64")


def test_aarch64_source_selects_the_aarch64_wheels(src, arm_src):
    assert arm_src.platform() == "CPython 3.11 on Linux aarch64" and src.platform() == "CPython 3.11 on Linux x86_64"
    assert arm_src.wheel("torch", "2.14.1").filename == "torch-2.14.1-cp311-cp311-manylinux_2_28_aarch64.whl"
    assert src.wheel("torch", "2.14.1").filename.endswith("_x86_64.whl")
    assert arm_src.wheel("sglang-kernel", "0.4.10").filename == "sglang_kernel-0.4.10-cp310-abi3-manylinux2014_aarch64.whl"
    assert arm_src.wheel("sglang", "0.5.23").filename == "sglang-0.5.23-cp311-cp311-manylinux_2_34_aarch64.whl"
    assert arm_src.wheel("sglang", "0.5.9").filename == src.wheel("sglang", "0.5.9").filename == "sglang-0.5.9-py3-none-any.whl"
    # A release with wheels for x86_64 only is no candidate on aarch64: a lock never builds from source.
    assert "0.10.0" in src.versions("vllm") and "0.10.0" not in arm_src.versions("vllm")
    assert arm_src.unavailable("vllm")["0.10.0"] == ["vllm-0.10.0-cp38-abi3-manylinux1_x86_64.whl", "vllm-0.10.0.tar.gz"]


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm103", "sm121"])
def test_aarch64_takes_a_cuda_torch_and_the_kernels_built_for_it(facts, arm_src, target):
    """torch's default aarch64 wheels are CPU-only up to 2.10.0: the glm5 stack's torch 2.9.1 cannot serve a Grace
    host or DGX Spark, so the set is sglang 0.5.23's (torch 2.14.1, CUDA 13; sglang-kernel 0.4.10 carries sm_121a)."""
    out = resolve(facts, arm_src, Request(STACK, facts.target(target), "glm_moe_dsa", platform="aarch64"))
    assert out.pins == ARM
    assert not [f for f in evaluate(out.pins, target=target, model="glm_moe_dsa", matrix=facts.on("aarch64"))
                if f.severity == "error"]


def test_sm121_defaults_to_aarch64(facts, arm_src):
    assert resolve(facts, arm_src, Request(STACK, facts.target("sm121"), "glm_moe_dsa")).pins == ARM


def test_recorded_aarch64_source(facts):
    rec = RecordedSource(HERE / "index-aarch64.json")
    assert rec.machine == "aarch64"
    assert resolve(facts, rec, Request(STACK, facts.target("sm100"), "glm_moe_dsa", platform="aarch64")).pins == ARM
    with pytest.raises(InputError, match="the source reads the aarch64 wheels, and the request is for x86_64"):
        resolve(facts, rec, Request(STACK, facts.target("sm100"), "glm_moe_dsa"))


def test_sm121_with_the_glm5_kernel_names_its_sm_120a_code(facts, arm_src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, arm_src, Request(STACK, facts.target("sm121"), "glm_moe_dsa", ("sglang==0.5.9",)))
    first, hint = str(e.value).splitlines()
    assert first.startswith("Because sglang 0.5.9 requires sgl-kernel==0.3.21, and you lock for sm121 (compute capability 12.1), "
                            "and sgl-kernel 0.3.21's Linux aarch64 wheel carries sm_80, sm_87, sm_89, sm_90, sm_90a, sm_100a, "
                            "sm_101a, sm_120a, which runs only on compute capability ")
    assert "(sm_120a is arch-specific: 12.0 only), we can conclude that no safe set of the core exists for sm121" in first
    assert "torch" not in first
    assert hint == "hint: sglang-kernel 0.4.2 .. 0.4.10 (aarch64 wheels) carry GPU code that runs on sm121"


def test_cpu_only_torch_on_aarch64_is_ruled_out_for_that_reason(facts, arm_src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, arm_src, Request(STACK, facts.target("sm100"), "glm_moe_dsa", ("sglang==0.5.9",), platform="aarch64"))
    first, hint = str(e.value).splitlines()
    assert first.startswith("Because sglang 0.5.9 requires torch==2.9.1, and you lock for sm100 on Linux aarch64, and torch "
                            "2.9.1's default Linux aarch64 wheel is a CPU-only build (no CUDA, no GPU code; evidence arch-probe)")
    assert hint == "hint: torch 2.11.0 .. 2.15.0 (aarch64 wheels) carry GPU code that runs on sm100"


def test_a_release_without_an_aarch64_wheel_is_ruled_out_for_that_reason(facts, arm_src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, arm_src, Request(VSTACK, facts.target("sm100"), "glm_moe_dsa", ("vllm==0.10.0",), platform="aarch64"))
    first, hint = str(e.value).splitlines()
    assert first.startswith("Because you require vllm==0.10.0, and vllm 0.10.0 has no wheel for CPython 3.11 on Linux aarch64 on "
                            "the index, only vllm-0.10.0-cp38-abi3-manylinux1_x86_64.whl, vllm-0.10.0.tar.gz, and a lock never "
                            "builds from source")
    assert hint == "hint: choose a vllm release with a wheel for CPython 3.11 on Linux aarch64"


def test_a_dependency_without_an_aarch64_wheel_names_that(facts, arm_src):
    """A chosen release that needs a release with no aarch64 wheel is ruled out for that reason (here sglang 0.5.9 made
    to require sgl-kernel 0.3.5, whose only wheel is for x86_64)."""
    class Pinned:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def requires(self, name, version):
            got = self.inner.requires(name, version)
            if (name, version) == ("sglang", "0.5.9"):
                got = ["sgl-kernel==0.3.5"] + [r for r in got if not r.startswith("sgl-kernel")]
            return got

    with pytest.raises(UnsafeError) as e:
        resolve(facts, Pinned(arm_src), Request(STACK, facts.target("sm100"), "glm_moe_dsa", ("sglang==0.5.9",), platform="aarch64"))
    first, hint = str(e.value).splitlines()
    assert first.startswith("Because sglang 0.5.9 requires sgl-kernel==0.3.5, and sgl-kernel 0.3.5 has no wheel for CPython 3.11 "
                            "on Linux aarch64 on the index, only sgl_kernel-0.3.5-cp310-abi3-manylinux2014_x86_64.whl, and a "
                            "lock never builds from source")
    assert hint == "hint: choose a sgl-kernel release with a wheel for CPython 3.11 on Linux aarch64"


def test_vllm_on_aarch64_has_no_evidence(facts, arm_src):
    """The matrix's vLLM rows are about the x86_64 wheels: on aarch64 vllm is unknown, and the hint names the
    SGLang stack that serves the model there (with the platform)."""
    with pytest.raises(UnsafeError) as e:
        resolve(facts, arm_src, Request(VSTACK, facts.target("sm100"), "glm_moe_dsa", platform="aarch64"))
    first, hint = str(e.value).splitlines()
    assert "the matrix has no evidence for vllm 0.33.0's Linux aarch64 wheel (the torch it was built against)" in first
    assert hint.endswith("(stack glm5-sglang-0.5.9: `glmcompat lock --stack glm5-sglang-0.5.9 --target sm100 --platform aarch64`)")


@pytest.mark.parametrize("target,platform,needle", [
    ("sm121", "x86_64", "target sm121 never ships on x86_64 (DGX Spark (GB10) on aarch64)"),
    ("sm120", "aarch64", "target sm120 never ships on aarch64"),
    ("sm100", "sparc", "unknown platform 'sparc' (known: x86_64, aarch64)"),
])
def test_a_platform_the_target_never_ships_on(facts, src, target, platform, needle):
    """The command's plan refuses it, once, at the edge (nothing below looks the platform up again)."""
    from glmcompat.decide.plan import plan

    with pytest.raises(InputError) as e:
        plan(facts, [target], platform, "glm_moe_dsa")
    assert needle in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("target,platform,want", [("sm121", None, "aarch64"), ("sm100", None, "x86_64"), ("sm120", None, "x86_64"),
                                                  ("sm90", "arm64", "aarch64"), ("sm103", "aarch64", "aarch64")])
def test_lock_platform(facts, target, platform, want):
    from glmcompat.decide.stacks import lock_platform

    assert lock_platform(facts.target(target), platform) == want


def test_sm103_kernel_request_is_explained_by_gpu_code(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, Request(STACK, facts.target("sm103"), "glm_moe_dsa", ("sgl-kernel==0.3.21",)))
    text = str(e.value)
    assert text.startswith("Because you require sgl-kernel==0.3.21, and you lock for sm103 (compute capability 10.3), and "
                           "sgl-kernel 0.3.21 carries")
    assert "hint: sglang-kernel" in text  # a release that does run there


# ------------------------------------------------------------------------------------------------
# Memoisation and the warm path
# ------------------------------------------------------------------------------------------------


def test_dependencies_and_requirement_parses_are_memoised(facts, recorded, tmp_path):
    from glmcompat.decide.resolution import parse_requirement

    parse_requirement.cache_clear()
    with mock_index(recorded, tmp_path) as client:
        s = IndexSource(client, exclude_newer=CUTOFF)
        req, out, _ = upgrade(facts, s)
        p = out.provider
        assert p is not None and p.calls["computed"] == len(p._deps) < p.calls["dependencies"]
        parses = parse_requirement.cache_info()
        assert parses.misses < 150  # only core Requires-Dist lines are parsed, each once
        cold = client.requests
        # A second source on the same cache reads no page and no METADATA: both are memoised on disk.
        again = IndexSource(client, exclude_newer=CUTOFF)
        assert resolve(facts, again, req).pins == NEWEST and client.requests == cold
        skip_reasons(facts, again, req, resolve(facts, again, req))
        assert client.requests == cold


def test_memo_follows_a_refreshed_page(facts, recorded, tmp_path):
    with mock_index(recorded, tmp_path) as client:
        IndexSource(client, exclude_newer=CUTOFF).versions("sglang-kernel")
        changed = dict(recorded["pages"]["sglang-kernel"])
        changed["files"] = [f for f in changed["files"] if "0.4.10" not in f["filename"]]
        from glmcompat.edges.index import cache_key

        client.cache.put_json(cache_key("page", client.project_url("sglang-kernel")), changed)
        assert "0.4.10" not in IndexSource(client, exclude_newer=CUTOFF).versions("sglang-kernel")


def test_no_skip_reason_is_keyed_on_prose():
    """Explanations decide by the kinds of the structured causes (Why, Ruled, Skip), never by their text."""
    for module in ("resolver.py", "explain.py"):
        text = (ROOT / "glmcompat" / "decide" / module).read_text()
        assert 'why.startswith("you")' not in text and '"METADATA" not in' not in text
    assert ".startswith(" not in (ROOT / "glmcompat" / "decide" / "explain.py").read_text()


@pytest.mark.parametrize("raw,want", [("2026-11-29", "2026-11-29T00:00:00"), ("2026-11-29T00:00:00Z", "2026-11-29T00:00:00"),
                                      ("2026-11-29T12:30Z", "2026-11-29T12:30:00"), (None, None)])
def test_parse_cutoff(raw, want):
    assert parse_cutoff(raw) == want


def test_parse_cutoff_rejects_garbage():
    with pytest.raises(InputError, match="exclude-newer"):
        parse_cutoff("yesterday")


# ------------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def cli_index(recorded):
    """The recorded index served on a local port: the URL to pass as ``--index-url``."""
    from tests.localindex import serve_recorded

    with serve_recorded(recorded) as url:
        yield ["--index-url", url]


def test_upgrade_command_text(cli_index, capsys):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, "--target", "sm120", "--exclude-newer", CUTOFF, "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Newest safe core set for sm120 (stack glm5-sglang-0.5.9, model glm_moe_dsa; "
                          "index as of 2026-11-29T00:00:00Z):\n")
    for n, v in NEWEST.items():
        assert f"  {n}=={v}" in out
    assert "  flashinfer-cubin: not in the set (stack: 0.6.3; sglang 0.5.23 does not require it)" in out
    assert "  torch 2.15.0: Because sglang 0.5.23 requires torch==2.14.1," in out
    assert "      hint: torch follows sglang's pin" in out


def test_upgrade_command_json(cli_index, capsys):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, "--target", "sm120", "--exclude-newer", CUTOFF, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["version"] == 2 and d["pins"] == NEWEST and d["exclude_newer"] == "2026-11-29T00:00:00Z"
    assert d["not_required"] == {"flashinfer-cubin": "sglang 0.5.23 does not require it",
                                 "sgl-kernel": "sglang 0.5.23 does not require it"}
    t = d["skipped"]["torch"]["2.15.0"]
    assert t["kind"] == "pinned" and t["because"][0] == "sglang 0.5.23 requires torch==2.14.1" and t["remedy"]


def test_upgrade_command_sm121_on_aarch64(cli_index, capsys):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, "--target", "sm121", "--exclude-newer", CUTOFF, "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Newest safe core set for sm121 on Linux aarch64 (stack glm5-sglang-0.5.9, model glm_moe_dsa; ")
    for n, v in ARM.items():  # no known-good stack lists sm121: nothing to prefer over the newest torchvision
        assert f"  {n}=={v}" in out
    assert "hint: `glmcompat lock --stack glm5-sglang-0.5.9 --target sm121 --platform aarch64 --upgrade` writes" in out
    assert main(["upgrade", *cli_index, "--target", "sm121", "--exclude-newer", CUTOFF, "-q", "--with", "sglang==0.5.9"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: Because sglang 0.5.9 requires sgl-kernel==0.3.21, and you lock for sm121 (compute capability "
                          "12.1), and sgl-kernel 0.3.21's Linux aarch64 wheel carries ") and "rounds" not in err


def test_upgrade_command_platform(cli_index, capsys):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, "--target", "sm100", "--platform", "aarch64", "--exclude-newer", CUTOFF, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["platform"] == "aarch64" and d["pins"] == ARM_UPGRADE
    assert main(["upgrade", *cli_index, "--target", "sm100", "--exclude-newer", CUTOFF, "-q"]) == 0
    assert capsys.readouterr().out.startswith("Newest safe core set for sm100 on Linux x86_64 (stack")


@pytest.mark.parametrize("args,needle", [
    (["--target", "sm121", "--platform", "x86_64"], "error: target sm121 never ships on x86_64 (DGX Spark (GB10) on aarch64)"),
    (["--target", "sm100", "--platform", "ppc"], "error: unknown platform 'ppc' (known: x86_64, aarch64)"),
])
def test_upgrade_command_bad_platform(cli_index, capsys, args, needle):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(needle) and len(err.strip().splitlines()) == 1, err


def test_upgrade_command_bad_date(cli_index, capsys):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, "--target", "sm120", "--exclude-newer", "soon"]) == 2


# ------------------------------------------------------------------------------------------------
# vLLM: the engine is the root, its METADATA pins the rest, the matrix judges vllm like a kernel
# ------------------------------------------------------------------------------------------------

VSTACK = "glm5-vllm-0.33.0"
VLLM = {"vllm": "0.33.0", "torch": "2.14.0", "torchvision": "0.29.0", "torchaudio": "2.11.0",
        "flashinfer-python": "0.7.2.post1", "transformers": "5.20.2"}
VLLM_CUDA12 = {"vllm": "0.19.1", "torch": "2.10.0", "torchvision": "0.25.0", "torchaudio": "2.10.0",
               "flashinfer-python": "0.6.6", "flashinfer-cubin": "0.6.6", "transformers": "5.5.4"}


def vreq(target="sm120", with_=(), upgrade=False, stack=VSTACK, model="glm_moe_dsa"):
    return Request(stack, load_facts().target(target), model, tuple(with_), upgrade)


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm120"])
@pytest.mark.parametrize("upgrade", [False, True])
def test_vllm_newest_release_that_fits(facts, src, target, upgrade):
    """vllm 0.33.0 (torch 2.14.0, CUDA 13, SASS up to sm_120f) is the newest release that fits; its own METADATA
    brings torch, torchvision, torchaudio and flashinfer-python; no sglang, no kernel package, no override."""
    out = resolve(facts, src, vreq(target, upgrade=upgrade))
    assert out.pins == VLLM and out.overridden == {}
    assert not [f for f in evaluate(out.pins, target=target, model="glm_moe_dsa", matrix=facts) if f.severity == "error"]


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm120"])
def test_vllm_cuda12_stack(facts, src, target):
    out = resolve(facts, src, vreq(target, stack="glm5-vllm-0.19.1"))
    assert out.pins == VLLM_CUDA12 and out.overridden == {}


def test_vllm_with_another_torch_takes_the_release_that_pins_it(facts, src):
    """A stack's pins are preferences, as for SGLang: --with torch==2.13.0 moves to vllm 0.32.0, which pins it."""
    out = resolve(facts, src, vreq(with_=("torch==2.13.0",)))
    assert out.pins == {"vllm": "0.32.0", "torch": "2.13.0", "torchvision": "0.28.0", "torchaudio": "2.11.0",
                        "flashinfer-python": "0.7.0.post1", "transformers": "5.19.0"}


def test_vllm_with_torch_next_to_a_vllm_that_pins_another_fails_with_a_derivation(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, vreq(with_=("vllm==0.26.0", "torch==2.13.0")))
    assert str(e.value) == ("Because vllm 0.26.0 requires torch==2.11.0, and you require torch==2.13.0, we can conclude that "
                            "no safe set of the core exists for sm120 (stack glm5-vllm-0.33.0, model glm_moe_dsa).\n"
                            "hint: relax or drop `--with torch==2.13.0`")


def test_vllm_with_a_torch_no_release_pins(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, vreq(with_=("torch==2.12.0",)))
    assert str(e.value) == (
        "Because vllm 0.33.0 requires torch==2.14.0, and you require torch==2.12.0, and every older vllm release that fits "
        "(0.16.0 .. 0.32.0) fails the same way (each pins torch 2.9.1, 2.10.0, 2.11.0 or 2.13.0), we can conclude that no "
        "safe set of the core exists for sm120 (stack glm5-vllm-0.33.0, model glm_moe_dsa).\n"
        "hint: relax or drop `--with torch==2.12.0`")


def test_vllm_transformers_below_5_is_overridden_for_the_model(facts, src):
    """vllm 0.16.0 .. 0.19.0 declare transformers<5; glm_moe_dsa needs >=5.2.0: the stack's override replaces
    the range (as sglang 0.5.9's exact pin), and the check names the override."""
    out = resolve(facts, src, vreq(with_=("torch==2.9.1",)))
    assert out.pins["vllm"] == "0.16.0" and out.pins["transformers"] == "5.20.2"
    assert out.overridden == {"transformers": "vllm 0.16.0 requires transformers<5,>=4.56.0, which excludes every transformers "
                                              "release that knows the model; overridden to transformers>=5.2.0 (stack override)"}
    found = evaluate(out.pins, target="sm120", model="glm_moe_dsa", matrix=facts,
                     env=Environment(overrides={"transformers": ">=5.2.0"}))
    assert not [f for f in found if f.severity == "error"]
    (w,) = [f for f in found if f.rule == "override"]
    assert w.pins == ("vllm==0.16.0", "transformers==5.20.2") and "vllm 0.16.0 requires transformers<5,>=4.56.0" in w.message


def test_vllm_release_without_a_wheel_for_the_platform(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, vreq(with_=("vllm==0.1.0",)))
    first, hint = str(e.value).splitlines()
    assert first.startswith("Because you require vllm==0.1.0, and vllm 0.1.0 has no wheel for CPython 3.11 on Linux x86_64 "
                            "on the index, only vllm-0.1.0.tar.gz, and a lock never builds from source, we can conclude")
    assert hint == "hint: choose a vllm release with a wheel for CPython 3.11 on Linux x86_64"
    assert "0.1.0" not in src.versions("vllm") and src.unavailable("vllm")["0.1.0"] == ["vllm-0.1.0.tar.gz"]


def test_vllm_before_any_release_served_the_model_names_the_sglang_stack(facts, recorded, tmp_path):
    with mock_index(recorded, tmp_path) as client:
        early = IndexSource(client, exclude_newer=recorded["vllm_early_cutoff"])
        assert "0.15.1" in early.versions("vllm") and "0.16.0" not in early.versions("vllm")
        with pytest.raises(UnsafeError) as e:
            resolve(facts, early, vreq(upgrade=True))
    assert str(e.value) == (
        "Because model glm_moe_dsa needs vllm>=0.16.0, and no vllm release on the index satisfies them, we can conclude that "
        "no safe set of the core exists for sm120 (stack glm5-vllm-0.33.0, model glm_moe_dsa).\n"
        "hint: no vllm release that serves model glm_moe_dsa (vllm>=0.16.0) fits here; sglang>=0.5.9 serves it "
        "(stack glm5-sglang-0.5.9: `glmcompat lock --stack glm5-sglang-0.5.9 --target sm120`)")


def _without(facts, *engines):
    """The matrix with the glm_moe_dsa row's support for ``engines`` taken out."""
    from dataclasses import replace

    from glmcompat.matrix.view import Facts

    data = dict(facts.data)
    data["model"] = tuple(replace(r, **dict.fromkeys(engines)) if r.model_type == "glm_moe_dsa" else r
                          for r in data["model"])
    return Facts(data, facts.key + "-test")


def test_model_the_engine_does_not_serve(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(_without(facts, "vllm"), src, vreq())
    assert str(e.value) == ("no vllm release in the matrix is known to serve model glm_moe_dsa (its [[model]] row names none); "
                            "sglang>=0.5.9 serves it (stack glm5-sglang-0.5.9: `glmcompat lock --stack glm5-sglang-0.5.9 "
                            "--target sm120`)")
    (cause,) = e.value.causes
    assert (cause.kind, cause.subject) == ("unserved", "vllm") and cause.remedy.startswith("sglang>=0.5.9 serves it")


@pytest.mark.parametrize("stack", [STACK, VSTACK])
def test_model_no_engine_serves(facts, src, stack):
    with pytest.raises(UnsafeError, match=r"^no engine release in the matrix is known to serve model glm_moe_dsa \(its \[\[model\]\] "
                                          r"row names no sglang or vllm release\): nothing to lock for it$"):
        resolve(_without(facts, "sglang", "vllm"), src, vreq(stack=stack))


def test_vllm_skip_reasons(facts, src):
    req = vreq(upgrade=True)
    out = resolve(facts, src, req)
    skipped = skip_reasons(facts, src, req, out)
    t = skipped["torch"]["2.14.1"]
    assert t.kind == "pinned" and t.clauses[0] == "vllm 0.33.0 requires torch==2.14.0"
    assert "no other vllm release that fits (0.16.0 .. 0.32.0) takes torch 2.14.1" in t.clauses
    tf = skipped["transformers"]["5.24.0"]  # fits an older vllm (no upper bound there): a preference, not "resolves too"
    assert tf.kind == "preference" and tf.subject == "vllm"
    assert tf.clauses == ("vllm 0.33.0 requires transformers<5.21.0,>=5.16.1",
                          "a safe set with transformers 5.24.0 exists, but it needs vllm 0.30.0 instead of 0.33.0")
    assert "vllm" not in skipped  # nothing newer than 0.33.0 before the cutoff


@pytest.mark.parametrize("stack,engine,target,model,want", [
    (None, None, "sm120", None, STACK),
    (None, "sglang", "sm120", None, STACK),
    (None, "vllm", "sm120", "glm_moe_dsa", VSTACK),
    (None, "vllm", "sm80", None, VSTACK),  # no vLLM stack lists sm80: the newest one, the resolver decides
    (VSTACK, "vllm", "sm90", None, VSTACK),
    ("glm5-vllm-0.19.1", None, "sm90", None, "glm5-vllm-0.19.1"),
])
def test_choose_stack(facts, stack, engine, target, model, want):
    from glmcompat.decide.stacks import choose_stack

    assert choose_stack(facts, stack, engine, facts.target(target), model, STACK) == want


@pytest.mark.parametrize("stack,engine,needle", [
    (None, "tensorrt", "unknown engine 'tensorrt' (known: sglang, vllm)"),
    (VSTACK, "sglang", "--engine sglang does not match stack 'glm5-vllm-0.33.0', a vllm stack"),
    (STACK, "vllm", "--engine vllm does not match stack 'glm5-sglang-0.5.9', a sglang stack"),
])
def test_choose_stack_refuses(facts, stack, engine, needle):
    from glmcompat.decide.stacks import choose_stack

    with pytest.raises(InputError) as e:
        choose_stack(facts, stack, engine, facts.target("sm120"), None, STACK)
    assert needle in str(e.value)


def test_upgrade_command_vllm(cli_index, capsys):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, "--engine", "vllm", "--target", "sm120", "--exclude-newer", CUTOFF, "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Newest safe core set for sm120 (stack glm5-vllm-0.33.0, model glm_moe_dsa; "
                          "index as of 2026-11-29T00:00:00Z):\n")
    for n, v in VLLM.items():
        assert f"  {n}=={v}\n" in out
    assert "  torch 2.15.0: Because vllm 0.33.0 requires torch==2.14.0," in out
    assert "hint: `glmcompat lock --stack glm5-vllm-0.33.0 --target sm120 --upgrade` writes a lock for this set" in out


def test_upgrade_command_vllm_json(cli_index, capsys):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, "--engine", "vllm", "--target", "sm100", "--exclude-newer", CUTOFF, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["engine"] == "vllm" and d["stack"] == VSTACK and d["pins"] == VLLM and d["not_required"] == {}


@pytest.mark.parametrize("args,needle", [
    (["--engine", "tensorrt"], "error: unknown engine 'tensorrt' (known: sglang, vllm)"),
    (["--engine", "sglang", "--stack", VSTACK], "error: --engine sglang does not match stack 'glm5-vllm-0.33.0'"),
])
def test_upgrade_command_bad_engine(cli_index, capsys, args, needle):
    from glmcompat.cli import main

    assert main(["upgrade", *cli_index, "--target", "sm120", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(needle) and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------
# Live
# ------------------------------------------------------------------------------------------------


@pytest.mark.network
def test_live_upgrade_sm120():
    p = run_cli("upgrade", "--target", "sm120", "--exclude-newer", CUTOFF, "--json", "-q")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["pins"] == NEWEST
    assert Version(d["pins"]["torch"]) == Version("2.14.1") and "flashinfer-cubin" not in d["pins"]


@pytest.mark.network
def test_live_upgrade_sm121_on_aarch64():
    p = run_cli("upgrade", "--target", "sm121", "--exclude-newer", CUTOFF, "--json", "-q")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["platform"] == "aarch64" and d["pins"] == ARM


@pytest.mark.network
def test_live_upgrade_sm121_explains():
    p = run_cli("upgrade", "--target", "sm121", "--exclude-newer", CUTOFF, "-q", "--with", "sglang==0.5.9")
    assert p.returncode == 1 and "sm_120a is arch-specific" in p.stderr and "rounds" not in p.stderr
    assert "sgl-kernel 0.3.21's Linux aarch64 wheel carries" in p.stderr


@pytest.mark.network
def test_live_upgrade_vllm_sm120():
    p = run_cli("upgrade", "--engine", "vllm", "--target", "sm120", "--exclude-newer", CUTOFF, "--json", "-q")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["pins"] == VLLM


# ------------------------------------------------------------------------------------------------
# upgrade never proposes a set check rejects (every target, CPython 3.10 .. 3.14)
# ------------------------------------------------------------------------------------------------

PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")


def _target_names():
    return [t.name for t in load_facts().rows("target")]


@pytest.mark.parametrize("python", PYTHONS)
def test_upgrade_never_proposes_a_set_check_rejects(facts, python):
    """For every target, the set ``upgrade`` proposes on CPython ``python`` (the index as
    scripts/record_upgrade_pythons.py recorded it: the releases with a wheel for that Python and the
    target's machine, and their Requires-Dist) passes ``check`` for the model, under the overrides the
    lock would carry; where no safe set exists, upgrade says so instead of proposing one."""
    from glmcompat.decide.stacks import lock_platform

    proposed = 0
    for target in _target_names():
        machine = lock_platform(facts.target(target), None)
        src = RecordedSource(HERE / "pythons" / f"cp{python.replace('.', '')}-{machine}.json")
        req = Request(STACK, facts.target(target), "glm_moe_dsa", (), True, python=python, platform=machine)
        try:
            out = resolve(facts, src, req)
        except UnsafeError:
            continue
        proposed += 1
        model_reqs = out.provider.model_reqs if out.provider is not None else {}
        overrides = {n: model_reqs.get(n, "") for n in out.overridden}
        found = evaluate(out.pins, target=target, model="glm_moe_dsa", matrix=facts.on(machine),
                         env=Environment(overrides=overrides))
        errors = [f"{f.rule}: {f.message}" for f in found if f.severity == "error"]
        assert not errors, (python, target, out.pins, errors)
    assert proposed >= len(_target_names()) // 2  # most targets get a set: the property is not vacuous


def test_python_3_10_upgrade_keeps_torchvision_within_its_metadata(facts):
    """sglang 0.5.22 and 0.5.23 ship no cp310 wheel, so on 3.10 the newest sglang pins torch 2.13.0; torchvision
    0.29.2 declares torch>=2.14.0 (probes find it loading next to 2.13.0, but an installer enforces METADATA)."""
    src = RecordedSource(HERE / "pythons" / "cp310-x86_64.json")
    out = resolve(facts, src, Request(STACK, facts.target("sm90"), "glm_moe_dsa", (), True, python="3.10", platform="x86_64"))
    assert out.pins["torch"] == "2.13.0" and out.pins["sglang"] == "0.5.21"
    assert Version(out.pins["torchvision"]) < Version("0.29.1")
    assert "0.5.22" not in src.versions("sglang") and "0.5.23" not in src.versions("sglang")


def test_python_3_10_says_the_newer_sglang_has_no_wheel_for_it(facts):
    """On CPython 3.10 torch 2.14.1 is out of reach because sglang 0.5.22 and 0.5.23, the releases that pin it,
    ship no cp310 wheel: the explanation says so, and its hint names a Python they have a wheel for (before, it
    said that no sglang release allowing torch 2.14.1 was on the index)."""
    src = RecordedSource(HERE / "pythons" / "cp310-x86_64.json")
    req = Request(STACK, facts.target("sm90"), "glm_moe_dsa", (), True, python="3.10", platform="x86_64")
    out = resolve(facts, src, req)
    skip = skip_reasons(facts, src, req, out)["torch"]["2.14.1"]
    assert isinstance(skip, Skip)
    text = " ".join(skip.clauses)
    assert "sglang 0.5.22, 0.5.23 are on the index with no wheel for CPython 3.10 on Linux x86_64" in text
    assert "none on the index yet" not in skip.remedy and "`--python 3.11`" in skip.remedy


# ------------------------------------------------------------------------------------------------
# Causes are data: the provider builds no prose, explain renders every kind
# ------------------------------------------------------------------------------------------------


def test_causes_are_data_and_explain_renders_every_kind(facts):
    """What the provider yields -- each requirement's Why and each matrix verdict -- carries no rendered text, and
    explain's one formatter has a clause of its own for every kind the recorded index gives (never the generic one)."""
    import dataclasses

    from glmcompat.decide import resolver as R
    from glmcompat.decide.explain import clause, ruled_clause
    from glmcompat.edges.sources import RecordedSource

    assert "text" not in {f.name for f in dataclasses.fields(R.Why)} | {f.name for f in dataclasses.fields(R.Ruled)}
    assert not hasattr(R.Req, "says")
    src = RecordedSource(HERE / "index.json")
    kinds: dict[str, str] = {}
    verdicts: dict[tuple[str, str], str] = {}
    for target in ("sm90", "sm120", "sm75"):
        p, roots = R.make_provider(facts, src, Request(STACK, facts.target(target), "glm_moe_dsa", ("torch>=2.6",), True))
        reqs = list(roots)
        for name in ("sglang", "torch", "torchvision", "torchaudio", "sgl-kernel", "sglang-kernel", "flashinfer-python",
                     "flashinfer-cubin"):
            for v in p.versions(name):
                ruled = p.ruled(name, str(v))
                if ruled is not None:
                    verdicts[(ruled.kind, ruled.missing)] = ruled_clause(ruled)
                if str(v) in src.data.get(name, {}).get("requires", {}):  # the releases whose METADATA was recorded
                    reqs += p.dependencies(name, str(v))
        for r in reqs:
            kinds[r.why.kind] = clause(r)
    assert {R.USER, R.STACK, R.MODEL, R.DECLARED, R.IS_ABI, R.LINKS, R.BUILT, R.FAMILY, R.SAME, R.RENAMED} <= set(kinds)
    assert not [t for t in kinds.values() if " is required (" in t]
    assert kinds[R.IS_ABI].endswith(" is that ABI") and kinds[R.USER] == "you require torch>=2.6"
    assert kinds[R.MODEL].startswith("model glm_moe_dsa needs ")
    assert {k for k, _ in verdicts} >= {R.NO_CODE, R.NO_EVIDENCE}


def test_a_skip_keeps_its_premises_as_data(facts, src):
    """The derivation behind a skip reason is data until rendered: torch 2.15.0's first premise is sglang 0.5.23's
    requirement (the package that asks, its version, the kind of reason), and the clauses are its rendering."""
    from glmcompat.decide.explain import render
    from glmcompat.decide.resolver import DECLARED, Req

    _, _, skipped = upgrade(facts, src)
    torch = skipped["torch"]["2.15.0"]
    assert isinstance(torch, Skip)
    first = torch.premises[0]
    assert isinstance(first, Req) and (first.name, str(first.spec)) == ("torch", "==2.14.1")
    assert (first.why.kind, first.why.pkg, first.why.ver) == (DECLARED, "sglang", "0.5.23")
    assert torch.clauses == tuple(render(p) for p in torch.premises)
