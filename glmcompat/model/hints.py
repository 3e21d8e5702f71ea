"""Hints as data: what to change, from what to what, on which index, and why -- and the one formatter that turns them
into text.

A :class:`Hint` is one change of a remedy (``pin`` a package at another version, ``remove`` it, ``replace`` it by a
renamed project, ``keep`` a pin an engine would change, ``override`` an engine's pin) or one refusal (``blocked``: no safe
set keeps the user's pin; ``refused``: an installer's plan was not carried out). A :class:`Remedy` is the one set a run
proposes: every change, the pins of the whole set and the command that writes them. ``check``, ``lock``, ``pip``,
``upgrade``, the pre-commit hook and ``explain`` print hints through :func:`render_hint` and :func:`render_remedy`
only, so the same change reads the same everywhere, and a run never prints two remedies that pull apart.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

KINDS = ("pin", "remove", "replace", "keep", "override", "blocked", "refused")


@dataclass(frozen=True, slots=True)
class Hint:
    """One change (or refusal) of a remedy. ``from_``/``to``: the versions (``""``: absent, before or after);
    ``replaced_by``: the project that takes ``package``'s place (kind ``replace``); ``index``: the index the new pin
    comes from, where it is not the default one (``""``: the default); ``reason``: why, one clause, no trailing dot."""

    kind: str
    package: str
    from_: str = ""
    to: str = ""
    index: str = ""
    reason: str = ""
    replaced_by: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"hint kind {self.kind!r} is not one of {', '.join(KINDS)}")

    @property
    def pin(self) -> str:
        """The requirement line this hint asks for (``""`` for a removal or refusal)."""
        name = self.replaced_by or self.package
        return f"{name}=={self.to}" if self.to else ""

    def to_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "package": self.package, "from": self.from_ or None, "to": self.to or None,
                "index": self.index or None, "reason": self.reason, "replaced_by": self.replaced_by or None}


@dataclass(frozen=True, slots=True)
class Remedy:
    """The one remedy of a run: ``safe_set`` (name -> version; None for a package removed or replaced by another
    name), ``changes`` (a :class:`Hint` per change, in the order they matter), ``indexes`` (name -> index URL where
    the pin is not on the default index), ``command`` (the one command that writes the pins, ``""`` when the user
    edits the file), ``where`` (the file each changed pin lives in: an ``-r`` include, not the top file blindly) and
    ``proved`` (what was checked before printing: every target and environment judged, and the index)."""

    safe_set: Mapping[str, str | None]
    changes: tuple[Hint, ...]
    indexes: Mapping[str, str] = field(default_factory=dict)
    command: str = ""
    where: Mapping[str, str] = field(default_factory=dict)
    proved: str = ""

    @property
    def pins(self) -> list[str]:
        """The requirement lines of the safe set (removed packages left out), sorted."""
        return [f"{n}=={v}" for n, v in sorted(self.safe_set.items()) if v is not None]


def render_hint(h: Hint) -> str:
    """One hint as one line (no ``hint:`` prefix): what changes, from what to what, on which index, and why."""
    on = f" (from {h.index})" if h.index else ""
    why = f": {h.reason}" if h.reason else ""
    if h.kind == "pin":
        move = f"{h.from_} -> {h.to}" if h.from_ else f"add {h.to}"
        return f"{h.package} {move}{on}{why}"
    if h.kind == "remove":
        return f"{h.package} {h.from_} -> removed{why}"
    if h.kind == "replace":
        return f"{h.package} {h.from_} -> {h.replaced_by} {h.to}{on}{why}"
    if h.kind == "keep":
        return f"{h.package} {h.from_} kept{why}"
    if h.kind == "override":
        return f"{h.package} {h.to} overrides an engine's pin{why}"
    if h.kind == "blocked":
        least = f"; its least change: {h.package}=={h.to}{on}" if h.to else ""
        return f"your pin {h.package}=={h.from_} blocks every safe set{why}{least}"
    return f"refused: {h.package}{' ' + h.to if h.to else ''}{why}"  # refused


def render_remedy(r: Remedy, *, target: str = "") -> Iterator[str]:
    """The remedy as lines (no line breaks): the set of pins (or the command that writes them), then one line per
    change saying why. Every caller prints these lines as they are, prefixed as it likes."""
    for_ = f" for {target}" if target else ""
    changed = [h for h in r.changes if h.kind in ("pin", "remove", "replace")]
    if not changed and not any(h.kind == "blocked" for h in r.changes):
        return
    if changed:
        pins = " ".join(h.pin for h in changed if h.pin)
        removed = [h.package for h in changed if h.kind in ("remove", "replace")]
        head = f"the nearest safe set{for_}: {pins}" if pins else f"the nearest safe set{for_}"
        if removed:
            head += f" (remove {', '.join(removed)})"
        yield head + (f" [{r.proved}]" if r.proved else "")
        if r.command:
            yield f"  apply: {r.command}"
    for h in r.changes:
        where = r.where.get(h.package, "")
        yield f"  - {render_hint(h)}" + (f" [in {where}]" if where and h.kind != "blocked" else "")


__all__ = ["KINDS", "Hint", "Remedy", "render_hint", "render_remedy"]
