"""Workspaces: which files promptkit may read, where they came from, and what they say.

- `select_files`: the listing of a directory's text files (git-aware, credential-free, no
  content read); `read_workspace_bytes` / `WorkspaceReader`: the one confined read path.
- `describe_workspace` / `WorkspaceManifest`: provenance and a content fingerprint.
- `scan_workspace` / `WorkspaceFacts`: layout, tooling, commands, CI and watch-outs.
- `render_static_digest`: those facts as bounded, reproducible markdown.
- `VfsWorkspaceSection` / `PodmanWorkspaceSection`: prompt sections whose tools let a model
  explore the workspace: an overlay over the host read on demand (or a read-only container).
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

# The prompt sections (VFS, Podman) import the prompt core; scanning a workspace needs none of it.
__all__: list[str]  # assigned below from the declared imports

if TYPE_CHECKING:
    from promptkit.workspace.exclusions import (
        is_credential_file_name as is_credential_file_name,
    )
    from promptkit.workspace.files import (
        DEFAULT_MAX_FILE_BYTES as DEFAULT_MAX_FILE_BYTES,
        FileSelection as FileSelection,
        SkipReason as SkipReason,
        WorkspaceFile as WorkspaceFile,
        select_files as select_files,
    )
    from promptkit.workspace.folders import FolderNote as FolderNote
    from promptkit.workspace.globs import PathGlob as PathGlob
    from promptkit.workspace.guidance import WatchOut as WatchOut
    from promptkit.workspace.manifest import (
        MANIFEST_FILE_NAME as MANIFEST_FILE_NAME,
        WorkspaceManifest as WorkspaceManifest,
        WorkspaceStrategy as WorkspaceStrategy,
        describe_workspace as describe_workspace,
        workspace_fingerprint as workspace_fingerprint,
    )
    from promptkit.workspace.podman import (
        PodmanWorkspaceSection as PodmanWorkspaceSection,
    )
    from promptkit.workspace.reading import (
        HOST_READER as HOST_READER,
        WorkspaceReader as WorkspaceReader,
        read_workspace_bytes as read_workspace_bytes,
    )
    from promptkit.workspace.scan import (
        ScanRoot as ScanRoot,
        WorkspaceFacts as WorkspaceFacts,
        scan_workspace as scan_workspace,
    )
    from promptkit.workspace.static_digest import (
        estimate_tokens as estimate_tokens,
        render_static_digest as render_static_digest,
    )
    from promptkit.workspace.tally import (
        DirectoryCount as DirectoryCount,
        LanguageCount as LanguageCount,
    )
    from promptkit.workspace.tooling import (
        CommandPurpose as CommandPurpose,
        ToolCommand as ToolCommand,
        Workflow as Workflow,
    )
    from promptkit.workspace.vfs import (
        HostMount as HostMount,
        VfsWorkspaceSection as VfsWorkspaceSection,
        WorkspaceSection as WorkspaceSection,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__)
