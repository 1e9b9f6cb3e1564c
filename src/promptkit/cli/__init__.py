"""The `promptkit` command: an argparse front end over the library, with no logic of its own.

Each subcommand lives in its own module, whose `register(parser)` fills in the command's parser;
`main` imports only the module of the command a line names (see `promptkit.cli.app`) and maps
promptkit errors to a one-line message and an exit status.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.cli.app import main as main
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.cli.app": ("main",),
        },
    )
