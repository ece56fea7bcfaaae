"""Settings (xe_forge/config.py): flags over XE_FORGE_* variables over .env over defaults, and an
API key that never shows up in anything printed."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from xe_forge.config import PROVIDER_KEY_VARS, Settings, load_settings
from xe_forge.errors import InputError

SECRET = "sk-test-SECRET"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No XE_FORGE_* or provider key from the developer's shell, and no .env from the checkout."""
    import os

    for name in list(os.environ):
        if name.startswith("XE_FORGE_") or name in PROVIDER_KEY_VARS:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def test_defaults_without_environment():
    settings = load_settings()
    assert settings.model is None and not settings.llm_configured()
    assert settings.api_key is None and settings.key_source() is None
    assert settings.device == "auto" and settings.trials == 3


def test_environment_variables_are_read(monkeypatch):
    monkeypatch.setenv("XE_FORGE_MODEL", "openai/gpt-test")
    monkeypatch.setenv("XE_FORGE_API_BASE", "http://localhost:9999/v1")
    monkeypatch.setenv("XE_FORGE_TRIALS", "5")
    monkeypatch.setenv("XE_FORGE_DEVICE", "cpu")
    monkeypatch.setenv("XE_FORGE_LLM_TEMPERATURE", "0.7")
    settings = load_settings()
    assert settings.model == "openai/gpt-test" and settings.llm_configured()
    assert settings.api_base == "http://localhost:9999/v1"
    assert settings.trials == 5 and settings.device == "cpu" and settings.llm_temperature == 0.7


def test_flags_override_the_environment_and_absent_flags_do_not(monkeypatch):
    monkeypatch.setenv("XE_FORGE_MODEL", "from-env")
    monkeypatch.setenv("XE_FORGE_TRIALS", "5")
    settings = load_settings(model="from-flag", trials=None)
    assert settings.model == "from-flag"
    assert settings.trials == 5, "a flag left at None must not erase the environment's value"


def test_dotenv_is_read_below_the_environment(monkeypatch, tmp_path):
    (tmp_path / ".env").write_text("XE_FORGE_MODEL=from-dotenv\nXE_FORGE_MAX_ITERS=9\n")
    monkeypatch.setenv("XE_FORGE_MODEL", "from-env")
    settings = load_settings()
    assert settings.model == "from-env" and settings.max_iters == 9


def test_a_bad_environment_value_is_one_input_error_without_the_value(monkeypatch):
    monkeypatch.setenv("XE_FORGE_TRIALS", "many-SECRETISH")
    with pytest.raises(InputError, match="XE_FORGE_TRIALS") as info:
        load_settings()
    assert info.value.exit_code == 2
    assert "SECRETISH" not in str(info.value)


def test_api_key_is_secret_in_every_printed_form(monkeypatch):
    monkeypatch.setenv("XE_FORGE_API_KEY", SECRET)
    settings = load_settings()
    assert isinstance(settings.api_key, SecretStr)
    assert settings.api_key.get_secret_value() == SECRET
    for text in (str(settings), repr(settings), settings.model_dump_json(), str(settings.model_dump()),
                 f"{settings}", f"{settings.api_key}"):
        assert SECRET not in text


def test_key_source_names_the_variable_never_the_value(monkeypatch):
    monkeypatch.setenv("XE_FORGE_API_KEY", SECRET)
    assert load_settings().key_source() == "XE_FORGE_API_KEY"
    monkeypatch.delenv("XE_FORGE_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET")
    assert load_settings().key_source() == "ANTHROPIC_API_KEY"


def test_an_empty_provider_variable_is_not_a_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert Settings().key_source() is None
