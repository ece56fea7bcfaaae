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
