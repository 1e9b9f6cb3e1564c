"""The workspace REPL engine: a loop over one prompt with a workspace digest.

`WorkspaceRepl` (commands optimize, ask, digest, overrides, history) is what `promptkit repl`
runs and what applications subclass, as the code-review example does; `ReplSetup` is what it
works on. `promptkit.repl.report` words what it shows; the guide is docs/repl.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.repl.loop import ReplSetup as ReplSetup, WorkspaceRepl as WorkspaceRepl
    from promptkit.repl.progress import Progress as Progress
    from promptkit.repl.report import history_lines as history_lines, usage_line as usage_line
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.repl.loop": ("ReplSetup", "WorkspaceRepl"),
            "promptkit.repl.progress": ("Progress",),
            "promptkit.repl.report": ("history_lines", "usage_line"),
        },
    )
