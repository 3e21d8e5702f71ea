"""The engines' and transformers' version checks (tests/fixtures/raise_sites/versioncheck-family.toml): each message, as
the library formats it, is claimed by its signature and the diagnosis repeats the package and the versions the message
names (the log's numbers, beside what the matrix knows); a line that names no failure stays unclaimed. And the package
whose source build failed is named from every line pip and uv print about it, wherever the failure's own line names
none (a torch cpp_extension's "Error compiling objects for extension" first)."""

from __future__ import annotations


import pytest

from tests.decide.explaining import each_row, message_id, table, diagnoses, unclaimed

MESSAGES = table("versioncheck-family.toml")



def test_the_table_holds_each_library_with_its_source() -> None:
    assert {"sglang", "transformers", "accelerate", "pip"} <= {m["library"] for m in MESSAGES}
    assert all(m["source"] and m["text"] for m in MESSAGES)


def test_each_check_is_claimed_with_the_versions_it_names(tmp_path, capsys):
    def check(m):
        diagnoses(m["text"], m["expect"], m["words"], tmp_path, capsys)

    each_row([(message_id(m, 60), m) for m in [m for m in MESSAGES if m["expect"]]], check)


def test_a_line_that_names_no_failure_is_not_claimed(tmp_path, capsys):
    def check(m):
        unclaimed(m["text"], tmp_path, capsys)

    each_row([(message_id(m, 60), m) for m in [m for m in MESSAGES if not m["expect"]]], check)


# the package being built, as pip (23 to 25) and uv print it after a failed build whose first line names none; each
# line is pip's or uv's format string filled (pip-25.3 wheel: operations/build/wheel.py:36, wheel_builder.py:197 and
# :257, exceptions.py:204 and :891, commands/install.py of pip-23.2.1:430, wheel_builder.py:283; uv 0.13.9's binary)
NAMING = [
    ("ERROR: Failed building wheel for flash-attn", "flash-attn"),
    ("  Building wheel for flash-attn (setup.py) ... error", "flash-attn"),
    ("  Running setup.py install for flash-attn ... error", "flash-attn"),
    ("  Building wheel for flash-attn failed: [Errno 2] No such file or directory", "flash-attn"),
    ("Failed to build flash-attn", "flash-attn"),
    ("ERROR: Failed to build 'flash-attn' when getting requirements to build wheel", "flash-attn"),
    ("ERROR: Failed to build installable wheels for some pyproject.toml based projects (flash-attn)", "flash-attn"),
    ("ERROR: Could not build wheels for flash-attn, which is required to install pyproject.toml-based projects",
     "flash-attn"),
    ("  Running setup.py clean for flash_attn", "flash_attn (flash-attn)"),
    ("  × Failed to build `flash-attn==2.5.8`", "flash-attn 2.5.8"),
    ("error: Failed to download and build `flash-attn==2.5.8`", "flash-attn 2.5.8"),
    ("      g++ -pthread -shared /tmp/pip-install-4bsh3dfa/flash-attn_9d8c0d3c3f0f4e7c8f9e2b1a3c4d5e6f/build/temp.o",
     "flash-attn"),
]


@pytest.mark.parametrize(("line", "named"), NAMING, ids=[n[0][:50] for n in NAMING])
def test_the_package_being_built_is_named_from_pips_and_uvs_lines(line, named, tmp_path, capsys):
    text = "RuntimeError: Error compiling objects for extension\n" + line
    out = diagnoses(text, "source-build-failed", [], tmp_path, capsys)
    assert f"of {named}" in out, out
