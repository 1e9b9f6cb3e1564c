"""The workspace REPL engine: a loop over one prompt with a workspace digest.

`WorkspaceRepl` (commands optimize, ask, digest, overrides, history) is what `promptkit repl`
runs and what applications subclass, as the code-review example does; `ReplSetup` is what it
works on. The `*_text`, `*_line` and `*_lines` functions word what it shows, for the command
line and the MCP server to show the same; the guide is docs/repl.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.repl._loop import ReplSetup as ReplSetup, WorkspaceRepl as WorkspaceRepl
    from promptkit.repl._progress import Progress as Progress
    from promptkit.repl._report import (
        author_text as author_text,
        freshness_text as freshness_text,
        history_lines as history_lines,
        resolution_lines as resolution_lines,
        status_text as status_text,
        usage_line as usage_line,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.repl._loop": ("ReplSetup", "WorkspaceRepl"),
            "promptkit.repl._progress": ("Progress",),
            "promptkit.repl._report": (
                "author_text",
                "freshness_text",
                "history_lines",
                "resolution_lines",
                "status_text",
                "usage_line",
            ),
        },
    )
