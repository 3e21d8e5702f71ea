"""(b) The torch family: torchvision / torchaudio against the torch they were built for."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.model.findings import Finding
from glmcompat.decide.rules.context import Context, Rule, _ev, _pair_ev, _probed


def rule_family(ctx: Context) -> list[Finding]:
    """(b) torchvision / torchaudio against the torch they were built for."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    for name, ver in ctx.prebuilt(ctx.facts.family_packages()):
        found = ctx.facts.family(name, ver)
        if found is None:  # no METADATA pin: a probe decides
            out += _probed(ctx, "family", name, ver, severity="error", built="built for",
                           unknown=f"{name} {ver} has no recorded torch pairing", example=True)
            continue
        spec, row = found
        if torch is None:
            out.append(Finding(rule="family", severity="error", packages=(ctx.pin(name),),
                               message=f"{name} {ver} needs torch{spec}, and no torch is in the set",
                               evidence=_pair_ev(row, name, ver, spec), remedy=f"add torch{spec}"))
            continue
        tpub = Version(torch).public
        verdict = ctx.facts.abi_verdict(name, ver, torch)
        if SpecifierSet(spec).contains(tpub, prereleases=True):
            if verdict is not None and not verdict.compatible:
                # a probe-proven break wins over a METADATA range that admits this torch (torchaudio 2.11.1
                # declares torch>=2.11, yet needs stable-ABI functions torch 2.11.0 does not export)
                syms = verdict.symbols
                msg = (f"torch {tpub} breaks {name} {ver}: its METADATA admits it (torch{spec}), but "
                       f"{verdict.missing} undefined symbol(s) it needs are missing from torch {tpub}"
                       + (f" (e.g. {syms[0]})" if syms else ""))
                if row.failure:
                    msg += f"; importing it fails with {row.failure}"
                good = ctx.facts.family_for_torch(name, tpub)
                remedy = f"pin {name}=={good}" if good and good != Version(ver).public else \
                    f"use a {name} release built for torch {tpub}"
                if row.consequence:
                    msg += f"; {row.consequence}"
                out.append(Finding(rule="family", severity=row.on_mismatch, packages=(ctx.pin(name), ctx.pin("torch")),
                                   message=msg,
                                   evidence=_ev(verdict) + _pair_ev(row, name, ver, spec), remedy=remedy,
                                   probe=ctx.probe_command("abi", name, ver, f"--torch {tpub}")))
            continue
        if verdict is not None and verdict.compatible and row.evidence != "metadata":
            continue  # probed compatible with this torch, and no METADATA pin says otherwise (torchaudio 2.11.0)
        if verdict is not None:
            # outside the documented range and probe-proven broken: the probe is the evidence, not the table
            syms = verdict.symbols
            msg = (f"torch {tpub} breaks {name} {ver}: it was built for torch{spec} and {verdict.missing} undefined "
                   f"symbol(s) it needs are missing from torch {tpub}" + (f" (e.g. {syms[0]})" if syms else ""))
            if row.failure:
                msg += f"; importing it fails with {row.failure}"
            if row.consequence:
                msg += f"; {row.consequence}"
            good = ctx.facts.family_for_torch(name, tpub)
            out.append(Finding(rule="family", severity=row.on_mismatch, packages=(ctx.pin(name), ctx.pin("torch")),
                               message=msg, evidence=_ev(verdict) + _pair_ev(row, name, ver, spec),
                               remedy=f"pin {name}=={good}" if good else f"pin torch{spec}",
                               probe=ctx.probe_command("abi", name, ver, f"--torch {tpub}")))
            continue
        msg = f"{name} {ver} was built for torch{spec}, but torch {tpub} is in the set"
        if row.failure:
            msg += f"; importing it fails with {row.failure}"
        good = ctx.facts.family_for_torch(name, tpub)
        remedy = f"pin {name}=={good}" if good else f"pin torch{spec}"
        out.append(Finding(rule="family", severity="error", packages=(ctx.pin(name), ctx.pin("torch")), message=msg,
                           evidence=_pair_ev(row, name, ver, spec), remedy=remedy))
    return out


RULE = Rule(id='family', family='family', check=rule_family, reads=('family', 'abi', 'torch'), evidence=('metadata', 'abi-probe'),
            remedy='pin', doc='torchvision / torchaudio (and the family) against the torch they were built for',
            names=('torch', 'torchaudio', 'torchvision'))
