"""The `promptkit` command: an argparse front end over the library, with no logic of its own.

- `main`: the command itself. Each subcommand lives in its own private module, whose
  `register(parser)` fills in the command's parser; `main` imports only the module of the
  command a line names and maps promptkit errors to a one-line message and an exit status.
- `add_repl_arguments` / `run_repl`: the options and the run of `promptkit repl`, for a program
  that offers its own REPL built on `promptkit.repl.WorkspaceRepl` (see
  examples/code_reviewer_example.py).
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.cli._app import main as main
    from promptkit.cli._options import add_repl_arguments as add_repl_arguments
    from promptkit.cli._repl import run_repl as run_repl
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.cli._app": ("main",),
            "promptkit.cli._options": ("add_repl_arguments",),
            "promptkit.cli._repl": ("run_repl",),
        },
    )
