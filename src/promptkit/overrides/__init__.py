"""Prompt overrides: hash-guarded section and tool text kept outside the code.

`PromptOverridesStore` is what any store offers; `LocalPromptOverridesStore` keeps one TOML
file per (namespace, prompt, tag) under `overrides/`, safe under concurrent writers, and
`PostgresOverridesStore` the same documents as rows of a PostgreSQL database, read through a
cache that LISTEN/NOTIFY keeps fresh; both are `DocumentOverridesStore`s, one entry logic over
two ways of keeping documents.
`SharedSectionStore` adds sections shared by every prompt with the same section key.
`OverridesSnapshot` identifies a tag's entries by content, `bind_promotion` seals evidence to
entries, and `PromotableOverridesStore` replaces a tag's entries with their evidence all at once
(see `promptkit.evals.promote_overrides`).
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.overrides._check import (
        EntryState as EntryState,
        OverrideProblem as OverrideProblem,
        check_overrides as check_overrides,
        entry_states as entry_states,
        shared_states as shared_states,
    )
    from promptkit.overrides._defaults import default_body as default_body
    from promptkit.overrides._documents import DocumentOverridesStore as DocumentOverridesStore
    from promptkit.overrides._layout import (
        override_files as override_files,
        require_section_path as require_section_path,
    )
    from promptkit.overrides._local import LocalPromptOverridesStore as LocalPromptOverridesStore
    from promptkit.overrides._merge import (
        merge_view as merge_view,
        unresolved_markers as unresolved_markers,
    )
    from promptkit.overrides._postgres import (
        PostgresOverridesStore as PostgresOverridesStore,
        StoredDocument as StoredDocument,
    )
    from promptkit.overrides._promotion import (
        OverridesSnapshot as OverridesSnapshot,
        bind_promotion as bind_promotion,
    )
    from promptkit.overrides._shared import (
        ProvenanceValue as ProvenanceValue,
        SharedSectionOverride as SharedSectionOverride,
        SharedSectionStore as SharedSectionStore,
    )
    from promptkit.overrides._store import (
        PromotableOverridesStore as PromotableOverridesStore,
        PromptOverridesStore as PromptOverridesStore,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.overrides._check": (
                "EntryState",
                "OverrideProblem",
                "check_overrides",
                "entry_states",
                "shared_states",
            ),
            "promptkit.overrides._defaults": ("default_body",),
            "promptkit.overrides._documents": ("DocumentOverridesStore",),
            "promptkit.overrides._layout": ("override_files", "require_section_path"),
            "promptkit.overrides._local": ("LocalPromptOverridesStore",),
            "promptkit.overrides._merge": ("merge_view", "unresolved_markers"),
            "promptkit.overrides._postgres": ("PostgresOverridesStore", "StoredDocument"),
            "promptkit.overrides._promotion": ("OverridesSnapshot", "bind_promotion"),
            "promptkit.overrides._shared": (
                "ProvenanceValue",
                "SharedSectionOverride",
                "SharedSectionStore",
            ),
            "promptkit.overrides._store": ("PromotableOverridesStore", "PromptOverridesStore"),
        },
    )
