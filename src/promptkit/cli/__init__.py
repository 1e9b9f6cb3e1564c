"""The `promptkit` command: an argparse front end over the library, with no logic of its own.

Each subcommand lives in its own module, whose `register(parser)` fills in the command's parser;
`main` imports only the module of the command a line names (see `promptkit.cli.app`) and maps
promptkit errors to a one-line message and an exit status.
"""

from __future__ import annotations

from promptkit.cli.app import main

__all__ = ["main"]
