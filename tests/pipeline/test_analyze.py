"""The static analysis ties `dot-operand-upcast` to the cast that feeds tl.dot, never to a cast after it."""

from __future__ import annotations

from xe_forge.pipeline.analyze import analyze_source

from .helpers import EXAMPLE_12

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def k(a_ptr, b_ptr, bias_ptr, out_ptr, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        a = tl.load(a_ptr + offs[:, None] * K + k0 + offs[None, :]){a_cast}
        b = tl.load(b_ptr + offs[:, None] * K + k0 + offs[None, :])
        acc += tl.dot({a_arg}, b)
    bias = tl.load(bias_ptr + offs).to(tl.float32)
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], acc + bias[None, :])
'''


def _upcast(source: str):
    found = [i for i in analyze_source(source) if i.kind == "dot-operand-upcast"]
    return (found[0].line, source.splitlines()[found[0].line - 1].strip()) if found else None


def test_a_cast_after_the_dot_is_not_an_operand_upcast():
    assert _upcast(KERNEL.format(a_cast="", a_arg="a")) is None  # only the bias is cast


def test_the_operand_cast_is_the_line_reported():
    line, text = _upcast(KERNEL.format(a_cast=".to(tl.float32)", a_arg="a"))
    assert text.startswith("a = tl.load(") and text.endswith(".to(tl.float32)")
    line, text = _upcast(KERNEL.format(a_cast="", a_arg="a.to(tl.float32)"))  # cast inside the call
    assert "tl.dot(a.to(tl.float32), b)" in text


def test_example_12_reports_the_load_feeding_the_dot():
    source = EXAMPLE_12.read_text()
    line, text = _upcast(source)
    assert text == ").to(tl.float32)" and "tl.dot" in "\n".join(source.splitlines()[line:line + 8])
