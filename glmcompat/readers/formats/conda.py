"""conda environment files (kind ``environment.yml``): conda packages and the ``pip:`` section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats.common import Format, Entry, Lock, LockMeta, checked_spec, error, first_line
from glmcompat.readers.formats.requirements import ReqFile, RequirementsReader

Scalar = tuple[int, str]  # (line, value) of a YAML scalar
_CONDA_KEYS = ("name", "channels", "dependencies", "prefix", "variables")
_CONDA_LISTS = ("channels", "dependencies")
MAX_CONDA = 2 << 20  # characters of a conda environment file (such files are a few KB; PyYAML reads ~1 MB a second)
MAX_CONDA_DEPTH = 8  # nesting of YAML collections (a conda file nests three deep: dependencies, - pip:, its list)
_NULL = "tag:yaml.org,2002:null"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def conda_document(path: Path, text: str) -> dict[str, Any]:
    """Read a conda environment file with PyYAML's safe loader (libyaml's where PyYAML has it). Anchors and aliases
    are refused (a few lines of aliases can stand for more nodes than memory holds), and so is any shape a conda
    environment file does not have; each refusal is a :class:`LockFormatError` naming the line. Returns
    {key: (line, str) | [(line, str) | {"pip": [(line, str)] | None}] | {var: (line, str)} | None}: each scalar
    with its line and its text as written (no type conversion: ``- 1.10`` stays ``1.10``)."""
    import yaml  # lazy: PyYAML (~45 ms) only for conda files

    if len(text) > MAX_CONDA:
        raise error(f"{len(text)} characters is more than a conda environment file may hold ({MAX_CONDA >> 20} "
                     "MiB)", path)
    for n, raw in enumerate(text.split("\n"), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip(" \t"))] and raw.strip():
            raise error("a tab in the indentation (YAML allows spaces only)", path, n)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        depth = 0
        for event in yaml.parse(text, Loader=loader):
            line = event.start_mark.line + 1 if event.start_mark is not None else None
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise error("a YAML anchor or alias (refused: conda environment files need none, and aliases can "
                             "expand without bound)", path, line)
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_CONDA_DEPTH:
                    raise error(f"YAML nested deeper than {MAX_CONDA_DEPTH}", path, line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = ", ".join(x for x in (e.context, e.problem) if x)
        raise error(f"invalid YAML: {what}", path, mark.line + 1 if mark is not None else None) from None
    except yaml.YAMLError as e:
        raise error(f"invalid YAML: {first_line(e)}", path) from None
    return _CondaNodes(path, text).document(root)


class _CondaNodes:
    """The composed YAML of a conda environment file as :func:`conda_document`'s plain values."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.split("\n")

    def source(self, node: Any) -> str:
        """The text of ``node`` as written on its first line."""
        m = node.start_mark
        return self.lines[m.line][m.column:].strip() if m.line < len(self.lines) else ""

    def unsupported(self, node: Any, where: str, expected: str) -> LockFormatError:
        return error(f"unsupported YAML in {where} ({expected} is expected): {self.source(node)!r}", self.path,
                      node.start_mark.line + 1)

    def scalar(self, node: Any, where: str, expected: str) -> Scalar:
        import yaml  # lazy: PyYAML (~45 ms) only for conda files

        line = node.start_mark.line + 1
        if not isinstance(node, yaml.ScalarNode):
            raise self.unsupported(node, where, expected)
        if node.tag == _NULL and node.value in ("", "~"):
            raise error(f"an empty value in {where}", self.path, line)
        if node.end_mark.line != node.start_mark.line and not (node.end_mark.line == node.start_mark.line + 1
                                                                 and node.end_mark.column == 0):
            raise error(f"a value over several lines in {where}: {' '.join(node.value.split())!r}", self.path, line)
        if _CONTROL.search(node.value):
            raise error(f"a control character in {node.value!r}", self.path, line)
        return line, node.value

    def document(self, root: Any) -> dict[str, Any]:
        import yaml  # lazy: PyYAML (~45 ms) only for conda files

        doc: dict[str, Any] = {}
        if root is None:
            return doc
        if not isinstance(root, yaml.MappingNode):
            raise error(f"expected 'key:' at the top level, not {self.source(root)!r}", self.path,
                         root.start_mark.line + 1)
        for knode, vnode in root.value:
            line = knode.start_mark.line + 1
            if not isinstance(knode, yaml.ScalarNode):
                raise error(f"expected 'key:' at the top level, not {self.source(knode)!r}", self.path, line)
            key = knode.value
            if key not in _CONDA_KEYS:
                raise error(f"unsupported key {key!r} (known: {', '.join(_CONDA_KEYS)})", self.path, line)
            if key in doc:
                raise error(f"duplicate key {key!r}", self.path, line)
            if isinstance(vnode, yaml.ScalarNode) and vnode.tag == _NULL and vnode.value in ("", "~", "null"):
                doc[key] = None
            elif key in _CONDA_LISTS:
                doc[key] = self.items(key, vnode)
            elif key == "variables":
                if not isinstance(vnode, yaml.MappingNode):
                    raise error(f"'variables' must be a mapping, not {self.source(vnode)!r}", self.path,
                                 vnode.start_mark.line + 1)
                doc[key] = {self.scalar(k, "variables", "a name")[1]: self.scalar(v, "variables", "a value")
                            for k, v in vnode.value}
            else:
                doc[key] = self.scalar(vnode, repr(key), "a value")
        return doc

    def items(self, key: str, node: Any) -> list[Any]:
        import yaml  # lazy: PyYAML (~45 ms) only for conda files

        if not isinstance(node, yaml.SequenceNode):
            raise error(f"{key!r} must be a list, not {self.source(node)!r}", self.path, node.start_mark.line + 1)
        out: list[Any] = []
        for item in node.value:
            if key == "dependencies" and isinstance(item, yaml.MappingNode) and len(item.value) == 1 \
                    and isinstance(item.value[0][0], yaml.ScalarNode) and item.value[0][0].value == "pip":
                if any(isinstance(x, dict) for x in out):
                    raise error("a second '- pip:' section", self.path, item.start_mark.line + 1)
                pip = item.value[0][1]
                if isinstance(pip, yaml.ScalarNode) and pip.tag == _NULL:
                    out.append({"pip": None})
                elif isinstance(pip, yaml.SequenceNode):
                    out.append({"pip": [self.scalar(x, "'- pip:'", "a requirement line") for x in pip.value] or None})
                else:
                    raise self.unsupported(pip, "'- pip:'", "a list of requirement lines")
                continue
            expected = "a package spec or a '- pip:' list" if key == "dependencies" else "a channel name"
            out.append(self.scalar(item, repr(key), expected))
        return out


_CONDA_SPEC = re.compile(r"^(?:(?P<channel>[^\s:]+)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9._-]*)\s*(?P<rest>.*)$")
_CONDA_NAMES = {"pytorch": "torch", "pytorch-gpu": "torch"}  # pytorch-gpu: conda-forge's CUDA pytorch, same version
_CUDA_PACKAGES = ("pytorch-cuda", "cuda-version", "cudatoolkit")
_TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


@dataclass(frozen=True)
class _CondaSpec:
    name: str  # canonical, conda's pytorch as torch
    version: str | None
    spec: str | None
    raw_version: str  # the version as written after "=", "==" or a space ("" for a range or none)
    build: str
    channel: str = ""  # ``conda-forge::pytorch``: conda-forge


def _conda_spec(path: Path, n: int, s: str) -> _CondaSpec:
    """One conda MatchSpec of the simple kinds: ``name``, ``name=X[=build]``, ``name==X[=build]``,
    ``name X [build]``, ``name>=X,<Y [build]``, ``channel::name...``, and the bracket form
    (``name[version='>=X', build=*cuda*]``, beside or instead of the version). conda's ``=X`` means ``X.*``: exact
    only with three or more components."""
    m = _CONDA_SPEC.match(s.strip())
    rest = m.group("rest").strip() if m else ""
    if m and "[" in rest:
        rest = _bracketed(path, n, s, rest)
    if not m or "[" in rest or "|" in rest:
        raise error(f"unsupported conda package spec {s!r}", path, n)
    name = canonicalize_name(_CONDA_NAMES.get(m.group("name").lower(), m.group("name")))
    channel = (m.group("channel") or "").lower() or ("conda-forge" if m.group("name").lower() == "pytorch-gpu" else "")
    if not rest:
        return _CondaSpec(name, None, "", "", "", channel)
    if rest[0] in "<>!~":
        parts = rest.split()
        build = ""
        if len(parts) > 1 and not re.match(r"[<>=!~,]", parts[-1]) and not parts[-2].endswith(","):
            build, rest = parts[-1], " ".join(parts[:-1])  # ``pytorch>=2.1 *cuda*``: the build after the range
        try:
            return _CondaSpec(name, None, str(checked_spec(SpecifierSet(rest.replace(" ", "")))), "", build, channel)
        except ValueError:
            raise error(f"unsupported conda version {rest!r} in {s!r}", path, n) from None
    exact = rest.startswith("==")
    ver, _, build = (rest[2:] if exact else rest.lstrip("=")).replace(" ", "=", 1).partition("=")
    ver = ver.strip()
    if ver and not ver.strip("*") and re.fullmatch(r"[0-9A-Za-z_.*+-]*", build):
        return _CondaSpec(name, None, "", "", build.strip(), channel)  # ``pytorch=*=*cuda*``: any version
    if not ver or not re.fullmatch(r"[0-9A-Za-z_.+*!-]+", ver) or not re.fullmatch(r"[0-9A-Za-z_.*+-]*", build):
        raise error(f"unsupported conda package spec {s!r}", path, n)
    return _CondaSpec(name, *_conda_version(ver, exact), ver, build.strip(), channel)


def _bracketed(path: Path, n: int, s: str, rest: str) -> str:
    """The ``version build`` text of a MatchSpec whose keys are in brackets (``>=2.1[build=*cuda*]``,
    ``[version='>=2.1', build_number=3]``); keys other than version and build do not choose the release."""
    head, _, inner = rest.partition("[")
    if not inner.endswith("]"):
        raise error(f"unsupported conda package spec {s!r}", path, n)
    keys: dict[str, str] = {}
    for item in inner[:-1].split(","):
        key, eq, value = item.partition("=")
        if not eq:
            raise error(f"unsupported conda package spec {s!r}", path, n)
        keys[key.strip()] = value.strip().strip("'\"")
    version = head.strip() or keys.get("version", "")
    build = keys.get("build", "")
    if build and not version:
        version = "*"
    return f"{version} {build}".strip()


def _conda_version(ver: str, exact: bool) -> tuple[str | None, str | None]:
    """(version, spec) of a conda version: exact for ``==X`` or three components, else ``==X.*``;
    a version PEP 440 cannot read becomes ``===X``."""
    if "*" not in ver and (exact or ver.count(".") >= 2):
        try:
            Version(ver)
            return ver, None
        except ValueError:
            return None, f"==={ver}"
    spec = "==" + (ver if ver.endswith("*") else ver + ".*")
    try:
        return None, str(checked_spec(SpecifierSet(spec)))
    except ValueError:
        return None, f"==={ver}"


def _cuda_of(raw: str) -> str | None:
    m = re.match(r"(\d+)\.(\d+)", raw)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _build_cuda(build: str) -> str | None:
    """The CUDA a conda build string names: ``py3.11_cuda12.1_cudnn8_0`` -> 12.1, ``cuda126_generic_...`` -> 12.6."""
    m = re.search(r"cuda(\d+)\.(\d+)", build) or re.search(r"cuda(\d{1,2})(\d)(?!\d)", build)
    return f"{m.group(1)}.{m.group(2)}" if m else None


# conda-forge's own pytorch builds (conda-forge/pytorch-cpu-feedstock) start their build string with the CUDA they
# were built with, ``cuda126_generic_py39_h91e4b60_208``, ``cuda129_mkl_py312_...``, ``cpu_generic_...``; the pytorch
# channel's name the Python first, ``py3.11_cuda12.1_cudnn8.9.2_0``
_FORGE_BUILD = re.compile(r"^cuda\d{3}(_|\*|$)")


def _torch_label(version: str, build: str, cuda: str | None, cpu: bool, forge: bool = False) -> str:
    """conda's torch as the wheel it corresponds to: ``2.3.0+cu121`` / ``2.3.0+cpu`` (or as it was); a conda-forge
    build of torch (``forge``) as ``2.5.1+cu126.cf``: its GPU code is the feedstock's arch list, not PyTorch's."""
    if cpu or re.search(r"(^|_)cpu(_|$)", build):
        return f"{version}+cpu"
    cuda = _build_cuda(build) or cuda
    if not cuda:  # conda-forge's: a CUDA build on a GPU machine (its solver prefers them), which CUDA not said
        return f"{version}+cf" if forge else version
    return f"{version}+cu{cuda.replace('.', '')}" + (".cf" if forge else "")


def _satisfied(conda: Entry, pip: Entry) -> bool:
    """Whether pip's requirement ``pip`` is met by the conda package ``conda`` already in the environment (``conda
    env create`` installs the conda packages first, then runs pip, which keeps an installed distribution that meets
    the requirement: pip's resolver puts the installed candidate in place of the index's of the same version)."""
    if conda.version is None or pip.source != "registry" or pip.constraint or pip.marker:
        return False
    installed = Version(Version(conda.version).public)
    if pip.version is not None:
        return Version(pip.version) == installed
    if not pip.spec:
        return True
    try:
        return SpecifierSet(pip.spec).contains(installed, prereleases=True)
    except ValueError:
        return False


def parse_conda_env(path: Path, text: str) -> Lock:
    """A conda environment file (kind ``environment.yml``). conda packages become entries (``pytorch`` as
    ``torch``, an exact version labelled ``+cuXY``/``+cpu`` from ``pytorch-cuda``/``cuda-version``/
    ``cudatoolkit``, its build string or ``cpuonly``); ``python`` gives ``requires_python``; the ``pip:``
    section reads like requirement lines (``-r`` relative to the file). ``meta``: ``channels``,
    ``conda_packages`` (sorted names from conda), ``conda_cuda`` when known, and the requirements
    reader's ``notes``/``index_urls``."""
    doc = conda_document(path, text)
    reader = RequirementsReader(path)
    specs: dict[int, _CondaSpec] = {}  # entry index -> its conda spec
    python: str | None = None
    for item in doc.get("dependencies") or []:
        if isinstance(item, dict):
            reader.read(ReqFile(path, str(path), None), item["pip"] or [], False)
            continue
        spec = _conda_spec(path, *item)
        if spec.name == "python":
            python = f"=={spec.version}" if spec.version else spec.spec or None
            continue
        specs[len(reader.entries)] = spec
        reader.add(Entry(spec.name, spec.version, None, "registry", spec.spec, line=item[0]))
    if not reader.entries:
        raise error("no packages (neither conda packages nor a pip section with requirements)", path)
    cuda = next((_cuda_of(s.raw_version) for s in specs.values() if s.name in _CUDA_PACKAGES and s.raw_version), None)
    cuda = cuda or next((_build_cuda(s.build) for s in specs.values() if s.name == "torch" and s.build), None)
    cpu = any(s.name == "cpuonly" for s in specs.values())
    channels = [c.lower() for _, c in doc.get("channels") or []]
    # conda-forge first and no pytorch channel: pytorch comes from conda-forge (its solver takes the first channel
    # that has the package, strict priority being conda-forge's own advice)
    forge_first = bool(channels) and channels[0] == "conda-forge" and "pytorch" not in channels
    for i, spec in specs.items():
        version = reader.entries[i].version
        # conda's pytorch channel builds torchvision and torchaudio for each CUDA as it builds pytorch (build
        # strings py311_cu118, py311_cpu): they are the variant builds of torch's CUDA, not the default wheels
        forge = spec.name == "torch" and (bool(_FORGE_BUILD.match(spec.build)) or spec.channel == "conda-forge"
                                          or (forge_first and not spec.channel and (not spec.build or "cuda" in spec.build)))
        if spec.name in _TORCH_FAMILY and version and "+" not in version:
            reader.entries[i] = replace(reader.entries[i], version=_torch_label(version, spec.build, cuda, cpu, forge))
        elif forge and version is None and reader.entries[i].spec:
            # a range of conda-forge's torch: the release its solver takes is not a wheel's (its GPU code is the
            # feedstock's), so it stays a torch the file does not pin, not the index's newest release in the range
            reader.entries[i] = replace(reader.entries[i], spec="")
    # a pip requirement that a conda package of the same name already meets installs nothing: the conda build stays
    # (pytorch 2.5.1 from conda-forge and pip's torch==2.5.1); one that it does not meet replaces it (pip's numpy 2)
    conda = {reader.entries[i].name: reader.entries[i] for i in specs}
    reader.entries = [e for i, e in enumerate(reader.entries)
                      if i in specs or e.name not in conda or not _satisfied(conda[e.name], e)]
    meta = LockMeta(channels=[c for _, c in doc.get("channels") or []],
                    conda_packages=sorted({s.name for s in specs.values()}))
    if cuda:
        meta["conda_cuda"] = cuda
    return reader.lock("environment.yml", python, meta)


FORMAT = Format("environment.yml", parse_conda_env, names=(r"(environment|conda)[^/]*\.ya?ml",),
                signs=((r"^dependencies\s*:",),))
