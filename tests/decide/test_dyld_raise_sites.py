"""macOS's loader (dyld) as CPython reports it (issue 38, fix-dyld): each message of the raise-site table
(tests/fixtures/raise_sites/dyld-signatures.toml, every phrasing dyld 2 and dyld 4 produce for a library not loaded and
for a Mach-O of another architecture, each with its file and line at a tag of apple-oss-distributions/dyld) is named by
the signature it should get, with the library, the package and both architectures the log gives and a remedy; dyld's
notices stay unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import each_row, diagnoses, explain, message_id, table, unclaimed

MESSAGES = table("dyld-signatures.toml")


def test_the_table_covers_both_loaders_and_cites_each_message():
    assert {"dyld2", "dyld4"} <= {m["library"] for m in MESSAGES}
    assert all(m["source"] and m["text"] for m in MESSAGES)
    assert all(m["expect"] or m.get("why") for m in MESSAGES)
    named = {m["expect"] for m in MESSAGES if m["expect"]}
    assert named == {"torch-lib-missing", "system-lib-missing", "libpython-missing", "dylib-wrong-arch"}


def test_each_message_is_named_with_its_library_package_and_remedy(tmp_path, capsys):
    def check(m):
        out = diagnoses(m["text"], m["expect"], m.get("words", []), tmp_path, capsys)
        assert out.count("\nline ") == 1, out  # one diagnosis: a missing file and a wrong architecture are not both said

    each_row([(message_id(m), m) for m in [m for m in MESSAGES if m["expect"]]], check)


def test_a_notice_is_not_claimed(tmp_path, capsys):
    def check(m):
        unclaimed(m["text"], tmp_path, capsys)

    each_row([(message_id(m), m) for m in [m for m in MESSAGES if not m["expect"]]], check)


def test_the_missing_library_is_named_under_each_loader_alike(tmp_path, capsys):
    """dyld 2's "Reason: image not found" and dyld 4's list of paths tried read as the same cause."""
    two = next(m["text"] for m in MESSAGES if m["library"] == "dyld2" and "@rpath/libc10.dylib" in m["text"])
    four = two.replace(", 2): ", ", 0x0002): ").replace("Reason: image not found", "Reason: tried: "
                       "'/usr/local/lib/python3.8/site-packages/torch/lib/libc10.dylib' (no such file), "
                       "'/usr/lib/libc10.dylib' (no such file, not in dyld cache)")
    causes = []
    for text in (two, four):
        code, out = explain(text, tmp_path, capsys)
        causes.append([line for line in out.splitlines() if line.lstrip().startswith(("cause:", "hint:"))])
    assert causes[0] == causes[1] and len(causes[0]) == 2, causes


@pytest.mark.parametrize(("have", "need", "native"), [
    ("x86_64", "'arm64e' or 'arm64'", "arm64"),  # an Intel wheel in a native Apple silicon Python
    ("arm64", "'x86_64'", "x86_64"),  # an arm64 wheel in an x86_64 Python under Rosetta 2
])
def test_the_architecture_each_side_runs_is_said(have, need, native, tmp_path, capsys):
    path = "/Users/ana/venv/lib/python3.11/site-packages/tokenizers/tokenizers.cpython-311-darwin.so"
    text = (f"ImportError: dlopen({path}, 0x0002): tried: '{path}' (mach-o file, but is an incompatible architecture "
            f"(have '{have}', need {need}))")
    out = diagnoses(text, "dylib-wrong-arch", ["tokenizers", f"built for {have}", f"runs as {native}"], tmp_path, capsys)
    assert ("Rosetta 2 on an Apple silicon Mac) with an arm64 build" in out) == (native == "x86_64"), out


def test_a_library_found_in_another_architecture_is_not_said_missing(tmp_path, capsys):
    text = next(m["text"] for m in MESSAGES if "Homebrew's arm64 libomp" in m["source"])
    code, out = explain(text, tmp_path, capsys)
    assert ": dylib-wrong-arch" in out and ": system-lib-missing" not in out, out
    # the same load with every path missing is the missing library's
    missing = text.replace("mach-o file, but is an incompatible architecture (have 'arm64', need 'x86_64')", "no such file")
    diagnoses(missing, "system-lib-missing", ["libomp.dylib", "brew install libomp"], tmp_path, capsys)
