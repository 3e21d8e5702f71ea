"""What a lock asks the resolver for (:class:`Request`) and the root requirements it starts from: a stack's engine or
listed packages and ``--with``, or a user's project's core requirements, with what the model and the target need; a
model no engine release serves is an error that names the stacks that do (:func:`served_elsewhere`)."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from glmcompat.decide.resolution import MODEL, STACK, TARGET, USER, Req, Why, parse_requirement, parse_spec
from glmcompat.decide.stacks import CORE, ENGINES, default_platform, stack_engine
from glmcompat.matrix.rows import ModelSupport, Target
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import InputError, UnsafeError
from glmcompat.model.findings import Cause
from glmcompat.model.numbers import check_digits


@dataclass(frozen=True)
class Request:
    """One resolution of the core: for the stack ``stack`` (or a project: ``origin``) on the target ``target`` (its
    ``[[target]]`` row, from the command's :class:`~glmcompat.decide.plan.LockPlan`)."""

    stack: str
    target: Target
    model: str | None = None
    with_: tuple[str, ...] = ()
    upgrade: bool = False
    python: str = "3.11"
    platform: str | None = None  # the machine the lock is for (the plan's); None: the target's default
    # Project mode (``glmcompat lock`` in a user's project): ``stack`` is "" and ``with_`` holds the project's own
    # requirements on the core, read from ``origin`` (the file named in explanations: "pyproject.toml requires ...").
    origin: str = ""
    prefer: tuple[tuple[str, str], ...] = ()  # project mode: the versions to try first (the existing lock's)
    driver: str | None = None  # the machine's NVIDIA driver: a release built for a CUDA it cannot run is never offered

    @property
    def subject(self) -> str:
        """What the set is for, in explanations: ``stack NAME`` or ``project FILE``."""
        return f"project {self.origin}" if self.origin else f"stack {self.stack}"

    @property
    def arch(self) -> str:
        """The Linux machine the lock is for: ``platform``, else the target's default."""
        return self.platform or default_platform(self.target)


def root_requirements(facts: Facts, req: Request) -> tuple[list[Req], list[str], dict[str, str], dict[str, str], dict[str, str]]:
    """(root requirements, the stack's and --with's core names, preferences, overrides, model requirements).

    With its engine (sglang or vllm) in the stack, the engine is the only package the stack asks for:
    the chosen release's Requires-Dist brings in the rest (its kernel package, flashinfer-cubin or not,
    torchvision...). A model the engine is not known to serve is an :class:`UnsafeError` that names
    the stacks of the other engine that do serve it.
    """
    if req.origin:
        return project_roots(facts, req)
    stack = facts.stack(req.stack)
    engine = stack_engine(stack)
    tname = req.target.name
    names = list(stack.pins)
    roots: list[Req] = []
    with_names: set[str] = set()
    for raw in req.with_:
        r = parse_requirement(check_digits(raw, "--with"))
        if r is None:
            raise InputError(f"--with: invalid requirement {raw!r}")
        name = str(canonicalize_name(r.name))
        if name not in CORE:
            raise InputError(f"--with: {name!r} is not in the coupled core ({', '.join(CORE)}); "
                             "add other packages to the generated pyproject.toml")
        # only a name and a version specifier are kept: anything else would be dropped without a word
        if r.extras:
            raise InputError(f"--with {raw!r}: extras ({', '.join(sorted(r.extras))}) are not kept in a stack lock "
                             f"(its pins are plain name==version); pass --with '{r.name}{r.specifier}', and require "
                             "the extra in your project (`glmcompat lock` in project mode keeps it)")
        if r.url:
            raise InputError(f"--with {raw!r}: a URL requirement; a stack lock resolves the core from the index "
                             f"(pin a version: --with '{r.name}==VERSION'; a local build belongs in your project's "
                             "pyproject.toml, locked in project mode)")
        if r.marker:
            raise InputError(f"--with {raw!r}: a marker ({r.marker}) is not kept in a stack lock; the lock is made "
                             f"for one target and platform (pass --with '{r.name}{r.specifier}')")
        roots.append(Req(name, r.specifier, Why(USER)))
        with_names.add(name)
        if name not in names:
            names.append(name)
    asked = [engine] if engine in names else names
    for n in asked:
        if n not in with_names:
            roots.append(Req(n, SpecifierSet(), Why(STACK, stack.name)))
    model_reqs = _model_and_target_roots(facts, req, tname, [engine] if engine in names else [], roots)
    return roots, names, dict(stack.pins), dict(stack.overrides), model_reqs


def _model_and_target_roots(facts: Facts, req: Request, tname: str, engines: list[str], roots: list[Req]) -> dict[str, str]:
    """Append to ``roots`` what the model needs (transformers that knows it; each of ``engines`` at a release that
    serves it, else the :func:`_unserved` error) and the target's own requirements on packages already asked for;
    returns the model's requirements by package."""
    model_reqs: dict[str, str] = {}
    if req.model:
        m = facts.model(req.model)
        model_reqs["transformers"] = m.transformers
        roots.append(Req("transformers", parse_spec(m.transformers),
                         Why(MODEL, req.model, asked=m.transformers, evidence=m.evidence, source=m.source)))
        for engine in engines:
            spec = m.for_engine(engine)
            if not spec:
                raise _unserved(facts, m, engine, tname, req.arch)
            model_reqs[engine] = spec
            roots.append(Req(engine, parse_spec(spec), Why(MODEL, req.model, asked=spec)))
    for tr in facts.target_requirements(tname):
        if tr.package in [r.name for r in roots]:
            roots.append(Req(tr.package, parse_spec(tr.specifier),
                             Why(TARGET, tname, asked=tr.specifier, reason=tr.reason)))
    return model_reqs


def project_roots(facts: Facts, req: Request) -> tuple[list[Req], list[str], dict[str, str], dict[str, str], dict[str, str]]:
    """:func:`root_requirements` for a user's project: every core requirement the project declares is a root
    (several for one name narrow it together), nothing else is added -- a project that uses torch and a kernel
    gets no engine. With a model, transformers must know it, and each engine the project uses must serve it;
    an engine's own exact transformers pin that does not know the model is overridden (as for a stack)."""
    tname = req.target.name
    roots: list[Req] = []
    names: list[str] = []
    for raw in req.with_:
        r = parse_requirement(check_digits(raw, str(req.origin)))
        if r is None:
            raise InputError(f"{req.origin}: invalid requirement {raw!r}")
        name = str(canonicalize_name(r.name))
        if name not in CORE:
            continue
        roots.append(Req(name, r.specifier, Why(USER, req.origin)))
        if name not in names:
            names.append(name)
    engines = [e for e in ENGINES if e in names]
    model_reqs = _model_and_target_roots(facts, req, tname, engines, roots)
    overrides = {"transformers": model_reqs["transformers"]} if req.model and engines else {}
    return roots, names, _built_for_preferences(facts, roots, dict(req.prefer)), overrides, model_reqs


def _built_for_preferences(facts: Facts, roots: list[Req], prefer: dict[str, str]) -> dict[str, str]:
    """The versions to try first: where the project pins a compiled package exactly (sgl-kernel==0.3.21), the torch
    it was built against and the torch family releases built for that torch (what else could be chosen fails), then
    the existing lock's versions. Only an order: every candidate stays possible."""
    exact = {r.name: s.version for r in roots if r.why.kind == USER for s in r.spec
             if s.operator == "==" and "*" not in s.version}
    out = dict(prefer)
    if "torch" in exact:
        return out
    for name in sorted(exact):
        k = facts.kernel(name, exact[name]) if name != "torch" else None
        if k is None or k.on_mismatch != "error":
            continue
        out["torch"] = k.torch
        for fam in facts.family_packages():
            v = facts.family_for_torch(fam, k.torch)
            if v is not None and fam not in exact:
                out[fam] = v
        break
    return out



def served_elsewhere(facts: Facts, model: ModelSupport, engine: str, target: str, platform: str = "x86_64") -> str:
    """Which other engine serves the model, and the stack to lock it with ("" when none does)."""
    mt = model.model_type
    others = []
    for e in ENGINES:
        if e == engine or not model.for_engine(e):
            continue
        stacks = [s for s in facts.rows("stack") if stack_engine(s) == e and mt in s.models]
        here = [s for s in stacks if target in s.targets]
        pick = (here or stacks)[:1]
        plat = "" if platform == "x86_64" else f" --platform {platform}"
        others.append(f"{e}{model.for_engine(e)} serves it" + (f" (stack {pick[0].name}: `glmcompat lock --stack {pick[0].name} "
                                                    f"--target {target}{plat}`)" if pick else ""))
    return "; ".join(others)


def _unserved(facts: Facts, model: ModelSupport, engine: str, target: str, platform: str = "x86_64") -> UnsafeError:
    """The model's [[model]] row names no release of ``engine``: one line that says which stacks of the other
    engines serve it, or that no engine release in the matrix does (nothing to lock)."""
    mt = model.model_type
    elsewhere = served_elsewhere(facts, model, engine, target, platform)
    if elsewhere:
        clause = f"no {engine} release in the matrix is known to serve model {mt} (its [[model]] row names none)"
        why = Cause("unserved", engine, (clause,), f"a {engine} stack has nothing to lock for model {mt}", elsewhere)
        return UnsafeError(f"{clause}; {elsewhere}", causes=(why,))
    clause = (f"no engine release in the matrix is known to serve model {mt} (its [[model]] row names no "
              f"{' or '.join(ENGINES)} release)")
    why = Cause("unserved", engine, (clause,), f"there is nothing to lock for model {mt}",
                f"record the {' or '.join(ENGINES)} releases that serve {mt} in its [[model]] row")
    return UnsafeError(f"{clause}: nothing to lock for it", causes=(why,))


