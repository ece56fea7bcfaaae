"""Comparing outputs with the reference's, in the reference process (the candidate never runs here).

Elementwise `|got - want| <= atol * m + rtol * |want|`, with m the reference output's own magnitude
(its RMS; 1 where it is degenerate): an output at 1e-3 is not within atol of zeros, and one at 1e4
allows the rounding a sum at that size has. NaN/Inf never pass, dtype and shape by the contract; and, because elementwise atol alone is weak when outputs are as small as atol (a softmax
over 8192 columns is ~1.2e-4 per entry), a bound on the error relative to the output's norm. That
relative bound is dropped where the reference is degenerate (near zero or constant): dividing by
rounding noise would reject an exact port; there the absolute tolerance judges, and the trials at
perturbed weights (which move such outputs off zero) carry the decision.
"""

from __future__ import annotations

from typing import Any

from xe_forge.verify.models import Comparison

TOLERANCES = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2, "float64": 1e-7}
TF32_TOLERANCE = 5e-3
REL_L2_FACTOR = 10.0


def tolerance(dtype: str, precision: str, rtol: float | None = None, atol: float | None = None) -> tuple[float, float]:
    """The precision contract as numbers; a spec variant's rtol/atol override the table."""
    tol = TOLERANCES.get(dtype, 1e-4)
    if dtype == "float32" and precision == "allow-tf32":
        tol = TF32_TOLERANCE
    return (tol if rtol is None else rtol), (tol if atol is None else atol)


def run_dtype(variant_dtype: str | None, precision: str) -> str:
    if precision in ("bf16", "fp16"):
        return {"bf16": "bfloat16", "fp16": "float16"}[precision]
    return variant_dtype or "float32"


def flatten(out: Any) -> list[Any]:
    if isinstance(out, tuple | list):
        return [y for x in out for y in flatten(x)]
    return [out]


def degenerate(want: Any, atol: float) -> bool:
    """Near zero (every |value| <= atol) or constant: relative measures divide by noise there."""
    import torch

    if not torch.is_tensor(want) or not want.is_floating_point() or want.numel() == 0:
        return False
    w = want.detach()
    return bool(w.abs().max() <= atol) or (w.numel() > 1 and bool((w == w.flatten()[0]).all()))


def magnitude(want: Any, atol: float) -> float:
    """What the absolute tolerance is in units of: the RMS of the reference output's finite values, or 1
    where the output is degenerate (near zero or constant: there the absolute tolerance judges as it is)."""
    import torch

    if degenerate(want, atol):
        return 1.0
    w = want.detach().double()
    w = w[torch.isfinite(w)]
    return float(w.square().mean().sqrt()) if w.numel() else 1.0


def compare(name: str, got: Any, want: Any, rtol: float, atol: float, expect_dtype: Any,
            eager: Any = None, exact: Any = None) -> Comparison:
    """`eager`: the reference run eagerly in a 16-bit run dtype; its error sets the 16-bit contract (precision.py).
    `exact`: the reference in float64 on the same values, where an fp32 comparison failed: the fp32
    reference's own error against it sets the same contract in fp32 (precision.relaxed_exact)."""
    import torch

    from xe_forge.verify import precision

    if not torch.is_tensor(want):
        ok = got == want
        return Comparison(name=name, shape=[], passed=bool(ok), note="" if ok else f"expected {want!r}, got {got!r}")
    if not torch.is_tensor(got):
        return Comparison(name=name, shape=list(want.shape), passed=False,
                          note=f"expected a tensor, got {type(got).__name__}")
    if type(got) is not torch.Tensor:
        return Comparison(name=name, shape=list(want.shape), passed=False,
                          note=f"returns a {type(got).__name__}, a torch.Tensor subclass: outputs must be plain tensors")
    if tuple(got.shape) != tuple(want.shape):
        return Comparison(name=name, shape=list(want.shape), passed=False,
                          note=f"shape {tuple(got.shape)} differs from the reference's {tuple(want.shape)}")
    if want.is_floating_point() and expect_dtype is not None and got.dtype != expect_dtype:
        return Comparison(name=name, shape=list(want.shape), passed=False,
                          note=f"dtype {got.dtype} differs from the contract's {expect_dtype}")
    w = want.detach().double()  # on the reference process's device: no copy of a large output to the host
    g = got.detach().to(w.device).double()
    finite = torch.isfinite(g)
    strict = ~torch.isclose(g, w, rtol=rtol, atol=atol * magnitude(want, atol), equal_nan=False) | ~finite
    bad = precision.relaxed(strict, g, w, eager, expect_dtype)
    exact = exact if torch.is_tensor(exact) and tuple(exact.shape) == tuple(want.shape) else None
    if exact is not None:
        bad = precision.relaxed_exact(bad, g, exact, want)
    eager_only = int(strict.sum()) - int(bad.sum())
    diff = (g - w).abs()
    diff = torch.where(finite, diff, torch.full_like(diff, float("inf")))
    rel = diff / w.abs().clamp_min(1e-12)
    count = int(bad.sum())
    first = _first_index(bad) if count else None
    note = "" if count == 0 else (f"{int((~finite).sum())} non-finite values (NaN: unwritten or poisoned output)"
                                  if not bool(finite.all()) else "")
    flat = degenerate(want, atol)
    rel_l2 = None if flat else _relative_l2(g, w, finite)
    limit = precision.l2_limit(REL_L2_FACTOR * rtol, w, eager, expect_dtype)
    if count == 0 and rel_l2 is not None and rel_l2 > limit and not (
            exact is not None and precision.l2_within_exact(limit, g, exact, want)):
        count, note = int(w.numel()), f"relative L2 error {rel_l2:.3g} exceeds {limit:g}"
    if count == 0 and eager_only:
        own = "the fp32 reference's own error against float64" if exact is not None else \
            f"PyTorch's own {expect_dtype} error"
        note = f"{eager_only} element(s) beyond rtol/atol are within {own} there (the precision contract)"
    return Comparison(name=name, shape=list(want.shape), passed=count == 0,
                      max_abs_err=float(diff.max()) if diff.numel() else 0.0,
                      max_rel_err=float(rel.max()) if rel.numel() else 0.0, mismatches=count,
                      numel=int(w.numel()), first_bad_index=first, note=note, degenerate=flat)


def _relative_l2(g: Any, w: Any, finite: Any) -> float | None:
    norm = float(w.norm())
    if not bool(finite.all()) or norm == 0.0:
        return None
    return float((g - w).norm()) / norm


def compare_all(got: list[Any], want: list[Any], rtol: float, atol: float, dtype: Any,
                eager: list[Any] | None = None, exact: list[Any] | None = None) -> list[Comparison] | str:
    """Every output of a tuple; a count mismatch is one message. `eager`: the reference's outputs run in a
    16-bit run dtype (the 16-bit contract, precision.py), None otherwise."""
    if len(got) != len(want):
        return f"candidate returns {len(got)} outputs, the reference {len(want)}"
    eager = eager if eager is not None and len(eager) == len(want) else [None] * len(want)
    exact = exact if exact is not None and len(exact) == len(want) else [None] * len(want)
    return [compare(f"output[{i}]" if len(want) > 1 else "output", g, w, rtol, atol, dtype, e, x)
            for i, (g, w, e, x) in enumerate(zip(got, want, eager, exact, strict=True))]


def same_outputs(a: list[Any], b: list[Any], rtol: float, atol: float) -> bool:
    """Whether two candidate outputs agree within the tolerance (ghost replay)."""
    if len(a) != len(b):
        return False
    return all(compare("ghost", x, y, rtol, atol, getattr(x, "dtype", None)).passed for x, y in zip(a, b, strict=True))


def degenerate_flags(ref_a: list[Any], ref_b: list[Any], rtol: float, atol: float) -> list[str]:
    """Reference outputs that make 'correct' meaningless (shared/reference/kernelbench.md)."""
    import torch

    flags = []
    for i, (a, b) in enumerate(zip(ref_a, ref_b, strict=False)):
        if not torch.is_tensor(a) or not a.is_floating_point():
            continue
        tag = f"output[{i}] " if len(ref_a) > 1 else "output "
        if a.numel() > 1 and bool((a == a.flatten()[0]).all()):
            flags.append(tag + "is constant")
        if torch.is_tensor(b) and a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol):
            flags.append(tag + "does not depend on the input")
        if bool((a.double().abs() <= atol).all()):
            flags.append(tag + "is matched by zeros")
    return flags


# ---------------------------------------------------------------- fingerprints of timed outputs


def fingerprint(outputs: list[Any]) -> Any:
    """[sum, sum of |x|, sum of squares, non-finite count] over every floating output, in float64 on the
    device (no sync): cheap enough for every timed call."""
    import torch

    parts = [o.detach().reshape(-1).double() for o in outputs if torch.is_tensor(o) and o.is_floating_point()]
    if not parts:
        return None
    x = torch.cat(parts)
    finite = torch.isfinite(x)
    y = torch.where(finite, x, torch.zeros_like(x))
    return torch.stack([y.sum(), y.abs().sum(), (y * y).sum(), (~finite).sum().double()])


def fingerprint_matches(got: list[float], want: list[Any], rtol: float, atol: float) -> bool:
    """Whether a fingerprint is possible for an output within the elementwise tolerance of `want`.

    With t = atol*m + rtol*|w| per element (m per output, as `compare` has it): |sum g - sum w| and |sum|g| - sum|w|| are at most sum t, and
    |sum g^2 - sum w^2| is at most sum t*(2|w| + t). An honest output always fits; a stale, empty or
    skipped one almost never does.
    """
    import torch

    floats = [w for w in want if torch.is_tensor(w) and w.is_floating_point()]
    parts = [w.detach().reshape(-1).double() for w in floats]
    if not parts or len(got) != 4:
        return not parts
    w = torch.cat(parts)
    a = w.abs()
    t = torch.cat([torch.full_like(x, atol * magnitude(f, atol)) for x, f in zip(parts, floats, strict=True)]) + rtol * a
    # one transfer for every figure (the reference process's device may be a GPU)
    total, abs_total, squares, t_sum, t_sq = torch.stack([w.sum(), a.sum(), (w * w).sum(), t.sum(),
                                                          (t * (2 * a + t)).sum()]).tolist()
    slack = 1e-9 * (abs_total + 1.0)  # float64 summation order
    bound1, bound2 = t_sum + slack, t_sq + slack
    return (got[3] == 0 and abs(got[0] - total) <= bound1 and abs(got[1] - abs_total) <= bound1
            and abs(got[2] - squares) <= bound2)


def _first_index(mask: Any) -> list[int]:
    """The index of the first True element, without listing them all: `nonzero()` of a large failing
    output asked for 11 GiB of indices on an H100 (a 2x-grown convolution) and the judge died of it."""
    import torch

    flat = int(mask.reshape(-1).to(torch.uint8).argmax())
    return [int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(mask.shape))] if mask.dim() else []
