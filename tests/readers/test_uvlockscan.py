"""The uv.lock projection (glmcompat.readers.uvlockscan): locks with one projection get one verdict, byte for byte.

Property tests against the full path (the TOML parser, the environment walk, the rules, the renderer), run in
process on every real uv.lock of the fixtures: edits the projection drops (comments, wheel and sdist details, the
version of a package no rule can name) leave the verdict as it was; edits it keeps change the projection; random
one-character edits either change the projection, make the lock unrecognised, or leave the full verdict (and its
exit code) exactly as it was.
"""

from __future__ import annotations

import io
import random
import re
import sys
from functools import cache, lru_cache
from pathlib import Path

import pytest

from glmcompat.readers.uvlockscan import canonical, projection

from tests.conftest import FIXTURES, LOCKS

REAL = sorted(FIXTURES.rglob("uv.lock"))
SMALL = [p for p in REAL if p.stat().st_size < 300_000]  # the full path on these takes well under a second
GLM5 = LOCKS / "glm5-sglang-0.5.9" / "uv.lock"


@cache
def relevant() -> frozenset[str]:
    from glmcompat.cli.fastpath import relevant_names
    from glmcompat.matrix.load import load_facts

    return relevant_names(load_facts())


def verdict(tmp: Path, text: str, *args: str) -> tuple[int, str, str]:
    """What the full path prints and exits with for ``check uv.lock ARGS`` (no recorded verdict read or written)."""
    from glmcompat import cli
    from glmcompat.cli import fastpath

    d = tmp / f"v{abs(hash(text)) % 10**12}"
    d.mkdir(exist_ok=True)
    (d / "uv.lock").write_text(text)
    out, err = io.StringIO(), io.StringIO()
    real = sys.stdout, sys.stderr, fastpath.lookup, fastpath.store
    sys.stdout, sys.stderr = out, err
    fastpath.lookup = lambda argv: None  # type: ignore[assignment]
    fastpath.store = lambda *a, **k: None  # type: ignore[assignment]
    try:
        rc = cli.main(["check", str(d / "uv.lock"), *args])
    finally:
        sys.stdout, sys.stderr, fastpath.lookup, fastpath.store = real
    return rc, out.getvalue().replace(str(d), "DIR"), err.getvalue().replace(str(d), "DIR")


@lru_cache(maxsize=16)
def projected(text: str) -> str | None:
    """:func:`projection` of ``text`` with the rules' names, computed once per text (the tests and the edit helpers
    below ask again for the same fixture's, unedited or edited the same way); the last few kept."""
    return projection(text.encode(), relevant())


def losers(text: str) -> set[str]:
    """The packages whose version (and wheels and sdist) the projection of ``text`` drops."""
    proj = projected(text)
    assert proj is not None
    loses = {m.group(1) for m in re.finditer(r'\[\[package\]\]\nname = "([^"]+)"\nversion \*', proj)}
    assert loses, "some package loses its version"
    return loses


def untracked_bumped(text: str) -> str:
    """``text`` with the version of every package the projection drops the version of raised (a 9 put before it)."""
    loses = losers(text)

    def bump(m: re.Match[str]) -> str:
        return f'{m.group(1)}version = "9{m.group(2)}"' if m.group(1).split('"')[1] in loses else m.group(0)

    return re.sub(r'(\[\[package\]\]\nname = "[^"]+"\n)version = "([^"]+)"', bump, text)


def files_churned(text: str, rng: random.Random) -> str:
    """``text`` with the hash, size and upload time of every wheel and sdist of the packages whose version the
    projection drops changed (a re-upload; a new release's files)."""
    loses = losers(text)

    def churn(m: re.Match[str]) -> str:  # uv writes upload-time since lock revision 2; older locks have none
        return f'hash = "sha256:{rng.getrandbits(256):064x}", size = {rng.randrange(1, 10**8)}{m.group(1) or ""}'

    chunks = text.split("\n[[package]]\n")
    return "\n[[package]]\n".join(
        [chunks[0]] + [re.sub(r'hash = "sha256:[0-9a-f]+", size = \d+(, upload-time = "[^"]+")?', churn, c)
                       if c[8:c.index('"', 8)] in loses else c for c in chunks[1:]])


def commented(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(20):
        lines.insert(rng.randrange(len(lines)), " " * rng.choice([0, 4]) + f"# note {rng.random()}")
    return "\n".join(lines) + "# the end\n"


@pytest.mark.parametrize("path", REAL, ids=[str(p.relative_to(FIXTURES)) for p in REAL])
def test_every_real_lock_is_recognised(path):
    proj = projection(path.read_bytes(), relevant())
    assert proj is not None
    assert "version *" in proj  # something is dropped: the projection is worth having
    for name in ("torch", "sglang", "vllm", "flashinfer-python", "transformers"):
        assert f'name = "{name}"\nversion *' not in proj, f"{name} is named by the rules: it keeps its version"


@pytest.mark.parametrize("path", SMALL, ids=[str(p.relative_to(FIXTURES)) for p in SMALL])
def test_dropped_edits_keep_the_projection_and_the_verdict(tmp_path, path):
    rng = random.Random(28)
    text = path.read_text()
    base = projected(text)
    want = verdict(tmp_path, text, "--target", "sm90")
    for edited in (commented(text, rng), files_churned(text, rng), untracked_bumped(text),
                   untracked_bumped(files_churned(commented(text, rng), rng))):
        assert edited != text
        assert projected(edited) == base
        assert verdict(tmp_path, edited, "--target", "sm90") == want


@pytest.mark.slow
def test_dropped_edits_keep_the_verdict_on_the_largest_real_lock(tmp_path):
    """NeMo-RL's 877 KB lock (192 environments with sm90's two machines): one round of every dropped edit."""
    path = FIXTURES / "realworld" / "01" / "uv.lock"
    text = path.read_text()
    edited = untracked_bumped(files_churned(commented(text, random.Random(1)), random.Random(2)))
    assert projected(edited) == projected(text)
    args = ("--target", "sm90", "--allow-unknown")
    assert verdict(tmp_path, edited, *args) == verdict(tmp_path, text, *args)


KEPT = [
    ("a tracked package's version", lambda t: t.replace('name = "torch"\nversion = "2.9.1"', 'name = "torch"\nversion = "2.9.0"')),
    ("a marker", lambda t: t.replace("sys_platform == 'linux'", "sys_platform == 'darwin'", 1)),
    ("a dependency", lambda t: t.replace('    { name = "torch" },\n', "", 1)),
    ("a wheel's platform tag of a wheel-only package", lambda t: t.replace("manylinux_2_28_x86_64.whl", "manylinux_2_28_ppc64le.whl")),
    ("the requires-python", lambda t: t.replace('requires-python = "', 'requires-python = ">=3.12, ', 1)),
    ("a blank line", lambda t: t.replace("\n\n[[package]]", "\n\n\n[[package]]", 1)),
]


@pytest.mark.parametrize("what,edit", KEPT, ids=[k for k, _ in KEPT])
def test_kept_edits_change_the_projection(what, edit):
    text = GLM5.read_text()
    edited = edit(text)
    assert edited != text, what
    assert projected(edited) != projected(text)


def test_a_package_present_twice_keeps_its_versions():
    text = GLM5.read_text()
    proj = projected(text)
    assert proj is not None and 'name = "idna"\nversion *' in proj
    block = text[text.index('[[package]]\nname = "idna"'):]
    block = block[:block.index("\n\n") + 2]
    twice = text + "\n" + block.replace('version = "', 'version = "9', 1)
    proj2 = projection(twice.encode(), relevant())
    assert proj2 is not None and 'name = "idna"\nversion *' not in proj2


@pytest.mark.parametrize("text", [
    b'version = 1\r\n', b'\xef\xbb\xbfversion = 1\n', b'version = 1\nx = """a\n# b\n"""\n', b'\xff\xfe',
    b'version = 1\n[[ package ]]\nname = "a"\n', b'version = 1\n# a \x01 control character\n',
    b'version = 1\n\n[[package]]\nversion = "1"\nname = "a"\n',
], ids=["crlf", "bom", "multi-line string", "not utf-8", "spaced header", "control character", "name not first"])
def test_other_layouts_are_not_recognised(text):
    assert projection(text, frozenset()) is None


@pytest.mark.slow
def test_random_one_character_edits_never_share_a_projection_with_another_verdict(tmp_path):
    """Fuzz: an edit either changes the projection (or makes the lock unrecognised: keyed by its bytes), or the full
    path gives exactly the verdict of the original, exit code included (never an error hidden behind a recorded
    verdict)."""
    text = GLM5.read_text()
    base = projected(text)
    want = verdict(tmp_path, text, "--target", "sm120")
    rng = random.Random(2028)
    same = 0
    for _ in range(400):
        at = rng.randrange(len(text))
        edited = text[:at] + rng.choice(['"', "#", "\n", " ", "a", "1", "[", "=", ",", "\\", "{", "}", ".", "-", ""]) + text[at + 1:]
        if edited == text or projection(edited.encode(), relevant()) != base:
            continue
        same += 1
        assert verdict(tmp_path, edited, "--target", "sm120") == want, (at, edited[max(0, at - 80):at + 80])
        if same >= 12:
            break
    assert same >= 12, "the fuzz reached the dropped parts"


def test_canonical_names():
    assert canonical("Flash_Attn") == "flash-attn"
    assert canonical("a.-_b") == "a-b"


@pytest.mark.parametrize("path", SMALL, ids=[str(p.relative_to(FIXTURES)) for p in SMALL])
def test_the_digest_and_its_memo_follow_the_projection(path):
    """The start-up path keys by :func:`projection_digest`: equal projections give equal digests, a changed one
    another; a memo of the old lock's packages gives the digest a fresh read gives, and a memo entry is only ever
    the projection of the very lines it names (a forged memo for other lines is not consulted)."""
    from glmcompat.readers.uvlockscan import memo_bytes, memo_from, projection_digest

    text = path.read_text()
    rng = random.Random(7)
    first = projection_digest(text.encode(), relevant(), {})
    assert first is not None
    digest, memo = first
    assert memo_from(memo_bytes(memo)) == memo
    same = untracked_bumped(commented(text, rng))
    assert projection_digest(same.encode(), relevant(), {})[0] == digest  # type: ignore[index]
    assert projection_digest(same.encode(), relevant(), memo)[0] == digest  # type: ignore[index]
    changed = next((c for c in (edit(text) for _, edit in KEPT) if c != text), text)  # the first edit this lock admits
    assert changed != text
    fresh = projection_digest(changed.encode(), relevant(), {})
    assert fresh is not None and fresh[0] != digest
    assert projection_digest(changed.encode(), relevant(), memo) == fresh  # the memo holds the old lines only


@pytest.mark.slow
def test_random_edits_get_the_digest_a_fresh_read_gives_whatever_the_memo():
    """Fuzz: with the memo of the original lock or none, an edited lock gets one digest (or none: unrecognised,
    both ways), and two locks share a digest exactly when they share a projection."""
    from glmcompat.readers.uvlockscan import projection_digest

    text = GLM5.read_text()
    base = projected(text)
    first = projection_digest(text.encode(), relevant(), {})
    assert first is not None and base is not None
    digest, memo = first
    rng = random.Random(751)
    for _ in range(200):
        at = rng.randrange(len(text))
        edited = (text[:at] + rng.choice(['"', "#", "\n", " ", "a", "1", "[", "=", ",", "\\", "'''", "\n# c\n", ""])
                  + text[at + 1:]).encode()
        fresh = projection_digest(edited, relevant(), {})
        assert projection_digest(edited, relevant(), memo) == fresh
        proj = projection(edited, relevant())
        assert (fresh is None) == (proj is None)
        if fresh is not None:
            assert (fresh[0] == digest) == (proj == base)
