"""Workspace digests: the session slice that holds them and the section that renders them.

The user guide is docs/workspace-digest.md.
"""

from promptkit.digest.freshness import DigestFreshness, check_freshness
from promptkit.digest.section import (
    DEFAULT_PLACEHOLDER,
    DigestOrigin,
    DigestResolution,
    WorkspaceDigestSection,
    resolve_workspace_digest,
)
from promptkit.digest.state import (
    DIGEST_SLICE_NAME,
    WorkspaceDigest,
    clear_workspace_digest,
    latest_workspace_digest,
    normalize_digest_key,
    set_workspace_digest,
)

__all__ = [
    "DEFAULT_PLACEHOLDER",
    "DIGEST_SLICE_NAME",
    "DigestFreshness",
    "DigestOrigin",
    "DigestResolution",
    "WorkspaceDigest",
    "WorkspaceDigestSection",
    "check_freshness",
    "clear_workspace_digest",
    "latest_workspace_digest",
    "normalize_digest_key",
    "resolve_workspace_digest",
    "set_workspace_digest",
]
