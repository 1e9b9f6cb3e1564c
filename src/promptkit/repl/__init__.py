"""The workspace REPL engine: a loop over one prompt with a workspace digest.

`WorkspaceRepl` (commands optimize, ask, digest, overrides, history) is what `promptkit repl`
runs and what applications subclass, as the code-review example does; `ReplSetup` is what it
works on. `promptkit.repl.report` words what it shows; the guide is docs/repl.md.
"""

from typing import TYPE_CHECKING

from promptkit._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ReplSetup": "promptkit.repl.loop",
    "WorkspaceRepl": "promptkit.repl.loop",
    "Progress": "promptkit.repl.progress",
    "history_lines": "promptkit.repl.report",
    "usage_line": "promptkit.repl.report",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from promptkit.repl.loop import ReplSetup as ReplSetup, WorkspaceRepl as WorkspaceRepl
    from promptkit.repl.progress import Progress as Progress
    from promptkit.repl.report import history_lines as history_lines, usage_line as usage_line
