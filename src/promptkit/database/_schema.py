"""The promptkit tables of a database, versioned: migrated explicitly, checked by every store.

`promptkit_schema` holds one row, the schema version. `upgrade_database` applies each migration
above the stored version, in order, each in its own transaction under an advisory lock (so two
upgrades at once apply each step once); run again, it changes nothing. A store checks the
version on its first connection and refuses to work on a schema it does not know: older (run
`promptkit db upgrade`) or newer (written by a later promptkit, whose rows it could misread).

Version 1:

- `promptkit_overrides`: one row per override document, keyed by its `path` as under an
  overrides folder (`ns/prompt_key/tag.toml`, `_shared/section_key/tag.toml`); `document` is the
  file's text byte for byte, `version` counts its writes. A trigger sends the path on channel
  `promptkit_overrides` at every change, which the stores' caches listen to.
- `promptkit_sessions`: one row per stored session: `metadata` and `base` are the texts of
  metadata.json and base.jsonl, and `head_seq`/`head_sum` the last record (as the files'
  checksum chain names it).
- `promptkit_session_events`: the records after the base, one row per event, keyed by seq.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from promptkit.errors import DatabaseSchemaError

if TYPE_CHECKING:
    from psycopg import Connection

    from promptkit.database._connection import Database

SCHEMA_VERSION = 1
"""The schema version this promptkit reads and writes."""

NOTIFY_CHANNEL = "promptkit_overrides"
"""The channel the overrides trigger notifies a changed document's path on."""
# Held while migrating, so concurrent upgrades run one after the other.
_UPGRADE_LOCK = 0x70726F6D  # "prom"

_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE promptkit_overrides (
        path text PRIMARY KEY,
        document text NOT NULL,
        version bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE FUNCTION promptkit_overrides_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('promptkit_overrides', COALESCE(NEW.path, OLD.path));
        RETURN NULL;
    END $$;
    CREATE TRIGGER promptkit_overrides_changed
        AFTER INSERT OR UPDATE OR DELETE ON promptkit_overrides
        FOR EACH ROW EXECUTE FUNCTION promptkit_overrides_notify();
    CREATE TABLE promptkit_sessions (
        workspace_id text NOT NULL,
        session_id text NOT NULL,
        metadata text NOT NULL,
        base text NOT NULL,
        base_seq bigint NOT NULL,
        head_seq bigint NOT NULL,
        head_sum text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, session_id)
    );
    CREATE TABLE promptkit_session_events (
        workspace_id text NOT NULL,
        session_id text NOT NULL,
        seq bigint NOT NULL,
        line text NOT NULL,
        PRIMARY KEY (workspace_id, session_id, seq),
        FOREIGN KEY (workspace_id, session_id)
            REFERENCES promptkit_sessions (workspace_id, session_id) ON DELETE CASCADE
    );
    """,
)
assert len(_MIGRATIONS) == SCHEMA_VERSION


@dataclass(frozen=True)
class SchemaUpgrade:
    """What `upgrade_database` did: the version found (0 for an empty database) and the one left."""

    database: str
    before: int
    after: int

    @property
    def changed(self) -> bool:
        return self.after != self.before


def upgrade_database(url: str) -> SchemaUpgrade:
    """Bring the promptkit tables of the database at `url` to `SCHEMA_VERSION`; idempotent.

    DatabaseSchemaError when the database holds a newer schema (nothing is changed);
    DatabaseUnavailableError when it cannot be reached.
    """
    from promptkit.database._connection import Database

    with Database(url, min_size=0, max_size=1, check_schema=False) as database:
        return database.run(_upgrade, what="upgrade the promptkit schema")


def _upgrade(connection: Connection[tuple[object, ...]], database: Database) -> SchemaUpgrade:
    connection.execute("SELECT pg_advisory_xact_lock(%s)", (_UPGRADE_LOCK,))
    connection.execute(
        "CREATE TABLE IF NOT EXISTS promptkit_schema ("
        " only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),"
        " version integer NOT NULL, upgraded_at timestamptz NOT NULL DEFAULT now())"
    )
    before = _stored_version(connection) or 0
    _refuse_newer(before, database.label)
    for version in range(before + 1, SCHEMA_VERSION + 1):
        connection.execute(_MIGRATIONS[version - 1])
    if before != SCHEMA_VERSION:
        connection.execute(
            "INSERT INTO promptkit_schema (version) VALUES (%s) ON CONFLICT (only_row)"
            " DO UPDATE SET version = EXCLUDED.version, upgraded_at = now()",
            (SCHEMA_VERSION,),
        )
    return SchemaUpgrade(database.label, before, SCHEMA_VERSION)


def require_schema(connection: Connection[tuple[object, ...]], label: str) -> None:
    """DatabaseSchemaError unless the database holds exactly `SCHEMA_VERSION`."""
    found = connection.execute("SELECT to_regclass('promptkit_schema') IS NOT NULL").fetchone()
    version = _stored_version(connection) if found and found[0] else None
    if version is None:
        raise DatabaseSchemaError(
            f"{label} has no promptkit tables; create them with `promptkit db upgrade"
            " --database URL` (idempotent), then start again",
            database=label,
        )
    _refuse_newer(version, label)
    if version < SCHEMA_VERSION:
        raise DatabaseSchemaError(
            f"{label} holds promptkit schema {version}, older than the {SCHEMA_VERSION} this"
            " promptkit needs; run `promptkit db upgrade --database URL` (idempotent)",
            database=label,
        )


def _stored_version(connection: Connection[tuple[object, ...]]) -> int | None:
    row = connection.execute("SELECT version FROM promptkit_schema").fetchone()
    return None if row is None else int(str(row[0]))


def _refuse_newer(version: int, label: str) -> None:
    if version > SCHEMA_VERSION:
        raise DatabaseSchemaError(
            f"{label} holds promptkit schema {version}, newer than the {SCHEMA_VERSION} this"
            " promptkit knows (a later promptkit wrote it); nothing was read or written:"
            " upgrade promptkit on this machine",
            database=label,
        )
