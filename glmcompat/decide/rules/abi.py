"""(a) ABI: a compiled extension next to a torch other than the one it was built against."""

from __future__ import annotations

from packaging.version import Version

from glmcompat.model.causes import Break
from glmcompat.model.findings import Finding
from glmcompat.decide.rules.context import Context, Rule, _best_kernel, _ev, _probed, _torch_pins


def rule_abi(ctx: Context) -> list[Finding]:
    """(a) A compiled extension next to a torch other than the one it was built against / probed with."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    for name, ver in ctx.prebuilt(ctx.facts.kernel_packages()):
        row = ctx.facts.kernel(name, ver)
        if row is None:
            out += _probed(ctx, "abi", name, ver, severity=ctx.facts.mismatch_severity(name), built="built against",
                           unknown=f"{name} {ver} is a compiled torch extension the matrix does not know")
            continue
        if torch is None:
            out.append(Finding(rule="abi", severity="error", packages=(ctx.pin(name),),
                               message=f"{name} {ver} is a compiled extension built against torch {row.torch}, and no torch is in the set",
                               evidence=_ev(row), remedy=f"add torch=={row.torch}"))
            continue
        tpub = Version(torch).public
        verdict = ctx.facts.abi_verdict(name, ver, torch)
        if verdict is not None and verdict.compatible:
            continue
        if verdict is None and ctx.facts.abi_equal(tpub, row.torch) is not None:
            continue  # the torch it was built against, or a release proven to export the same symbols
        sev = row.on_mismatch
        if verdict is not None:
            syms = verdict.symbols
            detail = f"{verdict.missing} undefined symbol(s) it needs are missing from torch {tpub}"
            if syms:
                detail += f" (e.g. {syms[0]})"
            said = Break(rule="abi", package=name, version=ver, against=tpub, built=row.torch).sentence()
            msg = f"torch {tpub} breaks {name} {ver}: {said}; {detail}"
            evidence = _ev(verdict) + _ev(row)
        else:
            msg = (f"{name} {ver} was built against torch {row.torch}, but torch {tpub} is in the set; "
                   f"a compiled extension only loads next to the torch whose C++ ABI it was built for")
            evidence = _ev(row)
        if row.consequence:
            msg += f"; if it fails to load, {row.consequence}"
        found = _best_kernel(ctx, name, tpub)
        alt = f"{found[0]}=={found[1]}" if found else None
        if sev == "warning":
            remedy = (f"nothing blocks the stack; to keep {name}'s compiled ops, install {alt}" if alt else
                      f"nothing blocks the stack; to keep {name}'s compiled ops, install a {name} built against torch {tpub}")
        else:
            remedy = f"pin {_torch_pins(ctx, row.torch)}"
            if alt:
                remedy += f", or use {alt} (built against torch {tpub})"
        out.append(Finding(rule="abi", severity=sev, packages=(ctx.pin(name), ctx.pin("torch")), message=msg,
                           evidence=evidence, remedy=remedy,
                           probe=ctx.probe_command("abi", name, ver, f"--torch {tpub}")))
    return out


RULE = Rule(id='abi', family='abi', check=rule_abi, reads=('kernel', 'abi', 'abi_equal', 'torch'), evidence=('abi-probe', 'metadata'),
            remedy='pin', doc='a compiled torch extension next to a torch it was not built against',
            names=('torch',))
