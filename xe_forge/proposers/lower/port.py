"""A port: fast paths (TorchInductor lowerings) over a general path (general/), in one standalone module.

The module is the reference file with `Model.forward` replaced. forward asks each fast path's
`accepts` function (dispatch.py) whether this call has the signature that path was lowered and
autotuned for, in order, and runs the first that says yes; every other call runs the general path.
The constructor, parameter names, module constants, get_inputs() and get_init_inputs() stay the
reference's. Nothing from torch._inductor or xe-forge is imported; no device is named.
"""

from __future__ import annotations

import ast
import re
import textwrap

from pydantic import BaseModel, Field

from xe_forge.proposers.lower.dispatch import Mode, accepts_source, signature
from xe_forge.proposers.lower.forward import build_forward
from xe_forge.proposers.lower.general.emit import EmitError, GeneralCode, emit_general
from xe_forge.proposers.lower.general.pointwise import PointwiseError
from xe_forge.proposers.lower.general.probe import ProbeResult
from xe_forge.proposers.lower.helpers import helper_sources
from xe_forge.proposers.lower.models import Lowering, Packaged, PackagingError
from xe_forge.proposers.lower.wrapper import parse_wrapper

MODEL_CLASSES = ("Model", "ModelNew")
IMPORTS = ("import math", "import torch", "import triton", "import triton.language as tl")


class FastPart(BaseModel):
    """One lowering packaged: forward's body for it, its kernels, and when it may serve."""

    name: str
    body: list[str]
    kernels: dict[str, str]  # name -> source
    helpers: set[str] = Field(default_factory=set)
    libdevice: list[str] = Field(default_factory=list)
    extern: list[str] = Field(default_factory=list)
    accepts: str = ""  # the dispatch function's source ('' when the part serves every call)
    signature: str = ""
    notes: list[str] = Field(default_factory=list)
    lowering: Lowering


class Reference(BaseModel):
    """The reference's source and where its forward is."""

    source: str
    start: int  # first line of forward (its decorators included), 0-based
    end: int  # last line, 1-based (exclusive end for slicing)
    indent: str
    signature: str  # forward's argument list, as written
    params: list[str]  # forward's argument names (self excluded)
    call: str  # how forward passes its arguments on


def read_reference(source: str) -> Reference:
    tree = ast.parse(source)
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in MODEL_CLASSES), None)
    if model is None:
        raise PackagingError("the reference defines no Model class")
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        raise PackagingError("the reference Model has no forward method")
    lines = source.splitlines()
    args = forward.args
    params = [a.arg for a in args.posonlyargs + args.args][1:] + ([args.vararg.arg] if args.vararg else [])
    call = [a.arg for a in args.posonlyargs + args.args][1:] + ([f"*{args.vararg.arg}"] if args.vararg else [])
    call += [f"{a.arg}={a.arg}" for a in args.kwonlyargs] + ([f"**{args.kwarg.arg}"] if args.kwarg else [])
    first = lines[forward.lineno - 1]
    return Reference(source=source, start=(forward.decorator_list[0].lineno if forward.decorator_list else
                                           forward.lineno) - 1, end=forward.end_lineno or forward.lineno,
                     indent=first[: len(first) - len(first.lstrip())], signature=ast.unparse(args), params=params,
                     call=", ".join(call))


def fast_part(lowering: Lowering, ref: Reference, name: str, *, config: dict[str, str], mode: Mode | None) -> FastPart:
    """Package one lowering; `mode` None means it serves every call (no dispatch function)."""
    if not lowering.ok:
        raise PackagingError(f"nothing to package: the lowering failed ({(lowering.error or '?')[:300]})")
    if len(lowering.codes) != 1:
        raise PackagingError(f"the lowering produced {len(lowering.codes)} graphs (a graph break): only a single "
                             "graph can become one forward")
    if lowering.placeholders is None:
        raise PackagingError("the lowering record has no graph-input sources (record it with the current "
                             "benchmarks/lower_dump.py or xe-forge port)")
    wrapper = parse_wrapper(lowering.codes[0])
    body, extern = build_forward(wrapper, lowering, ref.params)
    kernels = wrapper.kernels
    part = FastPart(name=name, body=body, kernels={k: d.source for k, d in kernels.items()},
                    helpers=set().union(*(k.helpers for k in kernels.values())) if kernels else set(),
                    libdevice=sorted(set().union(*(k.libdevice for k in kernels.values()))) if kernels else [],
                    extern=extern, lowering=lowering)
    if mode is None:
        return part
    sig = signature(lowering, wrapper)
    kinds = [sig.device] + (["cpu"] if not part.libdevice else [])  # the interpreter runs any portable kernel
    part.accepts, skipped = accepts_source(f"xfg_{name}_accepts", sig, params=ref.params, config=config,
                                           guards=lowering.guards, kinds=kinds, mode=mode, wrapper=wrapper,
                                           lowering=lowering)
    part.signature = sig.describe() + ("" if mode == "exact" else " (any sizes its guards admit)")
    if skipped:
        part.notes.append(f"{name}: {len(skipped)} guard(s) not expressible at run time, implied by the exact "
                          f"signature: {'; '.join(skipped[:3])}")
    return part


def renamed(lowering: Lowering, suffix: str) -> Lowering:
    """The same lowering with its kernels renamed (two lowerings of one module must not share names)."""
    names = sorted({n for code in lowering.codes for n in re.findall(r"^(\w+) = async_compile\.triton\(", code, re.M)},
                   key=len, reverse=True)
    if not names or not suffix:
        return lowering
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    codes = [pattern.sub(lambda m: m.group(1) + suffix, c) for c in lowering.codes]
    configs = {k + suffix: v for k, v in lowering.configs.items()}
    return lowering.model_copy(update={"codes": codes, "configs": configs})


def general_part(probe: ProbeResult | None) -> tuple[GeneralCode | None, str]:
    """The general path, or (None, why there is none)."""
    if probe is None:
        return None, "the reference was not probed"
    if probe.error:
        return None, f"the reference could not be probed: {probe.error}"
    if probe.graph.reason:
        return None, probe.graph.reason
    try:
        return emit_general(probe.graph), ""
    except (EmitError, PointwiseError, KeyError) as err:
        return None, str(err)


def package_port(reference_source: str, lowerings: list[Lowering], probe: ProbeResult | None, *,
                 mode: Mode = "exact") -> Packaged:
    """Fast paths for the lowerings that package, over the general path; PackagingError if there is neither."""
    ref = read_reference(reference_source)
    general, why = general_part(probe)
    notes = [] if general else [f"no general path: {why}"]
    parts = []
    for i, lowering in enumerate(lowerings):
        try:
            config = lowering.config if lowering.config is not None else (probe.config if probe else {})
            part = fast_part(renamed(lowering, f"_f{i}" if i else ""), ref, f"fast{i}", config=config,
                             mode=mode if general else None)
        except PackagingError as err:
            notes.append(f"fast path {i} not packaged: {err}")
            continue
        parts.append(part)
        if general is None:  # without a general path the first fast path serves every call
            break
    if not parts and general is None:
        raise PackagingError("; ".join(notes) or "nothing to package")
    return assemble(ref, parts, general, notes)


def package_single(lowering: Lowering, reference_source: str) -> Packaged:
    """One lowering serving every call (no general path, no dispatch): the lowering as it is."""
    ref = read_reference(reference_source)
    return assemble(ref, [fast_part(lowering, ref, "fast0", config={}, mode=None)], None, [])


def _method(ref: Reference, name: str, doc: str, body: list[str]) -> list[str]:
    inner = ref.indent + "    "
    return [f"{ref.indent}def {name}({ref.signature}):", f'{inner}"""{doc}"""'] + \
        [textwrap.indent(line, inner) for line in body]


def assemble(ref: Reference, parts: list[FastPart], general: GeneralCode | None, notes: list[str]) -> Packaged:
    lowered = "Launches the kernels TorchInductor generated for the reference forward."
    if general is None:
        methods = _method(ref, "forward", lowered, parts[0].body)
    elif not parts:
        methods = _method(ref, "forward", "The general path: Triton kernels with every size read at run time.",
                          general.body)
    else:
        dispatch = [f"if xfg_{p.name}_accepts(self, {', '.join(ref.params)}):\n    return self.forward_{p.name}("
                    f"{ref.call})" for p in parts] + [f"return self.forward_general({ref.call})"]
        methods = _method(ref, "forward", "Each call runs the first path whose signature it has (see the module "
                                          "docstring); every other call runs the general path.", dispatch)
        for p in parts:
            methods += [""] + _method(ref, f"forward_{p.name}", f"Fast path {p.name[4:]}: {lowered}", p.body)
        methods += [""] + _method(ref, "forward_general", "The general path: Triton kernels with every size read "
                                                          "at run time.", general.body)
    lines = ref.source.splitlines()
    spliced = "\n".join(lines[:ref.start] + methods + lines[ref.end:]).rstrip()
    libdevice = sorted({n for p in parts for n in p.libdevice})
    extern = sorted({e for p in parts for e in p.extern} | set(general.extern if general else []))
    helpers: set[str] = set().union(*(p.helpers for p in parts)) if parts else set()
    imports = list(IMPORTS) + (["from triton.language.extra import libdevice"] if libdevice else [])
    sections = [_header(parts, general, extern, notes), "\n".join(imports), spliced]
    if parts:
        sections += ["# ---- portable helpers for the kernels below (Inductor's triton_helpers/libdevice) ----",
                     helper_sources(helpers).rstrip(), "# ---- kernels generated by TorchInductor ----",
                     "\n\n\n".join(src for p in parts for _, src in sorted(p.kernels.items()))]
    if general is not None:
        sections += ["# ---- the general path: launchers and kernels with every size read at run time ----",
                     general.definitions]
    accepts = [p.accepts for p in parts if p.accepts]
    if accepts:
        sections += ["# ---- which calls each fast path serves ----", "\n\n".join(a.rstrip() for a in accepts)]
    source = "\n\n\n".join(s.strip("\n") for s in sections if s and s.strip()) + "\n"
    paths = {p.name: sorted(p.kernels) for p in parts}
    if general is not None:
        paths["general"] = general.kernels
    notes = list(notes) + [n for p in parts for n in p.notes]
    notes += [f"kept libdevice.{n} (not available under the Triton interpreter)" for n in libdevice]
    notes += [f"library call kept: {e}" for e in extern]
    return Packaged(source=source, kernels=sorted({k for ks in paths.values() for k in ks}), extern=extern,
                    interpretable=not libdevice, notes=notes, paths=paths,
                    signatures={p.name: p.signature for p in parts if p.signature})


def _header(parts: list[FastPart], general: GeneralCode | None, extern: list[str], notes: list[str]) -> str:
    name = parts[0].lowering.problem if parts else "the reference"
    text = []
    if parts:
        low = parts[0].lowering
        versions = ", ".join(f"{k} {v}" for k, v in sorted(low.versions.items())) or "versions not recorded"
        text.append(f"Triton port of {name}, lowered by TorchInductor ({versions}) in {low.dtype} and packaged by "
                    "xe-forge.")
    else:
        text.append("Triton port of the reference, packaged by xe-forge: the general path alone (no lowering).")
    if parts and general is not None:
        text += ["", "Fast paths (TorchInductor's kernels, autotuned) serve only the signature each was lowered for; "
                 "every other call runs the general path:"]
        text += [f"- {p.name}: {p.signature}" for p in parts]
    text += ["", "Sizes are read from the inputs on every call; buffers go on the inputs' device."]
    rewrites = sorted({r for p in parts for r in p.lowering.rewrites})
    if rewrites:
        text.append("Rewritten before lowering: " + "; ".join(rewrites) + ".")
    if extern:
        text.append("Library calls kept (accepted only where allow_torch allows them): " + ", ".join(extern) + ".")
    guards = [g for p in parts for g in p.lowering.guards]
    if guards:
        text.append("Inductor assumed (checked per call): " + "; ".join(guards[:12]) + (" ..." if len(guards) > 12
                                                                                       else "") + ".")
    text += notes[:1]
    body = "\n".join(textwrap.fill(t, 100) if t and not t.startswith("- ") else t for t in text)
    if '"""' in body:
        raise PackagingError("the lowering record holds text that cannot go into a docstring")
    return f'"""{body}\n"""'
