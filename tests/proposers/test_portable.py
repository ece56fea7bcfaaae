"""rules/portable.py: every @triton.autotune an output carries names its own benchmark for Triton's
interpreter, once, in a form the verifier's static checks accept."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
import rules_harness as h  # noqa: E402  (sets TRITON_INTERPRET before triton kernels are defined)

from xe_forge.proposers.rules.portable import BENCH, DO_BENCH, portable_autotune  # noqa: E402
from xe_forge.verify.static import check_source  # noqa: E402


def test_an_autotuned_file_gets_the_interpreter_benchmark_once_and_stays_legal():
    source = h.fixture_source("gemm_autotuned")
    out = portable_autotune(source)
    assert out.count(DO_BENCH) == 1 and out.count(f"def {BENCH}(") == 1 and "import triton\n" in out
    assert "os.environ" not in out and "getenv" not in out  # the environment tells a check from production
    assert portable_autotune(out) == out  # idempotent
    said = [f.message for f in check_source(out).findings]
    assert said == [f.message for f in check_source(source).findings]  # nothing the verifier refuses is added
    compile(out, "out.py", "exec")


def test_a_file_without_autotune_is_left_as_it_is():
    source = h.fixture_source("gemm_literal")
    assert portable_autotune(source) == source


def test_a_one_line_decorator_stays_on_one_line():
    out = portable_autotune('import triton\n\n\n@triton.autotune(configs=C, key=["n"])\n@triton.jit\ndef k(n):\n'
                            '    pass\n')
    assert '@triton.autotune(configs=C, key=["n"], do_bench=' in out
