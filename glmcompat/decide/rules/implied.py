"""What an installer adds to a resolved-at-install file (pip, conda's pip section): the exact pins of what it
names, followed to a fixed point."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.matrix.rows import Fact, Kernel
from glmcompat.matrix.view import Facts
from glmcompat.model.findings import Finding
from glmcompat.model.names import canonicalize
from glmcompat.decide.rules.context import _ev


# Files an installer resolves (pip, conda's pip section): what they name pulls in its own exact pins.
RESOLVED_AT_INSTALL = frozenset({"requirements.txt", "environment.yml"})


Implied = tuple[str, str, tuple[tuple[str, str], ...]]  # (version, why, evidence) of a package the installer adds


def _exact_pins(facts: Facts, name: str, version: str) -> list[tuple[str, str, Fact]]:
    """(dependency, exact version, row) for each exact pin the METADATA of ``name`` ``version`` declares, as the
    matrix records it: an engine release's Requires-Dist (``vllm 0.18.0``: ``torch==2.10.0``), a torch-family
    release's torch pin (``torchvision 0.24.1``: ``torch==2.9.1``), a kernel row that records its wheel's exact
    ``Requires-Dist: torch==`` (``xformers 0.0.33.post2``: ``torch==2.9.1``)."""
    pub = Version(Version(version).public)
    out: list[tuple[str, str, Fact]] = []
    for row in facts.rows("release"):
        if row.package != name or Version(row.version) != pub or name == "torch":  # torch's: the torch-pins rule
            continue
        for parsed in row.requirements():
            specs = list(parsed.specifier)
            if len(specs) == 1 and specs[0].operator == "==" and not specs[0].version.endswith(".*"):
                out.append((canonicalize(parsed.name), specs[0].version, row))
    krow = facts.kernel(name, version) if name in facts.kernel_packages() else None
    if krow is not None and krow.evidence == "metadata" and f"Requires-Dist: torch=={krow.torch}" in krow.source:
        out.append(("torch", krow.torch, krow))  # a kernel whose METADATA pins its torch (xformers 0.0.33.post2)
    found = facts.family(name, version) if name in facts.family_packages() else None
    if found is not None:
        spec, frow = found
        if spec.startswith("==") and "*" not in spec and "," not in spec:
            out.append(("torch", spec[2:], frow))
    return out


def _known_releases(facts: Facts, name: str) -> set[Version]:
    """Every release of ``name`` the matrix holds a row for (torch builds, family pairs, kernels, engine releases)."""
    out: set[Version] = set()
    if name == "torch":
        out.update(Version(v) for t in facts.rows("torch") for v in t.versions)
    for f in facts.rows("family"):
        if f.package == name:
            out.update(Version(v) for v in f.pairs)
    for k in facts.rows("kernel"):
        if k.package == name:
            out.update(Version(v) for v in k.versions)
    out.update(Version(r.version) for r in facts.rows("release") if r.package == name)
    return out


def _index_pins(index_pins: Mapping[str, Sequence[str]], name: str, version: str) -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """(dependency, exact version, evidence) of the exact pins the METADATA of ``name`` ``version`` declares, as read
    from the index (``Lock.meta["index_pins"]``: ``name==version`` -> ``dep==X``)."""
    out: list[tuple[str, str, tuple[tuple[str, str], ...]]] = []
    for pin in index_pins.get(f"{name}=={version}", ()):
        dep, _, exact = pin.partition("==")
        if dep and exact:
            out.append((dep, exact, (("metadata", f"{name} {version}'s METADATA, read from the index: "
                                                   f"Requires-Dist: {dep}=={exact}"),)))
    return out


def resolve_named(packages: Mapping[str, str], unpinned: Mapping[str, str], facts: Facts,
                  index_pins: Mapping[str, Sequence[str]] | None = None,
                  ) -> tuple[dict[str, tuple[str, str, tuple[tuple[str, str], ...]]], dict[str, str]]:
    """What an installer puts in place of the packages a resolved-at-install file leaves open: (implied,
    still unpinned). ``implied`` maps a name to (version, why, evidence) for

    - a package the set does not pin but whose version another one's METADATA pins exactly (vLLM 0.18.0 pins
      torch==2.10.0; torchvision 0.24.1 pins torch==2.9.1), when what the file asks of it (if anything)
      admits that version: the installer has no other choice;
    - a wildcard pin (``torch==2.8.0.*``) that admits exactly one release the matrix knows: that release;
    - a range of torch closed above (``torch>=1.11,<=2.0.0``, ``torch~=2.6.0``): the newest
      release it admits, which the installer takes (a range open above is left to the warning: the index's newest
      may be newer than any the matrix knows).

    Pins are followed to a fixed point (an engine pins torchvision, which pins torch). A wildcard that admits
    several known releases judges the newest and stays unpinned (the installer picks). ``index_pins``: the exact pins
    the METADATA of packages the matrix has no row for declares, read from the index
    (:func:`glmcompat.ops.indexpins.with_index_pins`), taken like the rows'."""
    # e.g. a kernel release without a row whose wheel says Requires-Dist: torch==X
    implied: dict[str, tuple[str, str, tuple[tuple[str, str], ...]]] = {}
    have = dict(packages)
    left = dict(unpinned)
    changed = True
    while changed:
        changed = False
        for name, ver in sorted(have.items()):
            found = [(dep, exact, _ev(row)) for dep, exact, row in _exact_pins(facts, name, ver)]
            for dep, exact, ev in found + _index_pins(index_pins or {}, name, ver):
                if dep in have:
                    continue
                asked = left.get(dep)
                try:
                    admits = not asked or SpecifierSet(asked).contains(exact, prereleases=True)
                except ValueError:
                    admits = False
                if not admits:
                    continue  # the installer cannot satisfy both: it fails, and nothing installs
                have[dep] = exact
                left.pop(dep, None)
                implied[dep] = (exact, f"{name} {ver} pins {dep}=={exact} exactly", ev)
                changed = True
        if changed:
            continue  # every exact pin first: a range gives way to what a package in the set pins
        for dep, asked in sorted(left.items()):
            try:
                specs = list(SpecifierSet(asked)) if asked else []
            except ValueError:
                continue
            wildcard = len(specs) == 1 and specs[0].operator == "==" and specs[0].version.endswith(".*")
            if dep in have or not specs or not (wildcard or dep in _EVERY_RELEASE):
                continue
            known = _known_releases(facts, dep)
            match = sorted(v for v in known if all(s.contains(v, prereleases=False) for s in specs))
            if not match or not wildcard and match[-1] == max(v for v in known if not v.is_prerelease):
                continue  # a range open above: the installer takes the index's newest, which the matrix may not know
            have[dep] = str(match[-1])
            ev = (("metadata", f"{dep}{asked} admits {', '.join(map(str, match))} of the releases the matrix knows"),)
            what = "a wildcard pin" if wildcard else "a range, closed above,"
            implied[dep] = (str(match[-1]), f"{dep}{asked} is {what} of {dep} {match[-1]}"
                            + ("" if len(match) == 1 else " (the newest it admits, which the installer takes)"), ev)
            if len(match) == 1:
                del left[dep]
            changed = True
    return implied, left


# Packages whose every release the matrix holds a row for (torch's [[torch]] rows): of a range closed above
# (``torch<2.6``, ``torch~=2.6.0``) the newest release it admits is what an installer takes, and the matrix knows it
_EVERY_RELEASE = frozenset({"torch"})


def unsatisfiable(packages: Mapping[str, str], implied: Mapping[str, Implied], facts: Facts,
                  index_pins: Mapping[str, Sequence[str]] | None = None,
                  sources: Mapping[str, str] | None = None) -> list[Finding]:
    """The exact pins of a resolved-at-install file that no installer can satisfy together: a package whose METADATA
    pins a dependency exactly (the matrix's record of it, or the index's, as :func:`resolve_named` reads them) next to
    the file's own exact pin of that dependency at another version. pip's resolver stops there ("these package
    versions have conflicting dependencies") and nothing installs, whatever the extension would do at import. A
    package built from source or taken from a URL or path (``sources``), and one the installer adds (``implied``), are
    left out: their METADATA is not the index's, and what is added was consistent by construction."""
    # e.g. a pip freeze with torch==2.3.0 next to xformers==0.0.28.post1, whose METADATA pins torch==2.4.1
    out: list[Finding] = []
    srcs = sources or {}
    for name, ver in sorted(packages.items()):
        if name in implied or srcs.get(name) is not None:
            continue
        # a torch pin the family rule (torchvision, torchaudio) or the abi rule (a kernel whose mismatch is an error)
        # already makes an error is not said twice
        # Only an exact torch pin of a compiled package (its kernel row, or the index's METADATA): an engine's pins on
        # other packages that the set departs from are the override rule's warning (a stack may install an engine
        # without its dependency checks on purpose)
        found = [(dep, exact, _ev(row)) for dep, exact, row in _exact_pins(facts, name, ver)
                 if dep == "torch" and isinstance(row, Kernel) and row.on_mismatch != "error"]
        seen: set[str] = set()
        for dep, exact, ev in found + [p for p in _index_pins(index_pins or {}, name, ver) if p[0] == "torch"]:
            have = packages.get(dep)
            if have is None or dep in implied or dep in seen or srcs.get(dep) is not None:
                continue
            try:
                admits = SpecifierSet(f"=={exact}").contains(have, prereleases=True)
            except ValueError:
                continue
            if admits:
                continue
            seen.add(dep)
            out.append(Finding(
                rule="requires", severity="error", packages=((name, ver), (dep, have)),
                message=(f"{name} {ver} pins {dep}=={exact} exactly (its METADATA), and the file pins {dep} {have}: "
                         "no installer can satisfy both, so nothing installs"),
                evidence=ev,
                remedy=f"pin {dep}=={exact}, or a {name} release whose METADATA admits {dep} {Version(have).public}"))
    return out
