"""Red team 3, root cause 6: the interpreter forgave what a GPU does not promise (verify/strict_interpreter.py).

A masked load without `other=` read 0 in its masked-off lanes, `tl.multiple_of` was never checked, and
a grid of any size ran. In the candidate's process these now behave as strictly as a GPU: masked-off
lanes read NaN, a broken hint raises, a grid past CUDA's limits is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.strict_interpreter import masked_off_value

from .helpers import failed, source

SCRIPT = textwrap.dedent('''
    import torch, triton, triton.language as tl
    from xe_forge.verify import strict_interpreter
    assert strict_interpreter.install()

    @triton.jit
    def row_sum(x, out, n, B: tl.constexpr, OTHER: tl.constexpr):
        o = tl.arange(0, B)
        v = tl.load(x + o, mask=o < n, other=0.0) if OTHER else tl.load(x + o, mask=o < n)
        tl.store(out, tl.sum(v))

    @triton.jit
    def hinted(x, out, n, B: tl.constexpr):
        n = tl.multiple_of(n, 16)
        o = tl.arange(0, B)
        tl.store(out + o, tl.load(x + o, mask=o < n, other=0.0), mask=o < n)

    @triton.jit
    def shifted(x, out, n, SHIFT: tl.constexpr, B: tl.constexpr, MASKED: tl.constexpr):
        o = tl.arange(0, B)
        if MASKED:
            v = tl.load(x + o + SHIFT, mask=o + SHIFT < n, other=0.0)
        else:
            v = tl.load(x + o + SHIFT)
        tl.store(out + o, v)

    @triton.jit
    def spill(x, out, B: tl.constexpr):
        o = tl.arange(0, B)
        tl.store(out + o + 1, tl.load(x + o))

    x, out, full = torch.randn(10), torch.zeros(1), torch.zeros(16)
    sixteen = torch.randn(16)
    shifted[(1,)](sixteen, full, 16, SHIFT=0, B=16, MASKED=False); print("inside ok")
    shifted[(1,)](sixteen, full, 16, SHIFT=4, B=16, MASKED=True); print("masked-past-end ok")
    shifted[(1,)](torch.randn(32)[:16], full, 16, SHIFT=4, B=16, MASKED=False); print("same-storage ok")
    row_sum[(1,)](x, out, 10, B=16, OTHER=False); print("no-other", float(out))
    row_sum[(1,)](x, out, 10, B=16, OTHER=True); print("other", abs(float(out) - float(x.sum())) < 1e-5)
    hinted[(1,)](sixteen, full, 16, B=16); print("hint-kept ok")  # x has 10: 16 unmasked lanes read past it
    for name, launch in [("hint-broken", lambda: hinted[(1,)](x, full, 10, B=16)),
                         ("grid-y", lambda: row_sum[(1, 70000)](x, out, 10, B=16, OTHER=True)),
                         ("load-past-end", lambda: shifted[(1,)](sixteen, full, 16, SHIFT=4, B=16, MASKED=False)),
                         ("store-past-end", lambda: spill[(1,)](sixteen, full, B=16))]:
        try:
            launch(); print(name, "ran")
        except Exception as exc:
            print(name, "refused", any(s in str(exc) for s in ("multiple of 16", "past the 65535", "consecutive",
                                                               "equal values", "outside every tensor")))
''')


def test_the_interpreter_reads_nan_where_masked_off_checks_hints_and_limits_grids():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    ran = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in ran.stdout.splitlines())
    assert lines["no-other"] == "nan", "a sum over masked-off lanes must not come out right"
    assert lines["other"] == "True" and lines["hint-kept"] == "ok"
    assert lines["hint-broken"] == "refused True" and lines["grid-y"] == "refused True"
    assert lines["inside"] == lines["masked-past-end"] == lines["same-storage"] == "ok"
    assert lines["load-past-end"] == "refused True", "an unmasked read past the tensor must not pass (red team 4, R5)"
    assert lines["store-past-end"] == "refused True", "an unmasked write past the tensor must not pass"


def test_masked_off_lanes_read_nan_or_the_largest_integer():
    assert np.isnan(masked_off_value(np.dtype(np.float16)))
    assert masked_off_value(np.dtype(np.int32)) == 2**31 - 1
    assert masked_off_value(np.dtype(np.bool_)) is None


@pytest.mark.slow
def test_a_kernel_summing_masked_off_lanes_fails_where_k_is_not_a_multiple_of_its_tile(evaluator: Evaluator,
                                                                                        linear):
    text = source("linear/good.py")
    honest = evaluator.evaluate(text, linear, unseen=True)
    assert honest.passed, honest.feedback()
    zero_fill = text.replace("(k[None, :] < K), other=0.0)", "(k[None, :] < K))")
    zero_fill = zero_fill.replace("(k[:, None] < K), other=0.0)", "(k[:, None] < K))")
    assert zero_fill.count("other=0.0") == 1, "only the bias keeps other="
    verdict = evaluator.evaluate(zero_fill, linear, unseen=True)
    failed(verdict, "unseen")
