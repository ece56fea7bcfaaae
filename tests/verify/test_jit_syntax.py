"""Red team 4, R5: Python that Triton's code generator refuses ran in the CPU's interpreter and passed.

The allowlist is read from the installed Triton's code generator, so these tests also catch a Triton
whose generator learns or drops a construct (then the expectations here move with it).
"""

from __future__ import annotations

import textwrap

import pytest

from xe_forge.verify.jit_syntax import compiled_nodes
from xe_forge.verify.static import check_source

KERNEL = textwrap.dedent('''
    import torch, triton, triton.language as tl

    @triton.jit
    def rows(x, out, n, B: tl.constexpr):
        o = tl.arange(0, B)
        acc = tl.zeros((B,), tl.float32)
        for i in range(0, n):
            {body}
        tl.store(out + o, acc)

    class Model(torch.nn.Module):
        def forward(self, x):
            out = torch.empty(16)
            rows[(1,)](x, out, 4, B=16)
            return out
''')


def _syntax(body: str) -> list[str]:
    found = check_source(KERNEL.format(body=body)).findings
    assert not [f for f in found if f.check == "syntax"], found
    return [f.message for f in found if f.check == "jit-syntax"]


@pytest.mark.parametrize("body, word", [
    ("if i > 2:\n            break\n        acc += tl.load(x + o)", "break"),
    ("if i > 2:\n            continue\n        acc += tl.load(x + o)", "continue"),
    ("acc += {'a': tl.load(x + o)}['a']", "a dict literal"),
    ("acc += (lambda v: v)(tl.load(x + o))", "lambda"),
])
def test_what_no_gpu_build_compiles_is_refused_before_it_runs(body: str, word: str):
    messages = _syntax(body)
    assert len(messages) == 1 and f"`{word}`" in messages[0], messages


def test_what_kernels_write_passes():
    assert _syntax("acc += tl.load(x + o) if n > 1 else acc\n"
                   "        while n < 0:\n            n += 1\n"
                   "        acc += tl.where(o < n, tl.load(x + o), 0.0) * [1, 2][0]") == []


def test_the_allowlist_is_the_installed_code_generators():
    nodes = compiled_nodes()
    assert nodes is not None and {"For", "While", "If", "Assign", "Call"} <= nodes
    assert not {"Break", "Continue", "Try", "Lambda", "Dict"} & nodes
