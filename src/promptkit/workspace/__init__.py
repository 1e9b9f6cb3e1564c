"""Workspaces: which files promptkit may read, where they came from, and what they say.

- `select_files`: the readable text files of a directory (git-aware, credential-free).
- `describe_workspace` / `WorkspaceManifest`: provenance and a content fingerprint.
- `scan_workspace` / `WorkspaceFacts`: layout, tooling, commands, CI and watch-outs.
- `render_static_digest`: those facts as bounded, reproducible markdown.
- `VfsWorkspaceSection` / `PodmanWorkspaceSection`: prompt sections whose tools let a model
  explore a copy of the workspace (in memory, or in a read-only container).
"""

from promptkit.workspace.files import (
    DEFAULT_MAX_FILE_BYTES,
    FileSelection,
    SkipReason,
    WorkspaceFile,
    is_credential_file_name,
    read_workspace_bytes,
    select_files,
)
from promptkit.workspace.manifest import (
    MANIFEST_FILE_NAME,
    WorkspaceManifest,
    WorkspaceStrategy,
    describe_workspace,
    workspace_fingerprint,
)
from promptkit.workspace.podman import PodmanWorkspaceSection
from promptkit.workspace.scan import (
    DirectoryCount,
    LanguageCount,
    WatchOut,
    WorkspaceFacts,
    scan_workspace,
)
from promptkit.workspace.static_digest import estimate_tokens, render_static_digest
from promptkit.workspace.tooling import CommandPurpose, ToolCommand, Workflow
from promptkit.workspace.vfs import HostMount, VfsWorkspaceSection, WorkspaceSection

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "MANIFEST_FILE_NAME",
    "CommandPurpose",
    "DirectoryCount",
    "FileSelection",
    "HostMount",
    "LanguageCount",
    "PodmanWorkspaceSection",
    "SkipReason",
    "ToolCommand",
    "VfsWorkspaceSection",
    "WatchOut",
    "Workflow",
    "WorkspaceFacts",
    "WorkspaceFile",
    "WorkspaceManifest",
    "WorkspaceSection",
    "WorkspaceStrategy",
    "describe_workspace",
    "estimate_tokens",
    "is_credential_file_name",
    "read_workspace_bytes",
    "render_static_digest",
    "scan_workspace",
    "select_files",
    "workspace_fingerprint",
]
