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
