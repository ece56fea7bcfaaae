"""The interpreter re-patched triton.language on every device-function call (verify/interpreter_speed.py):
a third of a CPU check's runner time. Now a launch patches each language module once, and the results
are the same."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import torch, triton, triton.language as tl
    from triton.runtime import interpreter as interp
    from xe_forge.verify import interpreter_speed
    original, patched = interp._patch_lang, []
    def counting(fn):
        patched.append(fn.__name__)
        return original(fn)
    interp._patch_lang = counting
    assert interpreter_speed.install()

    @triton.jit
    def swish(x):
        return x * tl.sigmoid(x)  # tl.sigmoid: a device function of triton.language.standard (tl.core)

    @triton.jit
    def kernel(x, out, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        v = tl.load(x + o)
        for _ in range(8):
            v = swish(v)
        tl.store(out + o, v)

    x = torch.randn(64)
    for launch in range(2):
        out = torch.empty(64)
        kernel[(4,)](x, out, B=16)
    want = x.clone()
    for _ in range(8):
        want = want * torch.sigmoid(want)
    print(torch.allclose(out, want, atol=1e-6), " ".join(patched))
''')


def test_a_launch_patches_each_language_module_once_and_computes_the_same():
    ran = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITON_INTERPRET": "1"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    same, names = ran.stdout.split(" ", 1)
    assert same == "True"
    # per launch: the kernel's modules, then tl.core once for tl.sigmoid; 4 programs x 8 calls of swish
    # and of sigmoid each re-patched every time before (66 per launch)
    assert names.split() == ["kernel", "sigmoid"] * 2


OVERFLOW_SCRIPT = textwrap.dedent('''
    import dataclasses
    import torch, triton, triton.language as tl
    from triton.runtime import interpreter as interp
    from xe_forge.verify import interpreter_speed
    calls = []
    original = type(interp.interpreter_semantic).binary_op_sanitize_overflow_impl
    def counting(self, *args):
        calls.append(1)
        return original(self, *args)
    type(interp.interpreter_semantic).binary_op_sanitize_overflow_impl = counting
    assert interpreter_speed.install()

    @triton.jit
    def gather(x, out, n, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        acc = tl.zeros((B,), tl.float32)
        for i in range(4):
            idx = (o * 3 + i * 7) % n
            acc += tl.load(x + idx)
        tl.store(out + o, acc)

    @triton.jit
    def scale(out, a):
        tl.store(out + tl.arange(0, 4), tl.full((4,), a, tl.int32) * 4)

    x, out = torch.randn(64), torch.empty(64)
    gather[(4,)](x, out, 64, B=16)
    o = torch.arange(64)
    want = sum(x[(o * 3 + i * 7) % 64] for i in range(4))
    print("same" if torch.allclose(out, want) else "differ", len(calls))
    interp.interpreter_builder.options = dataclasses.replace(interp.interpreter_builder.options, debug=True)
    try:
        scale[(1,)](torch.empty(4, dtype=torch.int32), 2**30)
        print("debug-overflow ran")
    except Exception as exc:  # the interpreter's InterpreterError around the AssertionError
        print("debug-overflow", "refused" if "overflow detected" in str(exc) else str(exc))
''')


def test_overflow_checks_run_only_where_their_assert_is_kept():
    """Without `debug` the interpreter's integer overflow checks went to a device_assert that drops them
    (about 40% of a CPU check's interpreter time): skipped now, same results; with `debug` they run."""
    ran = subprocess.run([sys.executable, "-c", OVERFLOW_SCRIPT], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITON_INTERPRET": "1"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    first, second = ran.stdout.splitlines()
    assert first == "same 0", first
    assert second == "debug-overflow refused", second
