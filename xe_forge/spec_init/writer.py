"""`xe-forge spec init KERNEL`: write a working spec from the kernel's own get_inputs() /
get_init_inputs() and module constants, so nobody writes one from scratch (format: docs/SPEC.md).

The file is imported only by the probe, in a process of its own (spec_init/probe.py); this side
writes the YAML, reads it back with the same loader every command uses, and checks the kernel with
it on the CPU, as `xe-forge check --device cpu` would.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xe_forge.errors import InputError, SignatureMismatch
from xe_forge.problem.kernel import SPEC_NAMES, SourceFile, read_source, resolve_reference
from xe_forge.problem.signature import (
    KINDS,
    MISMATCH_PREFIXES,
    args_source,
    check_calls,
    file_args,
    verdict_signature_error,
)
from xe_forge.problem.spec import load_spec, spec_doc
from xe_forge.spec_init.probe import ProbeRequest, ProbeResult
from xe_forge.verify.models import Verdict

PROBE_TIMEOUT = 600.0  # the probe imports torch and runs the kernel under the interpreter a few times


class SpecInit(BaseModel):
    """What `spec init` did: the file, the probe's findings, and the check with the new spec."""

    path: str
    text: str
    probe: ProbeResult
    verdict: Verdict | None = None


def default_output(kernel: Path) -> Path:
    """`<stem>.yaml` beside the kernel: the first name `check` and `optimize` look for."""
    return kernel.with_name(SPEC_NAMES[0].format(stem=kernel.stem))


def run_probe(kernel: Path, reference: Path | None, timeout: float = PROBE_TIMEOUT) -> ProbeResult:
    """The probe in its own process (the file is imported there, never here), under the interpreter."""
    from xe_forge.verify.sandbox import scrubbed_environ

    with tempfile.TemporaryDirectory(prefix="xe-forge-spec-") as tmp:
        request = ProbeRequest(kernel=str(kernel.resolve()), reference=str(reference.resolve()) if reference else None,
                               workdir=tmp, result=str(Path(tmp) / "result.json"))
        (Path(tmp) / "request.json").write_text(request.model_dump_json())
        env = scrubbed_environ() | {"TRITON_INTERPRET": "1", "PYTHONUNBUFFERED": "1"}
        try:
            done = subprocess.run([sys.executable, "-m", "xe_forge.spec_init.probe", str(Path(tmp) / "request.json")],
                                  env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise InputError(f"spec init: probing {kernel} took over {timeout:.0f} s",
                             hint="a hang in the kernel, or sizes the interpreter cannot run quickly; "
                                  "--timeout SECONDS gives it longer") from None
        result_path = Path(request.result)
        if not result_path.is_file():
            tail = " | ".join((done.stderr or "").strip().splitlines()[-3:])
            raise InputError(f"spec init: the probe of {kernel} died (exit {done.returncode}): {tail}")
        result = ProbeResult.model_validate_json(result_path.read_text())
    if result.error and result.error.startswith(MISMATCH_PREFIXES):
        raise SignatureMismatch(f"spec init: {result.error}; no spec was written", hint=result.hint)
    if result.error:
        raise InputError(f"spec init: cannot derive a spec from {kernel}: {result.error}",
                         hint=f"write one by hand: {spec_doc()}")
    return result


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        text = repr(v)
        mantissa, _, exp = text.partition("e")
        return f"{mantissa if '.' in mantissa else mantissa + '.0'}{'e' + exp if exp else ''}"  # YAML 1.1 floats
    if isinstance(v, str) and not re.fullmatch(r"[A-Za-z_]\w*", v):
        return json.dumps(v)  # an expression: quoted
    return str(v)


def _flow(v: Any) -> str:
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_flow(x)}" for k, x in v.items()) + "}"
    return _scalar(v)


def _flop(formula: str | None, count: float | None) -> list[str]:
    if formula:
        return [f"    flop: {json.dumps(formula)}"]
    return [f"    flop: \"{count:.0f}\"  # counted at these sizes (no formula over the dims fits)"] if count else []


def render_yaml(kernel: Path, p: ProbeResult, allow_torch: list[str]) -> str:
    lines = [f"# Spec for {kernel.name}, written by `xe-forge spec init` (the format: docs/SPEC.md).",
             "# dims are the file's module constants; `ci` shrinks them for Triton's interpreter (CPU), `bench-gpu`",
             "# keeps the file's own sizes; `unseen` shapes are checked at the end only, never shown to a proposer.",
             "inputs:"]
    for i in p.inputs:
        fields = [f"shape: {_flow(i.shape)}"] + ([f"dtype: {i.dtype}"] if i.dtype != p.dtype else [])
        fields += ["dist: uniform"] if i.dist == "uniform" else []
        lines.append(f"  {i.name}: {{{', '.join(fields)}}}" + ("   # get_inputs() draws torch.rand"
                                                                if i.dist == "uniform" else ""))
    lines.append("inits:" if p.inits else "inits: []")
    lines += [f"  - {init.name}: {_flow(init.value)}" for init in p.inits]
    if p.ci_error:
        lines.append(f"# no small ci size passed ({p.ci_error[:200]}): edit the ci dims")
    lines += ["ci:", "  - dtype: float32", f"    dims: {_flow(p.ci)}", *_flop(p.flop, p.flop_ci)]
    lines += ["bench-gpu:", f"  - dtype: {p.dtype}", f"    dims: {_flow(p.dims)}", *_flop(p.flop, p.flop_full)]
    if p.unseen:
        lines += ["unseen:"] + [f"  - dims: {_flow(u)}" for u in p.unseen]
    if p.generated:
        lines += [f"# `check` also runs {len(p.generated)} unseen shape(s) of its own, across the kernel's tiles "
                  f"({len(p.unseen) + len(p.generated)} in all, plus one drawn in secret at each check):"]
        lines += [f"#   - dims: {_flow(g.dims)}   # {g.name}" for g in p.generated]
    if p.multiple_of:
        lines += ["# the kernel fails one size up but passes a step up: unseen shapes keep these multiples",
                  f"multiple_of: {_flow(p.multiple_of)}"]
    lines.append("precision: keep")
    if allow_torch:
        lines += ["# torch ops the kernel itself keeps (a first port may leave e.g. a convolution to cuDNN):",
                  f"allow_torch: {_flow(allow_torch)}"]
    return "\n".join(lines) + "\n"


def init_spec(kernel: Path, *, output: Path | None = None, reference: Path | None = None, force: bool = False,
              check: bool = True, timeout: float = PROBE_TIMEOUT) -> SpecInit:
    """Probe the kernel, write its spec, read it back, and (by default) check the kernel with it on the CPU."""
    from xe_forge.verify.static import torch_ops_of

    source = read_source(kernel, "kernel")  # a clear error for a file that is not a kernel file, before any import
    out = output or default_output(kernel)
    if out.exists() and not force:
        raise InputError(f"{out} exists", hint="pass --force to replace it, or -o another file")
    ref_path, is_self = resolve_reference(kernel, reference)
    ref_source = source if is_self else read_source(ref_path, "reference")
    _signatures_agree(source, ref_source, is_self)
    result = run_probe(kernel, None if is_self else ref_path, timeout)
    text = render_yaml(kernel, result, sorted(torch_ops_of(source.source)))
    with tempfile.TemporaryDirectory() as tmp:
        draft = Path(tmp) / out.name
        draft.write_text(text)
        load_spec(draft)  # what every command reads: a draft it rejects is never written
    out.write_text(text)
    done = SpecInit(path=str(out), text=text, probe=result)
    if check:
        done.verdict = check_with(kernel, reference, out)
    return done


def _signatures_agree(kernel: SourceFile, reference: SourceFile, is_self: bool) -> None:
    """Before anything runs (no probe, no file written): the reference's get_init_inputs() and get_inputs()
    (what the verifier uses without a spec) and the kernel's own (what the spec's `inits:` and `inputs:` are
    written from) must build both models and call both forwards, as far as the source says."""
    for kind in KINDS:
        for args in (args_source(reference, None, kind), file_args(kernel, "kernel", kind)):
            try:
                check_calls(kernel, reference, kind, reference_is_self=is_self, args=args)
            except SignatureMismatch as err:
                raise SignatureMismatch(f"spec init: {err.message}; no spec was written", hint=err.hint) from None


def check_with(kernel: Path, reference: Path | None, spec: Path) -> Verdict:
    """`xe-forge check --device cpu KERNEL --spec SPEC`, as a verdict. A check that fails where the models are
    built or called (their constructors or forwards and the spec's inits or inputs disagree) removes the spec it
    just wrote and says why: a spec no check can pass is not left behind."""
    from xe_forge.problem.kernel import load_problem
    from xe_forge.verify.evaluate import Evaluator, declared_allowance

    try:
        problem = load_problem(kernel, reference, spec)
        with Evaluator("cpu") as ev:
            verdict = ev.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem), unseen=True,
                                  time_it=False)
        mismatch = verdict_signature_error(problem, verdict)
        if mismatch is not None:
            raise mismatch
    except SignatureMismatch as err:
        spec.unlink(missing_ok=True)
        raise SignatureMismatch(f"spec init: {err.message}; the spec written to {spec} was removed",
                                hint=err.hint) from None
    return verdict
