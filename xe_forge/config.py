"""Settings: flags over XE_FORGE_* environment variables over a .env file over defaults.

The API key is a SecretStr: it prints as '**********', is never logged, and the evaluation worker's
environment has it removed (verify/sandbox.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from xe_forge.errors import InputError

PROVIDER_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AZURE_API_KEY", "GROQ_API_KEY",
                     "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", "TOGETHER_API_KEY")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="XE_FORGE_", env_file=".env", extra="ignore")

    model: str | None = None
    api_base: str | None = None
    api_key: SecretStr | None = None
    llm_timeout: float = 180.0
    llm_retries: int = 3
    llm_max_tokens: int = 8000
    llm_temperature: float = 0.2
    device: str = "auto"
    target: str | None = None
    timeout: float = 300.0
    trials: int = 3
    max_iters: int = 4
    run_dir: Path = Path("runs")
    kb_budget_tokens: int = 2500

    def llm_configured(self) -> bool:
        return bool(self.model)

    def key_source(self) -> str | None:
        """Where an API key would come from (the name only, never the value)."""
        if self.api_key is not None:
            return "XE_FORGE_API_KEY"
        return next((v for v in PROVIDER_KEY_VARS if os.environ.get(v)), None)


def load_settings(**overrides: object) -> Settings:
    """Settings with CLI flags applied on top (None means 'flag not given').

    A bad value (XE_FORGE_TRIALS=many) is one InputError naming the setting; the value itself is
    left out of the message, since it could be a key.
    """
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as err:
        first = err.errors()[0]
        name = ".".join(str(p) for p in first["loc"])
        raise InputError(f"setting '{name}' (XE_FORGE_{name.upper()} or its flag): {first['msg']}") from None
