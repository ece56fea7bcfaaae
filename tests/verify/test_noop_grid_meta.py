"""A no-op launch hands its grid callable what a real launch does (red team 4, R6).

Warm and ghost calls skip the kernel but still call the grid callable, so a count kept there cannot
tell them from real launches. The interpreter hands a real launch's grid callable host copies with
tensors and ints as interpreter values; a no-op launch used to hand it the torch tensors as passed,
so host code could count real launches and be wrong only after the few a check runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import torch, triton, triton.language as tl
    from xe_forge.verify import hooks

    @triton.jit
    def copy(src, dst, n, B: tl.constexpr):
        o = tl.arange(0, B)
        tl.store(dst + o, tl.load(src + o, mask=o < n, other=0.0), mask=o < n)

    seen = []
    def grid(meta):
        seen.append({k: type(v).__name__ for k, v in meta.items()})
        return (1,)

    src, dst = torch.randn(8), torch.zeros(8)
    copy[grid](src, dst, 8, B=8)
    hooks._ask_grid(copy, (src, dst, 8), {"grid": grid, "warmup": False, "B": 8})
    real, noop = seen
    print("same" if real == noop else f"differ {real} {noop}")
    print("tensor-free" if "Tensor" not in noop.values() else "torch tensors")
''')


def test_a_noop_launch_hands_the_grid_callable_what_a_real_launch_does():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    ran = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["same", "tensor-free"], ran.stdout


def test_the_models_construction_seed_looks_like_a_users_run():
    """Red team 4, R6: a 62-bit seed at construction told a check from a script seeding 0 or 42."""
    from xe_forge.verify.seeds import COMMON_SEEDS, SeedStream, construction_seed

    stream = SeedStream(b"secret", "kernel")
    drawn = [construction_seed(stream.draw()) for _ in range(300)]
    assert all(0 <= s < 2**64 for s in drawn)
    wide = sum(s >= 2**32 for s in drawn)  # an unseeded process reports a 64-bit seed
    common = sum(s in COMMON_SEEDS for s in drawn)
    assert 50 < wide < 250 and 50 < common < 250, (wide, common)
