"""Workspace digests: the session slice that holds them and the section that renders them.

The user guide is docs/workspace-digest.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.digest._committed import committed_provenance as committed_provenance
    from promptkit.digest._export import export_digest as export_digest
    from promptkit.digest._freshness import (
        DigestFreshness as DigestFreshness,
        check_freshness as check_freshness,
    )
    from promptkit.digest._section import (
        DEFAULT_PLACEHOLDER as DEFAULT_PLACEHOLDER,
        DigestOrigin as DigestOrigin,
        DigestResolution as DigestResolution,
        WorkspaceDigestSection as WorkspaceDigestSection,
        resolve_workspace_digest as resolve_workspace_digest,
    )
    from promptkit.digest._state import (
        DIGEST_SLICE_NAME as DIGEST_SLICE_NAME,
        WorkspaceDigest as WorkspaceDigest,
        clear_workspace_digest as clear_workspace_digest,
        latest_workspace_digest as latest_workspace_digest,
        normalize_digest_key as normalize_digest_key,
        set_workspace_digest as set_workspace_digest,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.digest._committed": ("committed_provenance",),
            "promptkit.digest._export": ("export_digest",),
            "promptkit.digest._freshness": ("DigestFreshness", "check_freshness"),
            "promptkit.digest._section": (
                "DEFAULT_PLACEHOLDER",
                "DigestOrigin",
                "DigestResolution",
                "WorkspaceDigestSection",
                "resolve_workspace_digest",
            ),
            "promptkit.digest._state": (
                "DIGEST_SLICE_NAME",
                "WorkspaceDigest",
                "clear_workspace_digest",
                "latest_workspace_digest",
                "normalize_digest_key",
                "set_workspace_digest",
            ),
        },
    )
