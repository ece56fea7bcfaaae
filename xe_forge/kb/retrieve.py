"""Choosing the entries a stage's prompt gets: BM25 over entry text, within a token budget.

The anchor cut its knowledge blindly at 14k characters, so later entries silently vanished. Here the
candidates are first narrowed to the stage, the target and the installed toolchain, ranked by BM25
against the query (the kernel's issues), then whole entries are taken best-first while they fit.
Ties and entries the query does not mention are ordered by kind (constraints first: breaking one wastes
a candidate) and id, so the same inputs always give the same prompt.
"""

from __future__ import annotations

import re

from rank_bm25 import BM25Okapi

from xe_forge.kb.loader import KnowledgeBase
from xe_forge.kb.render import estimate_tokens, render_entry
from xe_forge.kb.schema import Entry
from xe_forge.toolchain import Toolchain

_WORD = re.compile(r"[a-z0-9_]+")
_STOP = frozenset("a an and are as at be by for from has have if in into is it its of on or so than that the "
                  "then this to was when where which with without".split())
_KIND_ORDER = {"constraint": 0, "recipe": 1, "pattern": 2, "config_space": 3, "example": 4}


# compound words people write either way: the joined form also gives its parts ("layernorm" finds "layer norm");
# the parts give the joined form through the bigrams below
_COMPOUNDS = {"layernorm": ("layer", "norm"), "rmsnorm": ("rms", "norm"), "groupnorm": ("group", "norm"),
              "batchnorm": ("batch", "norm"), "instancenorm": ("instance", "norm"), "logsumexp": ("log", "sum", "exp")}
# words of one family that a search for any of them should find
_ALIASES = {"normalization": "norm", "normalisation": "norm", "normalize": "norm", "normalise": "norm",
            "normalized": "norm", "normalizing": "norm", "normalizes": "norm"}


def _word(part: str) -> str:
    if len(part) > 3 and part.endswith("s") and not part.endswith("ss"):
        part = part[:-1]
    return _ALIASES.get(part, part)


def tokenize(text: str) -> list[str]:
    """Lowercase words; snake_case names also give their parts (grf_mode -> grf_mode, grf, mode);
    a plural 's' is dropped so 'warps' finds 'warp'; a compound word gives its parts (layernorm -> layer,
    norm) and two adjacent words their joined form (layer norm -> layernorm), so either spelling finds the
    other; words of one family share a stem (normalization -> norm)."""
    tokens: list[str] = []
    previous: str | None = None
    for word in _WORD.findall(text.lower()):
        parts = [word] + ([p for p in word.split("_") if p] if "_" in word else [])
        for part in parts:
            if part in _STOP:
                previous = None
                continue
            part = _word(part)
            tokens.append(part)
            tokens += _COMPOUNDS.get(part, ())
        snake = "".join(p for p in word.split("_"))
        if "_" in word and snake in _COMPOUNDS:  # layer_norm -> layernorm
            tokens.append(snake)
        if "_" not in word and word not in _STOP:
            joined = f"{previous}{_word(word)}" if previous else None
            if joined in _COMPOUNDS:
                tokens.append(joined)
            previous = _word(word)
        else:
            previous = None
    return tokens


def entry_text(entry: Entry) -> str:
    """What BM25 indexes: the title twice (it names the subject), id, stages, summary and the block."""
    parts = [entry.title, entry.title, entry.id.replace("-", " "), " ".join(entry.stages), entry.summary]
    if entry.constraint:
        parts.append(entry.constraint.rule)
        if entry.constraint.check:
            parts.append(str(entry.constraint.check.model_dump(exclude_none=True)))
    if entry.pattern:
        parts += [entry.pattern.before, entry.pattern.after, entry.pattern.rationale]
    if entry.recipe:
        parts += [entry.recipe.name, str(entry.recipe.params), " ".join(entry.recipe.preconditions),
                  entry.recipe.expected_effect]
    if entry.config_space:
        parts += [f"{name} {' '.join(sorted({k for c in configs for k in c}))}"
                  for name, configs in entry.config_space.items()]
    if entry.example:
        parts += [entry.example.teaches, entry.example.path]
    return "\n".join(parts)


def rank(kb: KnowledgeBase, query: str, *, stage: str | None = None, target: str | None = None,
         toolchain: Toolchain | None = None, kind: str | None = None) -> list[tuple[Entry, float]]:
    """Every applicable entry with its BM25 score, best first, deterministically ordered."""
    candidates = kb.filter(stage=stage, target=target, kind=kind, toolchain=toolchain)
    if not candidates:
        return []
    terms = tokenize(query)
    if terms:
        scores = BM25Okapi([tokenize(entry_text(e)) for e in candidates]).get_scores(terms)
    else:
        scores = [0.0] * len(candidates)
    scored = [(entry, round(float(score), 9)) for entry, score in zip(candidates, scores, strict=True)]
    return sorted(scored, key=lambda pair: (-pair[1], _KIND_ORDER[pair[0].kind], pair[0].id))


def fit_budget(entries: list[Entry], budget_tokens: int) -> list[Entry]:
    """Take whole entries in order while they fit; one too large is skipped, smaller ones still tried."""
    chosen: list[Entry] = []
    used = 0
    for entry in entries:
        cost = estimate_tokens(render_entry(entry) + "\n")
        if used + cost <= budget_tokens:
            chosen.append(entry)
            used += cost
    return chosen


def retrieve(kb: KnowledgeBase, query: str, *, stage: str | None, target: str | None,
             toolchain: Toolchain | None, budget_tokens: int = 2000) -> list[Entry]:
    """The best entries for a stage, target and toolchain that fit in `budget_tokens`, best first.

    Args:
        kb: the loaded knowledge base.
        query: free text, e.g. the analysis' issues for this stage.
        stage, target, toolchain: filters; None leaves that field unfiltered.
        budget_tokens: the most tokens (4 characters each) the rendered entries may take.

    Example:
        >>> retrieve(load_kb(), "grf_mode names", stage="device_tuning", target="intel-xe2",
        ...          toolchain=Toolchain(name="triton-xpu", version="3.7.2"))[0].id
        'xpu-grf-mode-names-3-7-2'
    """
    ranked = [entry for entry, _ in rank(kb, query, stage=stage, target=target, toolchain=toolchain)]
    return fit_budget(ranked, budget_tokens)
