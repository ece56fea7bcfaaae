"""Reading a kernel file out of an answer of any shape (proposers/llm/answers.py), and when two candidates
are the same (pipeline/normalize.py)."""

from __future__ import annotations

import json

import pytest

from xe_forge.pipeline.normalize import source_key
from xe_forge.proposers.llm.answers import is_kernel_module, read_code_answer, read_json_list

KERNEL = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        _k[(1,)](x, x.numel(), BLOCK=64)
        return x
'''


def _read(text: str, finish_reason: str | None = "stop"):
    return read_code_answer(text, finish_reason=finish_reason, max_tokens=4000)


@pytest.mark.parametrize("text", [
    f"```python\n{KERNEL}```",
    f"```py\n{KERNEL}```\n",
    f"~~~python\n{KERNEL}~~~",
    f"```\n{KERNEL}```",
    KERNEL,
    f"Sure, here it is:\n{KERNEL}",
    f"[[ ## code ## ]]\n{KERNEL}\n[[ ## rationale ## ]]\nfewer loads\n[[ ## completed ## ]]",
    f"[[ ## rationale ## ]]\nfewer loads\n\n[[ ## code ## ]]\n```python\n{KERNEL}```",
    json.dumps({"code": KERNEL, "rationale": "fewer loads"}),
    f"```python\r\n{KERNEL.replace(chr(10), chr(13) + chr(10))}```",
    f"Old:\n```python\nclass Model: pass\n```\nNew:\n```python\n{KERNEL}```\nDone.",
], ids=["fenced", "py", "tildes", "bare-fence", "no-fence", "prose-then-code", "markers", "rationale-first",
        "json", "crlf", "before-after"])
def test_one_complete_kernel_module_is_found_in_any_shape(text):
    answer = _read(text)
    assert answer.defect is None and is_kernel_module(answer.code)
    assert "class ModelNew" in answer.code and "_k[(1,)]" in answer.code


def test_the_rationale_is_the_field_or_else_the_prose_around_the_code():
    assert _read(f"[[ ## code ## ]]\n{KERNEL}\n[[ ## rationale ## ]]\nfewer loads").rationale == "fewer loads"
    assert "one launch" in _read(f"It is one launch now.\n```python\n{KERNEL}```").rationale


@pytest.mark.parametrize("finish", ["length", None])
def test_a_cut_answer_is_truncated_not_a_syntax_error(finish):
    cut = f"```python\n{KERNEL[:KERNEL.index('tl.store')]}"
    answer = _read(cut, finish)
    assert answer.defect == "truncated" and not answer.code
    assert ("4000 tokens" in answer.detail) == (finish == "length")


def test_an_unclosed_bracket_at_the_end_is_truncated_too():
    answer = _read(KERNEL[:KERNEL.index("x.numel()")], None)
    assert answer.defect == "truncated"


def test_broken_python_in_the_middle_goes_to_the_verifier():
    broken = KERNEL.replace("def forward(self, x):", "def forward(self, x")
    answer = _read(f"```python\n{broken}```")
    assert answer.defect is None and answer.code.startswith("import torch")


@pytest.mark.parametrize("text", ["I cannot help with that.", "```python\nprint('hi')\n```", ""])
def test_no_kernel_file_is_no_code(text):
    answer = _read(text)
    assert answer.defect == "no-code" and not answer.code


def test_lists_from_markers_json_blocks_or_inline():
    assert read_json_list('[[ ## plan ## ]]\n["fusion", "dtype"]\n[[ ## completed ## ]]', "plan") == ["fusion", "dtype"]
    assert read_json_list('```json\n{"plan": ["fusion"]}\n```', "plan") == ["fusion"]
    assert read_json_list("I'd do ['fusion'] maybe", "plan") is None  # not JSON
    assert read_json_list("nothing here", "issues") is None


def test_comments_and_whitespace_do_not_make_a_new_candidate():
    same = KERNEL.replace("class ModelNew", "# a comment\n\n\nclass ModelNew").replace("    def forward",
                                                                                     "    def forward  ")
    assert source_key(same.replace("def forward  ", "def forward")) == source_key(KERNEL)
    assert source_key(KERNEL.replace("BLOCK=64", "BLOCK=128")) != source_key(KERNEL)
    assert source_key("def f(:\n  # x\n  pass") == source_key("def f(:\n  pass")  # unparsable: tokens
