"""`promptkit db upgrade`: create or migrate promptkit's tables in a database.

The database is `--database` (default: the `postgresql://` URL of `[tool.promptkit] overrides`,
else of `state`); running it again changes nothing, and a schema newer than this promptkit knows
is refused.
"""

from __future__ import annotations

import argparse

from promptkit.cli._transfer import DATABASE_HELP, database_url


def register(parser: argparse.ArgumentParser) -> None:
    """Fill in the parser of the `promptkit db` command group."""
    parser.description = "Manage the PostgreSQL database of the database stores."
    actions = parser.add_subparsers(dest="db_action", metavar="ACTION", required=True)
    upgrade = actions.add_parser(
        "upgrade",
        help="create or migrate promptkit's tables (idempotent)",
        description="Create promptkit's tables, or migrate them to this promptkit's schema;"
        " running it again changes nothing. A schema newer than this promptkit is refused.",
    )
    upgrade.add_argument("--database", metavar="URL", help=DATABASE_HELP)
    upgrade.set_defaults(handler=run_upgrade)


def run_upgrade(args: argparse.Namespace) -> int:
    from promptkit.config import find_project_config
    from promptkit.database import upgrade_database

    url = database_url(args.database, find_project_config())
    upgrade = upgrade_database(url)
    if upgrade.changed:
        print(f"{upgrade.database}: promptkit schema {upgrade.before} -> {upgrade.after}")
    else:
        print(f"{upgrade.database}: promptkit schema {upgrade.after}, up to date; nothing to do")
    return 0
