"""Workspace sections: the prompt sections whose tools let a model explore a workspace.

- `VfsWorkspaceSection`: an overlay over host folders (`HostMount`), read on demand through
  `promptkit.hostfiles`; the model's writes stay in the session and never reach the host.
- `PodmanWorkspaceSection`: the same tools over a read-only container.
- `WorkspaceSection`: what both are, for code that takes either.

Which host files may be listed and read lives in `promptkit.hostfiles`; what a repository is
made of, and the static digest, in `promptkit.repofacts`.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.workspace._overlay import (
        record_counted_listing as record_counted_listing,
        record_listing as record_listing,
    )
    from promptkit.workspace._podman import PodmanWorkspaceSection as PodmanWorkspaceSection
    from promptkit.workspace._vfs import (
        HostMount as HostMount,
        VfsWorkspaceSection as VfsWorkspaceSection,
        WorkspaceSection as WorkspaceSection,
        forget_listings as forget_listings,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.workspace._overlay": ("record_counted_listing", "record_listing"),
            "promptkit.workspace._podman": ("PodmanWorkspaceSection",),
            "promptkit.workspace._vfs": (
                "HostMount",
                "VfsWorkspaceSection",
                "WorkspaceSection",
                "forget_listings",
            ),
        },
    )
