"""uv's habits at the command line: ``glmcompat help [COMMAND]`` (uv's ``uv help``), a "did you mean" for a
mistyped command, option or choice, and no prefix abbreviations of options (``--targ`` is not ``--target``:
a script relying on one would break the day a longer option is added).

In-process calls to :func:`glmcompat.cli.main`; real processes where the start-up fast path of ``check``
could answer before argparse runs.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from glmcompat.cli import COMMANDS, main
from glmcompat.cli.commands._common import suggest

from tests.cli import test_fastlock as _lf
from tests.conftest import LOCKS, ROOT, run_cli

# the fixtures of tests/cli/test_fastlock.py: its local index, matrix snapshot, recorded resolution and recorded no-op
index, matrix, facts, src, uv_cache, refs, env, recorded = (_lf.index, _lf.matrix, _lf.facts, _lf.src, _lf.uv_cache,
                                                            _lf.refs, _lf.env, _lf.recorded)
LOCK = str(LOCKS / "unpinned-torch" / "uv.lock")
SAFE = str(ROOT / "locks" / "glm5-sglang-0.5.9" / "sm120" / "requirements.txt")
MATRIX_ACTIONS = ("validate", "show", "schema", "probe", "refresh", "audit")
EVERY = ([(n, a) if a else (n,) for n in COMMANDS for a in (MATRIX_ACTIONS if n == "matrix" else ("",))]
         + [("pip", "install"), ("pip", "constraints")])


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def _help(*argv: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return buf.getvalue()


# -- glmcompat help [COMMAND] ----------------------------------------------------------------------


def test_help_alone_is_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = call(capsys, "help")
    assert (rc, err) == (0, "")
    assert call(capsys, "--help") == (0, out, "")
    for name in [*COMMANDS, "help"]:
        assert re.search(rf"^  {name} +\S", out, re.M), name
    assert "-qq" in out and "--color WHEN" in out and "glmcompat help COMMAND" in out


@pytest.mark.parametrize("argv", EVERY, ids=" ".join)
def test_help_command_is_the_commands_own_help(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    rc, out, err = call(capsys, "help", *argv)
    assert (rc, err) == (0, "")
    assert out == _help(*argv) and out.startswith(f"usage: glmcompat {' '.join(argv)} ")


def test_help_help(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = call(capsys, "help", "help")
    assert rc == 0 and out.startswith("usage: glmcompat help [COMMAND")


@pytest.mark.parametrize("argv", [("help", "chek"), ("chek", LOCK, "--target", "sm120")])
def test_a_mistyped_command_gets_did_you_mean(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    rc, out, err = call(capsys, *argv)
    assert (rc, out) == (2, "")
    assert err == "error: unknown command 'chek' (did you mean 'check'?)\n"


@pytest.mark.parametrize("typo,meant", [("lcok", "lock"), ("targts", "targets"), ("verfy", "verify"),
                                        ("upgarde", "upgrade"), ("matirx", "matrix"), ("hlep", "help")])
def test_command_suggestions(capsys: pytest.CaptureFixture[str], typo: str, meant: str) -> None:
    rc, _, err = call(capsys, typo)
    assert rc == 2 and f"(did you mean '{meant}'?)" in err and err.count("\n") == 1


def test_a_command_like_nothing_points_at_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = call(capsys, "xyzzy")
    assert (rc, out) == (2, "") and err == "error: unknown command 'xyzzy'; see 'glmcompat --help'\n"


def test_help_of_a_mistyped_matrix_action(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = call(capsys, "help", "matrix", "valdate")
    assert rc == 2 and "invalid choice: 'valdate'" in err and "(did you mean 'validate'?)" in err


# -- no prefix abbreviations; "did you mean" for options ---------------------------------------------


@pytest.mark.parametrize("argv", [("check", LOCK, "--targ", "sm120"), ("check", LOCK, "--targ=sm120"),
                                  ("lock", "--targ", "sm120"), ("upgrade", "--targ", "sm120"),
                                  ("arch", "sgl-kernel==0.3.21", "--targ", "sm120"),
                                  ("verify", "--targ", "sm120"), ("pip", "install", "x", "--targ", "sm120")],
                         ids=lambda a: " ".join(a[:1]) + (" =" if "--targ=sm120" in a else ""))
def test_an_abbreviated_option_is_refused_with_the_full_one_suggested(capsys: pytest.CaptureFixture[str],
                                                                      argv: tuple[str, ...]) -> None:
    rc, out, err = call(capsys, *argv)
    assert (rc, out) == (2, "")
    assert "unexpected argument '--targ' (did you mean '--target'?)" in err and err.count("\n") == 1, err
    assert err.startswith(f"error: glmcompat {argv[0]}")


@pytest.mark.parametrize("argv", EVERY, ids=" ".join)
def test_no_parser_accepts_a_prefix(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    """Every parser the commands build: its longest option, cut short by two letters, is refused (argparse's
    default would take it as the option)."""
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", _help(*argv))) - {"--help"}
    longest = max(sorted(options), key=len)
    cut = longest[:-2]
    assert cut not in options
    rc, out, err = call(capsys, *argv, cut)
    assert (rc, out) == (2, "") and f"unexpected argument '{cut}' (did you mean '{longest}'?)" in err, err


def test_the_check_fast_path_refuses_an_abbreviation_too(tmp_path: Path) -> None:
    """The warm verdict of ``--target`` is cached; ``--targ`` still gets the usage error, not that verdict."""
    cache = {"GLMCOMPAT_CACHE_DIR": str(tmp_path)}
    for _ in range(2):
        assert run_cli("check", SAFE, "--target", "sm120", env=cache).returncode == 0
    r = run_cli("check", SAFE, "--targ", "sm120", env=cache)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == "error: glmcompat check: unexpected argument '--targ' (did you mean '--target'?)\n"


@pytest.mark.parametrize("argv,word,meant", [
    (("check", LOCK, "--target", "sm120", "--jsn"), "--jsn", "--json"),
    (("check", LOCK, "--target", "sm120", "--colr=never"), "--colr", "--color"),
    (("targets", "--quite"), "--quite", "--quiet"),
    (("matrix", "validate", "--verbos"), "--verbos", "--verbose"),
])
def test_a_mistyped_option_gets_did_you_mean(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], word: str,
                                             meant: str) -> None:
    rc, out, err = call(capsys, *argv)
    assert (rc, out) == (2, "") and f"unexpected argument '{word}' (did you mean '{meant}'?)" in err
    assert err.count("\n") == 1


def test_an_option_like_nothing_points_at_the_commands_help(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = call(capsys, "check", LOCK, "--target", "sm120", "--zzzzz")
    assert rc == 2 and err == "error: glmcompat check: unexpected argument '--zzzzz'; see 'glmcompat check --help'\n"


@pytest.mark.parametrize("argv,meant", [(("check", LOCK, "--target", "sm120", "--color", "nevr"), "never"),
                                        (("matrix", "valdate"), "validate")])
def test_a_mistyped_choice_gets_did_you_mean(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                             meant: str) -> None:
    rc, _, err = call(capsys, *argv)
    assert rc == 2 and "invalid choice" in err and f"(did you mean '{meant}'?)" in err and err.count("\n") == 1


def test_values_and_short_clusters_are_not_unknown_options(capsys: pytest.CaptureFixture[str]) -> None:
    """``-qq`` (a cluster of a known flag), a negative number and ``-`` are what argparse takes them for."""
    rc, out, err = call(capsys, "targets", "-qq")
    assert rc == 0 and "unexpected" not in err
    rc, _, err = call(capsys, "explain", "-", "-q")
    assert "unexpected argument" not in err


def test_suggest() -> None:
    assert suggest("--targ", ["--target", "--against"]) == "--target"  # the only option it begins
    assert suggest("--t", ["--target", "--torch"]) is None  # two begin with it, neither is close
    assert suggest("chek", ["check", "lock"]) == "check"
    assert suggest("zzz", ["check", "lock"]) is None


# -- the shared options before lock (the rest: tests/cli/test_habits.py) ----------------------------

def test_shared_options_before_lock_keep_its_warm_no_op(tmp_path: Path, recorded: Any) -> None:
    """`glmcompat --color never -q lock ...` (offline, the real uv on the local index of tests/cli/test_fastlock.py)
    prints what `lock ... --color never -q` does, and its second run is answered by the start-up path (no new record,
    the same bytes)."""
    _out, argv, _full = recorded
    after = run_cli(*argv, "--color", "never", "-q")
    assert after.returncode == 0, after.stderr
    first = run_cli("--color", "never", "-q", *argv)
    n = len(_lf.records())
    again = run_cli("--color", "never", "-q", *argv)
    assert (first.returncode, first.stdout, first.stderr) == (again.returncode, again.stdout, again.stderr) == (
        after.returncode, after.stdout, after.stderr)
    assert len(_lf.records()) == n >= 2
