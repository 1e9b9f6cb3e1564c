"""Prompt overrides: hash-guarded section and tool text kept outside the code.

`PromptOverridesStore` is what any store offers; `LocalPromptOverridesStore` keeps one TOML
file per (namespace, prompt, tag) under `overrides/`, safe under concurrent writers.
`SharedSectionStore` adds sections shared by every prompt with the same section key.
`OverridesSnapshot` identifies a tag's entries by content, `bind_promotion` seals evidence to
entries, and `PromotableOverridesStore` replaces a tag's entries with their evidence all at once
(see `promptkit.evals.promote`).
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.overrides._promotion import (
        OverridesSnapshot as OverridesSnapshot,
        bind_promotion as bind_promotion,
    )
    from promptkit.overrides.check import (
        OverrideProblem as OverrideProblem,
        check_overrides as check_overrides,
    )
    from promptkit.overrides.local import LocalPromptOverridesStore as LocalPromptOverridesStore
    from promptkit.overrides.shared import (
        SharedSectionOverride as SharedSectionOverride,
        SharedSectionStore as SharedSectionStore,
    )
    from promptkit.overrides.store import (
        PromotableOverridesStore as PromotableOverridesStore,
        PromptOverridesStore as PromptOverridesStore,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.overrides._promotion": ("OverridesSnapshot", "bind_promotion"),
            "promptkit.overrides.check": ("OverrideProblem", "check_overrides"),
            "promptkit.overrides.local": ("LocalPromptOverridesStore",),
            "promptkit.overrides.shared": ("SharedSectionOverride", "SharedSectionStore"),
            "promptkit.overrides.store": ("PromotableOverridesStore", "PromptOverridesStore"),
        },
    )
