"""The process's bounded memos (glmcompat/model/memo.py): at most ``bound`` entries, the oldest dropped first."""

from __future__ import annotations

import threading

import pytest

from glmcompat.model.memo import BoundedMemo


def test_the_oldest_entry_goes_first_and_the_bound_holds() -> None:
    m: BoundedMemo[int, str] = BoundedMemo(3)
    for i in range(10):
        assert m.keep(i, str(i)) == str(i)
        assert len(m) == min(i + 1, 3)
    assert dict(m) == {7: "7", 8: "8", 9: "9"}
    m.keep(7, "again")  # kept again: now the newest, so 8 goes next
    m.keep(10, "10")
    assert list(m) == [9, 7, 10] and m.get(7) == "again" and m.get(8) is None


def test_writers_from_many_threads_never_pass_the_bound() -> None:
    m: BoundedMemo[tuple[int, int], int] = BoundedMemo(5)
    seen: list[int] = []
    go = threading.Barrier(8)

    def write(t: int) -> None:
        go.wait()
        for i in range(2000):
            m.keep((t, i), i)
            seen.append(len(m))

    threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(m) == 5 and max(seen) <= 5


def test_a_memo_keeps_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least one"):
        BoundedMemo(0)
