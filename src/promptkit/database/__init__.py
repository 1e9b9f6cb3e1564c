"""The PostgreSQL database promptkit's database stores share: connections, schema, errors.

`PostgresSessionStore` (`promptkit.session`) and `PostgresOverridesStore` (`promptkit.overrides`)
keep their data in one database, whose tables this package versions: `upgrade_database` (the
`promptkit db upgrade` command) migrates it explicitly and idempotently, and a store refuses a
schema older or newer than it knows (`DatabaseSchemaError`). `Database` is the pool and the
transaction with bounded retries both stores write through; every failure names the database
(`database_label`, without its password). psycopg is imported only when a database is used:
install it with the `promptkit[postgres]` extra. The user guide is docs/database.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.database._connection import (
        Database as Database,
        database_label as database_label,
    )
    from promptkit.database._schema import (
        NOTIFY_CHANNEL as NOTIFY_CHANNEL,
        SCHEMA_VERSION as SCHEMA_VERSION,
        SchemaUpgrade as SchemaUpgrade,
        upgrade_database as upgrade_database,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.database._connection": ("Database", "database_label"),
            "promptkit.database._schema": (
                "NOTIFY_CHANNEL",
                "SCHEMA_VERSION",
                "SchemaUpgrade",
                "upgrade_database",
            ),
        },
    )
