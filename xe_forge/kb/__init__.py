"""The knowledge base: entries about targets and toolchains, loaded in layers, retrieved by BM25.

Public API (what the pipeline, the rules proposer and the verifier call):
    load_kb(extra_dirs) -> KnowledgeBase        bundled KB + XE_FORGE_KB_PATH (or ~/.xe-forge/kb) + extra dirs
    retrieve(kb, query, stage=, target=, toolchain=, budget_tokens=) -> list[Entry]
    render_entries(entries) -> str              markdown, whole entries
    validate_paths(paths) -> list[KbProblem]      `kb validate`
    add_entry_file(file, user_dir, replace)     `kb add`
    check_constraints(source, target=, toolchain=, kb=) -> list[Violation]   verifier static check
    kb.options.OptionTable / bundled_table()    the launch-option table (verifier, devices, rules proposer)
"""

from xe_forge.kb.constraints import check_constraints
from xe_forge.kb.loader import KnowledgeBase, bundled_dir, default_user_dir, load_kb, target_admits, user_dirs
from xe_forge.kb.render import estimate_tokens, render_entries, render_entry
from xe_forge.kb.retrieve import rank, retrieve
from xe_forge.kb.schema import (
    CONFIG_KEYWORDS,
    KINDS,
    PROBLEM_CLASSES,
    RECIPE_NAMES,
    Entry,
    KbProblem,
    Violation,
)
from xe_forge.kb.userkb import add_entry_file
from xe_forge.kb.validate import validate_paths

__all__ = [
    "CONFIG_KEYWORDS", "KINDS", "PROBLEM_CLASSES", "RECIPE_NAMES", "Entry", "KnowledgeBase",
    "KbProblem", "Violation", "add_entry_file", "bundled_dir", "check_constraints", "default_user_dir",
    "estimate_tokens", "load_kb", "rank", "render_entries", "render_entry", "retrieve", "target_admits",
    "user_dirs", "validate_paths",
]
