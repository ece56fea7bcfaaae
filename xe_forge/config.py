"""Configuration: CLI flags -> Settings -> one RunRequest.

Settings layers flags over XE_FORGE_* environment variables over a .env file over defaults. The run
options (device, target, engine, model, max_iters, timeout, trials, run_dir, profile) are declared once, in
RunOptions: Settings inherits them, so each has its XE_FORGE_* variable, and RunRequest inherits
them, so `optimize`, every problem of a batch and `--resume` read the same fields. A new run option
is one field here and one flag in the CLI.

The API key is a SecretStr: it prints as '**********', is never logged, never stored in a
RunRequest, and the evaluation worker's environment has it removed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from xe_forge.errors import InputError

PROVIDER_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AZURE_API_KEY", "GROQ_API_KEY",
                     "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", "TOGETHER_API_KEY")

Engine = Literal["auto", "llm", "rules"]


class RunOptions(BaseModel):
    """How a run goes; the same for every problem of a batch."""

    device: str = Field("auto", description="auto | xpu | cuda | cpu (auto: xpu, then cuda, then cpu)")
    target: str | None = Field(None, description="knowledge-base target; None: detected from the device")
    engine: Engine = Field("auto", description="auto: llm when a model is configured, else rules")
    model: str | None = Field(None, description="LiteLLM model id")
    max_iters: int = Field(4, ge=0, description="CoVeR iterations per stage")
    # a compile-and-run at spec shapes takes seconds (5-10 s for a check of an example under the CPU
    # interpreter): 120 s ends a hang soon, with room for autotuning's compiles on a GPU
    timeout: float = Field(120.0, gt=0, description="seconds before one candidate evaluation is killed")
    trials: int = Field(3, ge=1, description="random-input correctness trials per shape")
    run_dir: Path = Field(Path("runs"), description="where run directories are created")
    profile: bool = Field(False, description="profile the kernel before each stage (ncu / VTune); the limiter "
                                             "steers the next candidate and the report shows the roofline")


class Settings(BaseSettings, RunOptions):
    """Run options plus what only the process needs (the LLM endpoint and its key, budgets)."""

    model_config = SettingsConfigDict(env_prefix="XE_FORGE_", env_file=".env", extra="ignore")

    api_base: str | None = None
    api_key: SecretStr | None = None
    llm_timeout: float = 180.0
    llm_retries: int = 3
    llm_max_tokens: int = 8000
    llm_temperature: float = 0.2
    kb_budget_tokens: int = 2500

    def llm_configured(self) -> bool:
        return bool(self.model)

    def key_source(self) -> str | None:
        """Where an API key would come from (the name only, never the value)."""
        if self.api_key is not None:
            return "XE_FORGE_API_KEY"
        return next((v for v in PROVIDER_KEY_VARS if os.environ.get(v)), None)


class RunRequest(RunOptions):
    """One optimize run: built by `optimize`, by each batch problem, and read back by `--resume` (args.json).

    Paths are absolute once the run starts, so a resume works from any directory.
    """

    kernel: str = ""
    reference: str | None = None
    spec: str | None = None
    variant: str | None = None
    stages: str | None = None
    kb_dirs: list[str] = Field(default_factory=list)

    @classmethod
    def from_settings(cls, settings: Settings, **given: object) -> RunRequest:
        """The run options from Settings (flags already applied there), plus what names this run."""
        options = settings.model_dump(include=set(RunOptions.model_fields))
        return cls(**options, **{k: v for k, v in given.items() if v is not None})

    def absolute(self) -> RunRequest:
        def resolve(p: str | None) -> str | None:
            return str(Path(p).resolve()) if p else p

        return self.model_copy(update={"kernel": resolve(self.kernel), "reference": resolve(self.reference),
                                       "spec": resolve(self.spec), "kb_dirs": [resolve(d) for d in self.kb_dirs]})


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
