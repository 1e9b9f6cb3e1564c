"""`promptkit overrides push/pull`: a tag moved between reviewed files and a database.

`push` makes the database's documents of a tag exactly the files of that tag under the overrides
folder, in one transaction; `pull` writes them back as files, byte for byte, so git review stays
the source of truth: a team reviews the files, pushes the tag, and the workers serve it. The
database is `--database` (default: the `postgresql://` URL of `[tool.promptkit] overrides`, else
of `state`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptkit.cli._options import add_overrides_folder_argument, add_tag_argument, configured

if TYPE_CHECKING:
    from promptkit.config import ProjectConfig
    from promptkit.overrides import (
        DocumentOverridesStore,
        LocalPromptOverridesStore,
        PostgresOverridesStore,
    )

DATABASE_HELP = (
    "the database, as a postgresql:// URL (default: [tool.promptkit] overrides when it is one,"
    " else state)"
)


def add_transfer_actions(actions: argparse._SubParsersAction[Any]) -> None:
    """`overrides push` and `overrides pull`, in the `overrides` command group."""
    for name, summary, handler in (
        ("push", "make a tag in the database exactly the tag's files (one transaction)", _push),
        ("pull", "write a tag's documents from the database as files, byte for byte", _pull),
    ):
        sub = actions.add_parser(name, help=summary, description=summary)
        add_overrides_folder_argument(sub)
        sub.add_argument("--database", metavar="URL", help=DATABASE_HELP)
        add_tag_argument(sub)
        sub.set_defaults(handler=configured(handler))


def database_url(given: str | None, config: ProjectConfig) -> str:
    """`--database`, else the project's overrides or state URL; ConfigError when none is."""
    from promptkit.config import is_location_url
    from promptkit.errors import ConfigError

    for candidate in (given, config.overrides, config.state):
        if candidate is not None and is_location_url(candidate):
            return candidate
    if given is not None:
        raise ConfigError(f"--database {given!r} is not a postgresql:// URL")
    raise ConfigError(
        "no database named: pass --database postgresql://..., or set [tool.promptkit]"
        " overrides or state to one"
    )


def _stores(
    args: argparse.Namespace,
) -> tuple[LocalPromptOverridesStore, PostgresOverridesStore]:
    from promptkit.config import DEFAULT_OVERRIDES_FOLDER, is_location_url
    from promptkit.overrides import LocalPromptOverridesStore, PostgresOverridesStore

    config: ProjectConfig = args.config
    url = database_url(args.database, config)
    folder = (
        config.root / DEFAULT_OVERRIDES_FOLDER
        if is_location_url(config.overrides)
        else Path(config.overrides)
    )
    files = LocalPromptOverridesStore(folder, strict_overrides=True)
    database = PostgresOverridesStore(url, files_root=folder, strict_overrides=True)
    return files, database


def _push(args: argparse.Namespace) -> int:
    files, database = _stores(args)
    return _transfer(files, database, args.tag, verb="pushed")


def _pull(args: argparse.Namespace) -> int:
    files, database = _stores(args)
    return _transfer(database, files, args.tag, verb="pulled")


def _transfer(
    source: DocumentOverridesStore[Any], target: DocumentOverridesStore[Any], tag: str, *, verb: str
) -> int:
    from promptkit.overrides import PostgresOverridesStore

    try:
        written, removed = target.replace_documents(source.tag_documents(tag), tag=tag)
    finally:
        for store in (source, target):
            if isinstance(store, PostgresOverridesStore):
                store.close()
    print(
        f"{verb} tag {tag} from {source.location} to {target.location}: {len(written)}"
        f" document(s) written, {len(removed)} removed"
    )
    for path in written:
        print(f"  wrote {path}")
    for path in removed:
        print(f"  removed {path}")
    return 0
