"""The stores a project configuration names: overrides and sessions, in folders or a database.

Apart from the workspace commands' options (`promptkit.discovery._workspace`), so a command that
only needs a store (the `overrides` commands, `eval`, `promote`) does not import the workspace
tool sections, the digest section or the planning tools the built-in prompt is made of. Each
store's module is imported where that store is chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from promptkit.config import DEFAULT_OVERRIDES_FOLDER, ProjectConfig, is_location_url
from promptkit.errors import ConfigError

if TYPE_CHECKING:
    from promptkit.overrides import DocumentOverridesStore
    from promptkit.session import SessionStoreProtocol


def overrides_store_of(
    config: ProjectConfig, *, strict: bool = False
) -> DocumentOverridesStore[Any]:
    """The overrides store `config` names: a folder, or a `postgresql://` database (whose
    documents' relative paths resolve against the project's overrides/ folder); `strict`
    raises on a document a render would skip."""
    location = config.overrides
    if is_location_url(location):
        from promptkit.overrides import PostgresOverridesStore

        _require_postgres_url(location, "overrides")
        return PostgresOverridesStore(
            location,
            files_root=config.root / DEFAULT_OVERRIDES_FOLDER,
            default_tag=config.project_tag,
            strict_overrides=strict,
        )
    from promptkit.overrides import LocalPromptOverridesStore

    return LocalPromptOverridesStore(
        location, default_tag=config.project_tag, strict_overrides=strict
    )


def session_store_of(config: ProjectConfig) -> SessionStoreProtocol:
    """The session store `config` names: its state folder, or a `postgresql://` database."""
    if config.state is not None and is_location_url(config.state):
        from promptkit.session import PostgresSessionStore

        _require_postgres_url(config.state, "state")
        return PostgresSessionStore(config.state)
    from promptkit.session import SessionStore

    return SessionStore(config.state)


def _require_postgres_url(location: str, key: str) -> None:
    scheme = location.partition("://")[0]
    if scheme not in ("postgresql", "postgres"):
        raise ConfigError(
            f"{key} = {scheme}://... names a database promptkit cannot keep {key} in; use a"
            " postgresql:// URL, or a folder's path"
        )
