"""Prompt overrides: hash-guarded section and tool text kept outside the code.

`PromptOverridesStore` is what any store offers; `LocalPromptOverridesStore` keeps one TOML
file per (namespace, prompt, tag) under `overrides/`, safe under concurrent writers.
`SharedSectionStore` adds sections shared by every prompt with the same section key.
`OverridesSnapshot` identifies a tag's entries by content, `bind_promotion` seals evidence to
entries, and `PromotableOverridesStore` replaces a tag's entries with their evidence all at once
(see `promptkit.evals.promote`).
"""

from promptkit.overrides._promotion import OverridesSnapshot, bind_promotion
from promptkit.overrides.check import OverrideProblem, check_overrides
from promptkit.overrides.local import LocalPromptOverridesStore
from promptkit.overrides.shared import SharedSectionOverride, SharedSectionStore
from promptkit.overrides.store import PromotableOverridesStore, PromptOverridesStore

__all__ = [
    "LocalPromptOverridesStore",
    "OverrideProblem",
    "OverridesSnapshot",
    "PromotableOverridesStore",
    "PromptOverridesStore",
    "SharedSectionOverride",
    "SharedSectionStore",
    "bind_promotion",
    "check_overrides",
]
