"""Configuration: CLI flags -> Settings -> one RunRequest.

Settings layers flags over XE_FORGE_* environment variables over a .env file over defaults. The run
options (device, target, engine, model, reasoning effort, budget, max_iters, timeout, trials,
run_dir, profile) are declared once, in RunOptions: Settings inherits them, so each has its XE_FORGE_*
variable, and RunRequest inherits them, so `optimize`, every problem of a batch and `--resume` read
the same fields. A new run option is one field here and one flag in the CLI.

The LLM settings that have no value here (temperature, token limit, timeout) are chosen per model
from LiteLLM's local model map (proposers/llm/profile.py): a reasoning model gets no temperature and
a larger token limit; a value set here always wins.

The API key is a SecretStr: it prints as '**********', is never logged, never stored in a
RunRequest, and the evaluation worker's environment has it removed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from xe_forge.errors import InputError

PROVIDER_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AZURE_API_KEY", "GROQ_API_KEY",
                     "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", "TOGETHER_API_KEY")

Engine = Literal["auto", "llm", "rules"]
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]
_BUDGET = re.compile(r"^(?:\$\s*(?P<usd>[\d.]+)|(?P<usd2>[\d.]+)\s*(?:\$|usd)"
                     r"|(?P<tok>[\d.]+)\s*(?P<tmul>[km]?)\s*(?:tokens?|tok)"
                     r"|(?P<time>[\d.]+)\s*(?P<tunit>s|sec|m|min|h))$", re.IGNORECASE)


NO_BUDGET = ("none", "off", "unlimited")


class Budget(BaseModel):
    """A run's spending limit: dollars (LiteLLM's local cost map), tokens, or wall-clock seconds."""

    amount: float = Field(gt=0)
    unit: Literal["usd", "tokens", "seconds"]

    @classmethod
    def parse(cls, text: str) -> Budget:
        """'$2', '0.5usd', '200k tokens', '1.5m tok', '45m', '2h', '900s'; a bare number is ambiguous."""
        m = _BUDGET.match(text.strip())
        if not m:
            raise ValueError(f"budget '{text}': write dollars ($2, 0.5usd), tokens (200k tokens) or time (45m, 2h)")
        if m["usd"] or m["usd2"]:
            return cls(amount=float(m["usd"] or m["usd2"]), unit="usd")
        if m["tok"]:
            return cls(amount=float(m["tok"]) * {"": 1, "k": 1e3, "m": 1e6}[m["tmul"].lower()], unit="tokens")
        scale = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}[m["tunit"].lower()]
        return cls(amount=float(m["time"]) * scale, unit="seconds")

    def render(self, value: float | None = None) -> str:
        v = self.amount if value is None else value
        seconds = f"{v:.3g} s" if v < 120 else f"{v / 60:.1f} min"  # read back by parse(): never "0.0 min"
        return {"usd": f"${v:.4g}", "tokens": f"{v:.0f} tokens", "seconds": seconds}[self.unit]


class RunOptions(BaseModel):
    """How a run goes; the same for every problem of a batch."""

    device: str = Field("auto", description="auto | xpu | cuda | cpu (auto: xpu, then cuda, then cpu)")
    target: str | None = Field(None, description="knowledge-base target; None: detected from the device")
    engine: Engine = Field("auto", description="auto: llm when a model is configured, else rules")
    model: str | None = Field(None, description="LiteLLM model id")
    llm_reasoning_effort: ReasoningEffort | None = Field(None, description="passed to reasoning models as is")
    budget: str | None = Field(None, description="stop cleanly when spent: $2, 200k tokens, 45m")
    max_iters: int = Field(4, ge=0, description="CoVeR iterations per stage")
    # a compile-and-run at spec shapes takes seconds (5-10 s for a check of an example under the CPU
    # interpreter): 120 s ends a hang soon, with room for autotuning's compiles on a GPU
    timeout: float = Field(120.0, gt=0, description="seconds before one candidate evaluation is killed")
    trials: int = Field(3, ge=1, description="random-input correctness trials per shape")
    run_dir: Path = Field(Path("runs"), description="where run directories are created")
    profile: bool = Field(False, description="profile the kernel before each stage (ncu / VTune); the limiter "
                                             "steers the next candidate and the report shows the roofline")
    precision: Literal["keep", "allow-tf32", "bf16", "fp16"] | None = Field(
        None, description="precision policy for problems without a spec (a spec's own policy wins)")
    lower_budget: float = Field(60.0, gt=0, description="seconds of TorchInductor autotuning per lowering (port, "
                                                        "batch): past it each kernel keeps the best config so far")

    @field_validator("budget")
    @classmethod
    def _budget(cls, value: str | None) -> str | None:
        if value is None or value.strip().lower() in NO_BUDGET:
            return None if value is None else "none"
        return Budget.parse(value).render()

    def spending_limit(self) -> Budget | None:
        return Budget.parse(self.budget) if self.budget and not self.budget_off() else None

    def budget_off(self) -> bool:
        """`--budget none`: no limit, not even the default time budget of a GPU run (run_clock.py)."""
        return self.budget == "none"


class Settings(BaseSettings, RunOptions):
    """Run options plus what only the process needs (the LLM endpoint and its key, budgets)."""

    model_config = SettingsConfigDict(env_prefix="XE_FORGE_", env_file=".env", extra="ignore")

    api_base: str | None = None
    api_key: SecretStr | None = None
    llm_timeout: float | None = Field(None, gt=0, description="seconds per request; None: per model (120, reasoning 600)")
    llm_retries: int = Field(3, ge=0, description="retries of a 429, a 5xx, a dropped connection; a timeout once")
    llm_max_tokens: int | None = Field(None, gt=0, description="answer token limit; None: per model (8000, reasoning "
                                                             "25000), within the model's output limit and context")
    llm_temperature: float | None = Field(None, ge=0, description="None: 0.2, and none sent to reasoning models")
    llm_context: int | None = Field(None, gt=0, description="context window in tokens; None: LiteLLM's model map")
    kb_budget_tokens: int = 2500
    ray_address: str | None = Field(None, description="`batch`: a Ray cluster to run on (auto | HOST:PORT | "
                                                       "ray://HOST:PORT); None: this machine's GPUs")

    def llm_configured(self) -> bool:
        return bool(self.model)

    def key_source(self) -> str | None:
        """Where an API key would come from (the name only, never the value)."""
        if self.api_key is not None:
            return "XE_FORGE_API_KEY"
        return next((v for v in PROVIDER_KEY_VARS if os.environ.get(v)), None)

    def secrets(self) -> list[str]:
        """Every key value this process could send (what must never be printed or stored)."""
        values = [self.api_key.get_secret_value()] if self.api_key is not None else []
        values += [os.environ[v] for v in PROVIDER_KEY_VARS if os.environ.get(v)]
        return [v for raw in values for v in {raw, raw.strip()} if len(v.strip()) >= 6]


def strip_api_keys(settings: Settings) -> tuple[Settings, list[str]]:
    """Keys without surrounding whitespace, and a warning naming each variable that had some.

    `export KEY=$(cat key.txt)` keeps the file's newline; sent as is it makes an illegal HTTP header
    whose error message quotes the key. Provider variables are cleaned in this process's environment,
    where LiteLLM reads them.
    """
    warnings = []
    if settings.api_key is not None:
        raw = settings.api_key.get_secret_value()
        if raw != raw.strip():
            settings = settings.model_copy(update={"api_key": SecretStr(raw.strip())})
            warnings.append("XE_FORGE_API_KEY had leading or trailing whitespace (a newline?); it was stripped")
    for name in PROVIDER_KEY_VARS:
        raw = os.environ.get(name)
        if raw and raw != raw.strip():
            os.environ[name] = raw.strip()
            warnings.append(f"{name} had leading or trailing whitespace (a newline?); it was stripped")
    return settings, warnings


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
    output: str | None = Field(None, description="-o: where the best verified kernel is written")

    @classmethod
    def from_settings(cls, settings: Settings, **given: object) -> RunRequest:
        """The run options from Settings (flags already applied there), plus what names this run."""
        options = settings.model_dump(include=set(RunOptions.model_fields))
        return cls(**options, **{k: v for k, v in given.items() if v is not None})

    def absolute(self) -> RunRequest:
        def resolve(p: str | None) -> str | None:
            return str(Path(p).resolve()) if p else p

        return self.model_copy(update={"kernel": resolve(self.kernel), "reference": resolve(self.reference),
                                       "spec": resolve(self.spec), "output": resolve(self.output),
                                       "kb_dirs": [resolve(d) for d in self.kb_dirs]})


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
