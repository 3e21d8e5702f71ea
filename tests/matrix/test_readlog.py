"""The read log (glmcompat.matrix.readlog.ReadLog): what a full run read, seen by the interpreter's audit hook and
the stat wrapper, never listed by hand -- each input with the state a start-up path
compares (glmcompat.matrix.locations.input_state)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from glmcompat.matrix import locations
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
        assert not (tmp_path / "absent.toml").exists()  # an existence probe, nothing there
        assert os.path.isdir(tmp_path / "listed")  # a probe of a directory
        sorted(os.listdir(listed))  # a listing
        assert tmp_path.is_dir()  # implied by the file read in it: left out (a resolved path probes each parent)
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
        os.path.isdir(tmp_path / "made")
        (tmp_path / "there").mkdir(exist_ok=True)  # there before the run: no output of it
        Path(locations.__file__).read_text()  # the package's own code: the code fingerprint holds it
        Path(sys.prefix, "pyvenv.cfg").exists()  # the interpreter's environment
        subprocess.run(["true"], check=True)  # another process: named, its reads unseen
        subprocess.run("true", shell=True, check=True)
    assert log.inputs() == {str(tmp_path / "there"): DIRECTORY}
    assert log.spawned == ["true", "sh"]


def test_the_stat_wrapper_is_in_place_only_while_a_log_is_active(tmp_path: Path) -> None:
    real = os.stat, os.lstat
    with ReadLog() as outer:
        assert os.stat is not real[0]
        with ReadLog() as inner:  # nested: the outer log sees the reads
            (tmp_path / "a").exists()
        with unlogged():  # housekeeping
            (tmp_path / "b").exists()
        assert os.stat in os.supports_follow_symlinks and os.stat in os.supports_dir_fd  # as the real one
    assert (os.stat, os.lstat) == real
    assert all(f.__name__ != "probe" for f in os.supports_dir_fd | os.supports_follow_symlinks)
    (tmp_path / "c").exists()
    assert list(outer.read) == [str(tmp_path / "a")] and not inner.read


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
        fifo.exists()
    assert log.inputs() is None
