"""What makes two candidates the same: their code without comments, docstrings' layout, or whitespace.

CoVeR judges each distinct candidate once: one equal to its parent is no candidate (a comment is not
an optimization), one equal to an earlier attempt gets that attempt's verdict again without running.
"""

from __future__ import annotations

import ast
import hashlib
import io
import tokenize


def source_key(code: str) -> str:
    """A digest of the code's meaning-bearing text: the AST when it parses, else its tokens minus comments."""
    try:
        text = ast.unparse(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError):
        text = _tokens_without_comments(code)
    return hashlib.sha256(text.encode()).hexdigest()


def _tokens_without_comments(code: str) -> str:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    try:
        return " ".join(t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type not in skip)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return " ".join(line.split("#", 1)[0].strip() for line in code.splitlines() if line.split("#", 1)[0].strip())
