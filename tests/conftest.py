"""Shared test fixtures (keep this small: suite-specific fixtures live in each suite's conftest)."""

from __future__ import annotations

import copy
import os
import sys

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(autouse=True)
def reset_dspy_settings():
    """A test that calls dspy.configure must not leave its LM or adapter to the next test."""
    yield
    settings = sys.modules.get("dspy.dsp.utils.settings")
    if settings is not None:  # only if some test imported dspy: no import cost otherwise
        settings.main_thread_config.clear()
        settings.main_thread_config.update(copy.deepcopy(settings.DEFAULT_CONFIG))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run tests marked slow (CI does; so does XE_FORGE_RUN_SLOW=1)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests are opt-in locally: skipped unless --run-slow or XE_FORGE_RUN_SLOW=1."""
    if config.getoption("--run-slow") or os.environ.get("XE_FORGE_RUN_SLOW", "") not in ("", "0"):
        return
    skip = pytest.mark.skip(reason="slow: pass --run-slow (or set XE_FORGE_RUN_SLOW=1) to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
