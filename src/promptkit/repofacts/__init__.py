"""Repository facts: what a repository is made of, and the static digest text that says it.

- `scan_workspace` / `WorkspaceFacts`: layout, languages, tooling, commands, CI workflows,
  contributor guidance and watch-outs, read from the files `promptkit.hostfiles` lists and
  reads (`scan_roots` / `ScanRoot` for several mounted roots at once).
- `render_static_digest`: those facts as bounded, reproducible markdown (`estimate_tokens`
  measures it against a budget).

The parsers of each ecosystem's configuration (Python, Node, Rust, Go, runners, hooks, CI) are
private. It imports only the base modules and `promptkit.hostfiles`, never the prompt core or
sessions.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.repofacts._folders import FolderNote as FolderNote
    from promptkit.repofacts._guidance import WatchOut as WatchOut
    from promptkit.repofacts._scan import (
        ScanRoot as ScanRoot,
        WorkspaceFacts as WorkspaceFacts,
        scan_roots as scan_roots,
        scan_workspace as scan_workspace,
    )
    from promptkit.repofacts._static_digest import (
        estimate_tokens as estimate_tokens,
        render_static_digest as render_static_digest,
    )
    from promptkit.repofacts._tally import (
        DirectoryCount as DirectoryCount,
        LanguageCount as LanguageCount,
    )
    from promptkit.repofacts._tooling import (
        CommandPurpose as CommandPurpose,
        ToolCommand as ToolCommand,
        Workflow as Workflow,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.repofacts._folders": ("FolderNote",),
            "promptkit.repofacts._guidance": ("WatchOut",),
            "promptkit.repofacts._scan": (
                "ScanRoot",
                "WorkspaceFacts",
                "scan_roots",
                "scan_workspace",
            ),
            "promptkit.repofacts._static_digest": ("estimate_tokens", "render_static_digest"),
            "promptkit.repofacts._tally": ("DirectoryCount", "LanguageCount"),
            "promptkit.repofacts._tooling": ("CommandPurpose", "ToolCommand", "Workflow"),
        },
    )
