"""The read log (glmcompat.matrix.readlog.ReadLog): what a full run read, seen by the interpreter's audit hook and
the existence probes of glmcompat.matrix.readlog (no function of os replaced), never listed by hand -- each input with the state a start-up path
compares (glmcompat.matrix.locations.input_state)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from glmcompat.matrix import locations, readlog
from glmcompat.matrix.locations import DIRECTORY, LINK, LISTING, file_digest, input_state
from glmcompat.matrix.readlog import ReadLog, unlogged


def test_every_kind_of_read_is_logged_with_its_state(tmp_path: Path) -> None:
    read = tmp_path / "read.txt"
    read.write_text("a\n")
    low = tmp_path / "low.txt"
    low.write_text("b\n")
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "x").write_text("")
    with ReadLog() as log:
        read.read_text()  # Path.read_*
        os.close(os.open(low, os.O_RDONLY))  # os.open
        assert not readlog.exists(tmp_path / "absent.toml")  # an existence probe, nothing there
        assert readlog.is_dir(tmp_path / "listed")  # a probe of a directory
        sorted(os.listdir(listed))  # a listing
        assert readlog.is_dir(tmp_path)  # implied by the file read in it: left out (a resolved path probes each parent)
    recorded = log.inputs()
    assert recorded == {str(read): file_digest(str(read)), str(low): file_digest(str(low)),
                        str(tmp_path / "absent.toml"): "", str(listed): LISTING + locations.text_digest("x")}
    (listed / "y").write_text("")  # a name more: another listing
    assert input_state(str(listed), LISTING) != recorded[str(listed)]


def test_what_the_run_wrote_first_and_what_is_excluded_are_no_inputs(tmp_path: Path) -> None:
    (tmp_path / "there").mkdir()
    out = tmp_path / "out.txt"
    named = tmp_path / "named.txt"
    named.write_text("keyed by content elsewhere\n")
    with ReadLog(exclude=[str(named)]) as log:
        out.write_text("written by the run\n")
        out.read_text()  # read back: still its output
        named.read_text()
        (tmp_path / "made").mkdir()
        readlog.is_dir(tmp_path / "made")
        (tmp_path / "there").mkdir(exist_ok=True)  # there before the run: no output of it
        assert readlog.is_dir(tmp_path / "there")  # so probing it is an input
        Path(locations.__file__).read_text()  # the package's own code: the code fingerprint holds it
        readlog.exists(Path(sys.prefix, "pyvenv.cfg"))  # the interpreter's environment
        subprocess.run(["true"], check=True)  # another process: named, its reads unseen
        subprocess.run("true", shell=True, check=True)
    assert log.inputs() == {str(tmp_path / "there"): DIRECTORY}
    assert log.spawned == ["true", "sh"]


def test_probes_are_logged_only_while_a_log_is_active_and_no_function_of_os_is_replaced(tmp_path: Path) -> None:
    real = os.stat, os.lstat, set(os.supports_dir_fd), set(os.supports_follow_symlinks)
    (tmp_path / "f").write_text("")
    with ReadLog() as outer:
        assert (os.stat, os.lstat, set(os.supports_dir_fd), set(os.supports_follow_symlinks)) == real
        with ReadLog() as inner:  # nested: the outer log sees the reads
            assert not readlog.exists(tmp_path / "a")
        with unlogged():  # housekeeping
            readlog.exists(tmp_path / "b")
        (tmp_path / "c").exists()  # a stat not asked through readlog: no input (the code on a recorded path asks there)
        assert readlog.is_file(tmp_path / "f") and not readlog.is_dir(tmp_path / "f")
        assert readlog.lstat(tmp_path / "f").st_size == 0
    readlog.exists(tmp_path / "d")
    assert list(outer.read) == [str(tmp_path / "a"), str(tmp_path / "f")] and not inner.read


def test_input_state_tells_a_file_a_link_a_directory_and_nothing_apart(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    link = tmp_path / "link"
    link.symlink_to(f)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert input_state(str(f)) == file_digest(str(f))
    assert input_state(str(link)) == f"{LINK}{f}:{file_digest(str(f))}"  # a file replaced by a link is a change
    assert input_state(str(tmp_path)) == DIRECTORY
    assert input_state(str(tmp_path / "none")) == ""
    assert input_state(str(fifo)) is None  # never opened for reading, never waited on: no record
    with ReadLog() as log:
        readlog.exists(fifo)
    assert log.inputs() is None
