"""Correctness against the PyTorch reference, inside the evaluation worker.

Protocol (DESIGN.md, Verification 3-4): same seed for both models, weights copied by name (else by
order and shape); K trials of fresh random inputs; outputs poisoned; the first trial calls the
candidate twice on the SAME input storage with DIFFERENT values; inputs compared after each call;
every output of a tuple compared; NaN/Inf never pass; 16-bit runs are compared with an fp32
reference computed on the same rounded inputs and weights; launches counted; ghost replay.
"""

from __future__ import annotations

import contextlib
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from xe_forge.problem.cases import build_case, model_class
from xe_forge.problem.spec import Spec, Variant
from xe_forge.verify.hooks import count_launches, poisoned_allocations, torch_compute_audit
from xe_forge.verify.models import Comparison, CorrectnessReport, Finding, TrialResult

TOLERANCES = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2, "float64": 1e-7}
TF32_TOLERANCE = 5e-3
REL_L2_FACTOR = 10.0


class BadInput(Exception):
    """The reference (not the candidate) cannot run: the problem itself is broken."""


class CandidateInitError(Exception):
    """The candidate's constructor raised: a candidate failure, not a worker error."""


def tolerance(dtype: str, precision: str, variant: Variant | None) -> tuple[float, float]:
    """The precision contract as numbers; a spec's rtol/atol override the table."""
    tol = TOLERANCES.get(dtype, 1e-4)
    if dtype == "float32" and precision == "allow-tf32":
        tol = TF32_TOLERANCE
    rtol = variant.rtol if variant and variant.rtol is not None else tol
    atol = variant.atol if variant and variant.atol is not None else tol
    return rtol, atol


def run_dtype(variant: Variant | None, precision: str) -> str:
    if precision in ("bf16", "fp16"):
        return {"bf16": "bfloat16", "fp16": "float16"}[precision]
    return (variant.dtype if variant and variant.dtype else None) or "float32"


def flatten(out: Any) -> list[Any]:
    if isinstance(out, tuple | list):
        return [y for x in out for y in flatten(x)]
    return [out]


def error_line(exc: BaseException, path: Path) -> int | None:
    """The line of the candidate file where an exception surfaced, for feedback."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == str(path):
            return frame.lineno
    return None


def describe(exc: BaseException, limit: int = 600) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[:limit] + " ..."


class ModelPair:
    """Reference and candidate built under the same seed, weights shared, cast for the run dtype."""

    def __init__(self, ref_mod: ModuleType, cand_mod: ModuleType, init_args: list[Any], device: str,
                 dtype: str, seed: int) -> None:
        import torch

        torch.manual_seed(seed)
        try:
            self.ref = model_class(ref_mod)(*init_args)
        except Exception as exc:
            raise BadInput(f"the reference Model({init_args}) cannot be built: {describe(exc)}") from exc
        torch.manual_seed(seed)
        try:
            self.cand = model_class(cand_mod)(*init_args)
        except Exception as exc:
            raise CandidateInitError(f"building the candidate model with {init_args} raised {describe(exc)}") from exc
        self.pairs = pair_tensors(self.ref.state_dict(), self.cand.state_dict())
        self._copy(self.ref, self.cand, reverse=False)
        tdtype = getattr(torch, dtype)
        self.cand.to(device=device, dtype=tdtype) if tdtype.is_floating_point else self.cand.to(device)
        self.ref.to(device=device)
        self.dtype = tdtype
        if tdtype in (torch.float16, torch.bfloat16):
            self._copy(self.cand, self.ref, reverse=True)  # reference gets the rounded weights, in fp32

    def _copy(self, src: Any, dst: Any, *, reverse: bool) -> None:
        import torch

        s_sd, d_sd = src.state_dict(), dst.state_dict()
        with torch.no_grad():
            for ref_name, cand_name in self.pairs:
                s_name, d_name = (cand_name, ref_name) if reverse else (ref_name, cand_name)
                s, d = s_sd[s_name], d_sd[d_name]
                if not torch.equal(s.to(d.dtype).to(d.device), d):
                    d.copy_(s.to(d.dtype))

    def reference_inputs(self, inputs: list[Any]) -> list[Any]:
        """The reference runs fp32 on exactly the (possibly rounded) values the candidate sees."""
        import torch

        return [x.float() if torch.is_tensor(x) and x.is_floating_point() else x for x in inputs]


def pair_tensors(ref_sd: dict, cand_sd: dict) -> list[tuple[str, str]]:
    """Match reference to candidate tensors by name and shape, then by order and shape."""
    pairs = [(n, n) for n, t in ref_sd.items() if n in cand_sd and cand_sd[n].shape == t.shape]
    used_ref, used_cand = {p[0] for p in pairs}, {p[1] for p in pairs}
    rest_cand = [n for n in cand_sd if n not in used_cand]
    for rname, rt in ref_sd.items():
        if rname in used_ref:
            continue
        match = next((c for c in rest_cand if cand_sd[c].shape == rt.shape), None)
        if match is not None:
            pairs.append((rname, match))
            rest_cand.remove(match)
    return pairs


def compare(name: str, got: Any, want: Any, rtol: float, atol: float, expect_dtype: Any) -> Comparison:
    import torch

    if not torch.is_tensor(want):
        ok = got == want
        return Comparison(name=name, shape=[], passed=bool(ok), note="" if ok else f"expected {want!r}, got {got!r}")
    if not torch.is_tensor(got):
        return Comparison(name=name, shape=list(want.shape), passed=False, note=f"expected a tensor, got {type(got).__name__}")
    if type(got) is not torch.Tensor:  # a subclass's __torch_function__ could answer isclose/isfinite itself
        return Comparison(name=name, shape=list(want.shape), passed=False,
                          note=f"returns a {type(got).__name__}, a torch.Tensor subclass: outputs must be plain tensors")
    if tuple(got.shape) != tuple(want.shape):
        return Comparison(name=name, shape=list(want.shape), passed=False,
                          note=f"shape {tuple(got.shape)} differs from the reference's {tuple(want.shape)}")
    if want.is_floating_point() and got.dtype != expect_dtype:
        return Comparison(name=name, shape=list(want.shape), passed=False,
                          note=f"dtype {got.dtype} differs from the contract's {expect_dtype}")
    g, w = got.detach().double().cpu(), want.detach().double().cpu()
    finite = torch.isfinite(g)
    bad = ~torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=False) | ~finite
    diff = (g - w).abs()
    diff = torch.where(finite, diff, torch.full_like(diff, float("inf")))
    rel = diff / w.abs().clamp_min(1e-12)
    count = int(bad.sum())
    first = [int(i) for i in bad.nonzero()[0].tolist()] if count else None
    note = "" if count == 0 else (f"{int((~finite).sum())} non-finite values (NaN: unwritten or poisoned output)"
                                  if not bool(finite.all()) else "")
    # Elementwise atol alone is weak when outputs are as small as atol (a softmax over 8192 columns is
    # ~1.2e-4 per entry): also bound the error relative to the output's norm.
    rel_l2 = _relative_l2(g, w, finite)
    if count == 0 and rel_l2 is not None and rel_l2 > REL_L2_FACTOR * rtol:
        count, note = int(w.numel()), f"relative L2 error {rel_l2:.3g} exceeds {REL_L2_FACTOR * rtol:g}"
    return Comparison(name=name, shape=list(want.shape), passed=count == 0,
                      max_abs_err=float(diff.max()) if diff.numel() else 0.0,
                      max_rel_err=float(rel.max()) if rel.numel() else 0.0, mismatches=count,
                      numel=int(w.numel()), first_bad_index=first, note=note)


def _relative_l2(g: Any, w: Any, finite: Any) -> float | None:
    norm = float(w.norm())
    if not bool(finite.all()) or norm == 0.0:
        return None
    return float((g - w).norm()) / norm


def _compare_all(label: str, got: Any, want: Any, rtol: float, atol: float, dtype: Any) -> TrialResult:
    gots, wants = flatten(got), flatten(want)
    if len(gots) != len(wants):
        return TrialResult(label=label, passed=False, findings=[Finding(
            check="outputs", message=f"candidate returns {len(gots)} outputs, the reference {len(wants)}")])
    comps = [compare(f"output[{i}]" if len(wants) > 1 else "output", g, w, rtol, atol, dtype)
             for i, (g, w) in enumerate(zip(gots, wants, strict=True))]
    return TrialResult(label=label, passed=all(c.passed for c in comps), comparisons=comps)


def _inputs_unchanged(label: str, inputs: list[Any], snapshot: list[Any]) -> list[Finding]:
    import torch

    out = []
    for i, (x, s) in enumerate(zip(inputs, snapshot, strict=True)):
        if torch.is_tensor(x) and not torch.equal(x, s):
            out.append(Finding(check="input-mutation", message=f"{label}: forward modified input {i} in place"))
    return out


def _clone(inputs: list[Any]) -> list[Any]:
    import torch

    return [x.clone() if torch.is_tensor(x) else x for x in inputs]


def check_variant(ref_mod: ModuleType, cand_mod: ModuleType, cand_path: Path, spec: Spec | None,
                  variant: Variant | None, *, label: str, device: str, precision: str, trials: int, seed: int,
                  full: bool, batch_size: int | None = None, audit_torch: bool = False) -> CorrectnessReport:
    """All trials of one variant; `full` adds the same-storage call, ghost replay and degeneracy flags."""
    import torch

    dtype = run_dtype(variant, precision)
    rtol, atol = tolerance(dtype, precision, variant)
    report = CorrectnessReport(variant=label, dtype=dtype, rtol=rtol, atol=atol)

    def case(s: int) -> list[Any]:
        try:
            return build_case(ref_mod, spec, variant, seed=s, device=device, dtype=dtype, batch_size=batch_size).inputs
        except Exception as exc:
            raise BadInput(f"cannot build inputs for {label}: {describe(exc)}") from exc

    try:
        init = build_case(ref_mod, spec, variant, seed=seed, device="cpu", dtype=dtype, batch_size=batch_size).init_args
    except Exception as exc:
        raise BadInput(f"cannot build inputs for {label}: {describe(exc)}") from exc
    try:
        pair = ModelPair(ref_mod, cand_mod, init, device, dtype, seed)
    except CandidateInitError as exc:
        report.findings.append(Finding(check="runtime", line=error_line(exc.__cause__, cand_path),
                                       message=f"{label}: {exc}"))
        return report

    def reference(inputs: list[Any]) -> Any:
        try:
            with torch.no_grad():
                return pair.ref(*pair.reference_inputs(_clone(inputs)))
        except Exception as exc:
            raise BadInput(f"the reference fails on its own inputs ({label}): {describe(exc)}") from exc

    def candidate(inputs: list[Any], trial_label: str, *, ghost: bool = False) -> tuple[Any, int, Finding | None]:
        try:
            with torch.no_grad(), poisoned_allocations(), count_launches(ghost=ghost) as counter:
                out = pair.cand(*inputs)
                if device != "cpu":
                    getattr(torch, device.split(":")[0]).synchronize()
            return out, counter.count, None
        except Exception as exc:
            return None, 0, Finding(check="runtime", line=error_line(exc, cand_path),
                                    message=f"{trial_label}: forward raised {describe(exc)}")

    first_out, first_inputs, first_ref = None, None, None
    for k in range(trials):
        inputs = case(seed + 1000 * k)
        want = reference(inputs)
        snapshot = _clone(inputs)
        got, launches, err = candidate(inputs, f"trial {k}")
        report.launches = max(report.launches, launches)
        if err:
            report.trials.append(TrialResult(label=f"trial {k}", passed=False, findings=[err]))
            report.findings.append(err)
            return report
        trial = _compare_all(f"trial {k}", got, want, rtol, atol, pair.dtype)
        trial.findings += _inputs_unchanged(f"trial {k}", inputs, snapshot)
        trial.passed = trial.passed and not trial.findings
        report.trials.append(trial)
        if k == 0:
            # a copy: a kernel that reuses its output buffer overwrites `got` on later calls
            first_out, first_inputs, first_ref = _clone(flatten(got)), snapshot, want
            if full:
                report.trials.append(_same_storage_trial(inputs, case(seed + 7), reference, candidate, rtol, atol,
                                                         pair.dtype, report))
    if report.launches == 0 and not report.findings:
        report.findings.append(Finding(check="launch", message="forward launched no Triton kernel at run time",
                                       hint="the output must be computed by the file's own Triton kernels"))
    if full and first_out is not None:
        if report.launches > 0:  # with nothing launched there is nothing to replay as a ghost
            _ghost_replay(first_inputs, first_out, candidate, rtol, atol, report, audit_torch=audit_torch)
        report.degenerate = degenerate_flags(first_ref, reference(case(seed + 99)), rtol, atol)
    return report


def _same_storage_trial(inputs, fresh, reference, candidate, rtol, atol, dtype, report) -> TrialResult:
    """Call again on the same tensors holding new values: defeats caches keyed on pointers."""
    for x, y in zip(inputs, fresh, strict=True):
        if hasattr(x, "copy_"):
            x.copy_(y)
    want = reference(inputs)
    snapshot = _clone(inputs)
    got, _, err = candidate(inputs, "same-storage call")
    if err:
        report.findings.append(err)
        return TrialResult(label="same storage, new values", passed=False, findings=[err])
    trial = _compare_all("same storage, new values", got, want, rtol, atol, dtype)
    trial.findings += _inputs_unchanged("same-storage call", inputs, snapshot)
    if not trial.passed:
        trial.findings.append(Finding(check="stale-output", message="a second call on the same input storage with "
                                      "new values returned a wrong result (output cached on input identity?)"))
    trial.passed = trial.passed and not trial.findings
    return trial


def _ghost_replay(inputs, real_out, candidate, rtol, atol, report: CorrectnessReport, *,
                  audit_torch: bool = False) -> None:
    """With every Triton launch a no-op the output must change, else the kernels did not do the work.

    With `audit_torch`, the same call records heavy torch operations: with the kernels no-ops,
    anything recorded ran from the candidate's own host code (a GEMM in torch, a Triton epilogue).
    """
    audit = torch_compute_audit() if audit_torch else contextlib.nullcontext([])
    with audit as heavy:
        ghost_out, _, err = candidate(_clone(inputs), "ghost replay", ghost=True)
    if heavy:
        report.findings.append(Finding(check="torch-compute", message=f"at run time forward ran torch "
                                       f"{', '.join(heavy)}: the work must happen in the file's Triton kernels",
                                       hint="compute it inside a @triton.jit kernel"))
    if err is not None:
        report.ghost_changed = True
        return
    same = all(compare("ghost", g, w, rtol, atol, getattr(g, "dtype", None)).passed
               for g, w in zip(flatten(ghost_out), flatten(real_out), strict=False))
    report.ghost_changed = not same
    if same:
        report.findings.append(Finding(check="ghost", message="with its Triton kernels replaced by no-ops the "
                                       "candidate returns the same output: the kernels do not compute the result"))


def degenerate_flags(ref_a: Any, ref_b: Any, rtol: float, atol: float) -> list[str]:
    """Reference outputs that make 'correct' meaningless (shared/reference/kernelbench.md)."""
    import torch

    flags = []
    outs_a, outs_b = flatten(ref_a), flatten(ref_b)
    for i, (a, b) in enumerate(zip(outs_a, outs_b, strict=False)):
        if not torch.is_tensor(a) or not a.is_floating_point():
            continue
        tag = f"output[{i}] " if len(outs_a) > 1 else "output "
        if a.numel() > 1 and bool((a == a.flatten()[0]).all()):
            flags.append(tag + "is constant")
        if a.shape == b.shape and torch.allclose(a, b, rtol=rtol, atol=atol):
            flags.append(tag + "does not depend on the input")
        if torch.allclose(torch.zeros_like(a), a, rtol=rtol, atol=atol):
            flags.append(tag + "is matched by zeros")
    return flags
