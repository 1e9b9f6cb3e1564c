"""Prompt overrides: hash-guarded section and tool text kept outside the code.

`PromptOverridesStore` is what any store offers; `LocalPromptOverridesStore` keeps one TOML
file per (namespace, prompt, tag) under `overrides/`, safe under concurrent writers.
`SharedSectionStore` adds sections shared by every prompt with the same section key.
"""

from promptkit.overrides.check import OverrideProblem, check_overrides
from promptkit.overrides.local import LocalPromptOverridesStore
from promptkit.overrides.shared import SharedSectionOverride, SharedSectionStore
from promptkit.overrides.store import PromptOverridesStore

__all__ = [
    "LocalPromptOverridesStore",
    "OverrideProblem",
    "PromptOverridesStore",
    "SharedSectionOverride",
    "SharedSectionStore",
    "check_overrides",
]
