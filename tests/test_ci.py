"""What CI runs is what the README says, and slow tests are opt-in locally but on in CI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
SLOW_MODULE = """
import pytest

@pytest.mark.slow
def test_slow():
    pass

def test_fast():
    pass
"""


def test_ci_runs_the_readme_lint_and_test_commands():
    readme, ci = (REPO / "README.md").read_text(), (REPO / ".ci" / "run").read_text()
    command = re.search(r"Lint and run the tests.*?```bash\n(.*?)\n```", readme, re.S).group(1)
    for step in ("ruff check xe_forge tests", "--run-slow", "pip install -e '.[cpu,dev,local-llm,ray]'"):
        assert step in command and step in ci, step


@pytest.mark.parametrize(("args", "env", "outcome"), [
    ([], None, {"passed": 1, "skipped": 1}),
    (["--run-slow"], None, {"passed": 2}),
    ([], "1", {"passed": 2}),
    ([], "0", {"passed": 1, "skipped": 1}),
])
def test_slow_tests_run_only_when_asked(pytester: pytest.Pytester, monkeypatch, args, env, outcome):
    if env is None:
        monkeypatch.delenv("XE_FORGE_RUN_SLOW", raising=False)
    else:
        monkeypatch.setenv("XE_FORGE_RUN_SLOW", env)
    pytester.makeconftest((REPO / "tests" / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    pytester.makepyfile(test_marked=SLOW_MODULE)
    pytester.runpytest_inprocess("-p", "no:cacheprovider", *args).assert_outcomes(**outcome)
