"""The generated pyproject.toml of a lock: the request and the resolution it is rendered from, and the
renderer. Data never becomes code: the file is a tomlkit document built from plain values (names and versions
must be plain ``name==version`` pins, comments are escaped), parsed back and compared with the intended data."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from glmcompat.decide.plan import LockPlan, Planned
from glmcompat.edges.index import IndexOptions
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import InputError
from glmcompat.model.platforms import environment
from glmcompat.ops.lockset import GENERATED


def out_name(target: str, platform: str) -> str:
    """The directory under ``locks/<stack>/`` of a lock: ``<target>`` for x86_64, ``<target>-<platform>`` otherwise."""
    return target if platform == "x86_64" else f"{target}-{platform}"


@dataclass(frozen=True)
class LockRequest(Planned):
    """``glmcompat lock --stack``'s question: the stack, the command's :class:`~glmcompat.decide.plan.LockPlan` (its one
    target's row, the platform, the model), and how."""

    stack: str
    plan: LockPlan
    python: str | None = None
    with_: tuple[str, ...] = ()
    upgrade: bool = False
    index: IndexOptions = IndexOptions()  # --index-url / --no-cache, for the resolution and for uv


@dataclass
class Resolution:
    pins: dict[str, str]
    overrides: dict[str, str]  # package -> version overridden against an upstream pin
    override_reasons: dict[str, str]
    requires_python: str
    exclude_newer: str | None


_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")


def pin(name: Any, version: Any) -> str:
    """``name==version``, only for a plain project name and a valid version: never a URL, a path, a marker,
    an extra or a second requirement, whatever the matrix, the index or a cache holds."""
    bad = InputError(f"refusing to write the pin {name!r} == {version!r}: not a plain package name and version")
    if not (isinstance(name, str) and isinstance(version, str) and _NAME.fullmatch(name) and _VERSION.fullmatch(version)):
        raise bad
    try:
        Version(version)
        r = Requirement(f"{name}=={version}")
    except (InvalidVersion, InvalidRequirement):
        raise bad from None
    if r.url or r.marker or r.extras or r.name != name or str(r.specifier) != f"=={version}":
        raise bad
    return f"{name}=={version}"


def comment(text: str) -> str:
    """Text safe inside one TOML comment line: every non-printable character (newlines, controls,
    Unicode line separators, bidi controls) is written as its escape."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def project_name(stack: str, target: str, platform: str = "x86_64") -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", f"{stack}-{out_name(target, platform)}").strip("-") or "glmcompat-lock"


def pyproject_data(facts: Facts, req: LockRequest, res: Resolution) -> dict[str, Any]:
    """The generated pyproject.toml as plain data: exactly what ``tomllib`` reads back from
    :func:`render_pyproject`."""
    tname, machine = req.target.name, req.platform
    for what, value in (("requires-python", res.requires_python), ("exclude-newer", res.exclude_newer),
                        ("stack", req.stack), ("model", req.model)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"{what}: expected a string, got {value!r}")
    pins = [pin(n, v) for n, v in sorted(res.pins.items())]
    uv: dict[str, Any] = {"constraint-dependencies": list(pins)}
    if res.overrides:
        uv["override-dependencies"] = [pin(n, v) for n, v in sorted(res.overrides.items())]
    if res.exclude_newer:
        uv["exclude-newer"] = res.exclude_newer
    uv["environments"] = [environment(machine)]
    if machine != "x86_64":
        # Some packages publish no wheel for this machine: uv must pick releases that install here (the x86_64
        # locks predate this and keep their bytes; every package they lock has an x86_64 wheel).
        uv["required-environments"] = [environment(machine)]
    glm: dict[str, Any] = {"stack": req.stack, "targets": [tname]}
    if machine != "x86_64":
        glm["platform"] = machine
    if req.model:
        glm["model"] = req.model
    return {"project": {"name": project_name(req.stack, tname, machine), "version": "0",
                        "requires-python": res.requires_python, "dependencies": pins},
            "tool": {"uv": uv, "glmcompat": glm}}


def header_command(facts: Facts, req: LockRequest) -> str:
    """The command a generated pyproject.toml names in its first line (the request, normalized)."""
    tname, machine = req.target.name, req.platform
    cmd = f"glmcompat lock --stack {req.stack} --target {tname}"
    if machine != "x86_64":
        cmd += f" --platform {machine}"
    if req.model:
        cmd += f" --model {req.model}"
    if req.python:
        cmd += f" --python {req.python}"
    for w in sorted(req.with_):
        cmd += f" --with '{w}'"
    if req.upgrade:
        cmd += " --upgrade"
    return cmd


def render_pyproject(facts: Facts, req: LockRequest, res: Resolution) -> str:
    """The generated pyproject.toml (deterministic: sorted, no timestamps beyond exclude-newer), built as a
    tomlkit document from :func:`pyproject_data` — values are TOML strings, never pasted text — and
    checked by parsing it back."""
    import tomlkit  # lazy: heavy tomlkit, only writers need it

    data = pyproject_data(facts, req, res)
    cmd = header_command(facts, req)

    def arr(items: list[str], multiline: bool = True) -> Any:
        a = tomlkit.array()
        a.extend(items)
        return a.multiline(multiline and bool(items))

    doc = tomlkit.document()
    doc.add(tomlkit.comment(comment(f"Generated by `{cmd}`: do not edit by hand.")))
    doc.add(tomlkit.comment("The core pins were resolved against glmcompat's compatibility matrix (torch ABI, GPU code for the"))
    doc.add(tomlkit.comment("target, CUDA runtime, model support); `uv lock` resolves everything else."))
    project = tomlkit.table()
    for key in ("name", "version", "requires-python"):
        project.add(key, data["project"][key])
    project.add("dependencies", arr(data["project"]["dependencies"]))
    doc.add("project", project)
    project.trivia.indent = ""  # the header sits right above [project]
    uvd = data["tool"]["uv"]
    uv = tomlkit.table()
    uv.add("constraint-dependencies", arr(uvd["constraint-dependencies"]))
    if "override-dependencies" in uvd:
        uv.add(tomlkit.comment("Deliberate overrides of upstream pins:"))
        for n in sorted(res.overrides):
            uv.add(tomlkit.comment(comment(f"  {res.override_reasons.get(n, '')}")))
        uv.add("override-dependencies", arr(uvd["override-dependencies"]))
    if "exclude-newer" in uvd:
        uv.add("exclude-newer", uvd["exclude-newer"])
    uv.add("environments", arr(uvd["environments"], multiline=False))
    if "required-environments" in uvd:
        uv.add("required-environments", arr(uvd["required-environments"], multiline=False))
    glm = tomlkit.table()
    glm.add("stack", data["tool"]["glmcompat"]["stack"])
    glm.add("targets", arr(data["tool"]["glmcompat"]["targets"], multiline=False))
    if "platform" in data["tool"]["glmcompat"]:
        glm.add("platform", data["tool"]["glmcompat"]["platform"])
    if "model" in data["tool"]["glmcompat"]:
        glm.add("model", data["tool"]["glmcompat"]["model"])
    tool = tomlkit.table(is_super_table=True)
    tool.add("uv", uv)
    tool.add("glmcompat", glm)
    doc.add("tool", tool)
    text = tomlkit.dumps(doc)
    try:
        back = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:  # pragma: no cover - a tomlkit bug; never write such a file
        raise InputError(f"internal error: the generated pyproject.toml does not parse ({e})") from None
    if back != data or not text.encode().startswith(GENERATED):  # pragma: no cover - likewise
        raise InputError("internal error: the generated pyproject.toml does not read back as the intended data")
    return text
