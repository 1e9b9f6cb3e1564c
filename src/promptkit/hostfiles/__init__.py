"""Host files: which files of a workspace promptkit may list and read, and where they came from.

- `select_files` / `FileSelection`: the listing of a directory's text files, git-aware and
  credential-free, from names and `lstat` alone (no content read); `begin_selection` starts it
  so a caller can do other work while git lists.
- `start_listing_process` / `ListingProcess`: the same listing taken in a helper process, so a
  command's start and the listing share two cores.
- `read_confined`: the one confined file reader, for host files and override files alike
  (`read_workspace_bytes` / `WorkspaceReader` / `HOST_READER`: the host files' read path).
- `describe_workspace` / `WorkspaceManifest`: provenance (git facts) and a content fingerprint.
- `PathGlob`: the one glob syntax of workspaces; `is_credential_file_name`: the names never read.

How git is asked (its processes, its index file) is private to this package. It imports only
the base modules (`errors`, `durable`, `logging`), never the prompt core or sessions.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.hostfiles._exclusions import is_credential_file_name as is_credential_file_name
    from promptkit.hostfiles._globs import PathGlob as PathGlob, literal_glob as literal_glob
    from promptkit.hostfiles._listing import (
        DEFAULT_MAX_FILE_BYTES as DEFAULT_MAX_FILE_BYTES,
        FileSelection as FileSelection,
        LeftOut as LeftOut,
        PendingSelection as PendingSelection,
        SkipReason as SkipReason,
        WorkspaceFile as WorkspaceFile,
        begin_selection as begin_selection,
        resolve_workspace_root as resolve_workspace_root,
        select_files as select_files,
    )
    from promptkit.hostfiles._listing_process import (
        ListingProcess as ListingProcess,
        ListingSummary as ListingSummary,
        start_listing_process as start_listing_process,
    )
    from promptkit.hostfiles._manifest import (
        MANIFEST_FILE_NAME as MANIFEST_FILE_NAME,
        WorkspaceManifest as WorkspaceManifest,
        WorkspaceStrategy as WorkspaceStrategy,
        describe_workspace as describe_workspace,
        fingerprint_files as fingerprint_files,
        manifest_for_selection as manifest_for_selection,
        workspace_fingerprint as workspace_fingerprint,
    )
    from promptkit.hostfiles._reading import (
        HOST_READER as HOST_READER,
        ConfinedFile as ConfinedFile,
        ConfinedReadError as ConfinedReadError,
        WorkspaceReader as WorkspaceReader,
        is_inside as is_inside,
        read_confined as read_confined,
        read_workspace_bytes as read_workspace_bytes,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.hostfiles._exclusions": ("is_credential_file_name",),
            "promptkit.hostfiles._globs": ("PathGlob", "literal_glob"),
            "promptkit.hostfiles._listing": (
                "DEFAULT_MAX_FILE_BYTES",
                "FileSelection",
                "LeftOut",
                "PendingSelection",
                "SkipReason",
                "WorkspaceFile",
                "begin_selection",
                "resolve_workspace_root",
                "select_files",
            ),
            "promptkit.hostfiles._listing_process": (
                "ListingProcess",
                "ListingSummary",
                "start_listing_process",
            ),
            "promptkit.hostfiles._manifest": (
                "MANIFEST_FILE_NAME",
                "WorkspaceManifest",
                "WorkspaceStrategy",
                "describe_workspace",
                "fingerprint_files",
                "manifest_for_selection",
                "workspace_fingerprint",
            ),
            "promptkit.hostfiles._reading": (
                "HOST_READER",
                "ConfinedFile",
                "ConfinedReadError",
                "WorkspaceReader",
                "is_inside",
                "read_confined",
                "read_workspace_bytes",
            ),
        },
    )
