"""The `promptkit` command: an argparse front end over the library, with no logic of its own.

Each subcommand lives in its own module with a `register(subparsers)` function; `main` wires
them up and maps promptkit errors to a one-line message and exit status 2.
"""

from __future__ import annotations

from promptkit.cli.app import main

__all__ = ["main"]
