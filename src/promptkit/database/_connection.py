"""`Database`: a connection pool and the one way promptkit's database stores run a transaction.

`run(work)` takes a pooled connection, checks the schema on first use, and runs `work` in one
transaction: committed whole when it returns, rolled back when it raises. A connection that
breaks (the server restarted, a network cut, a serialization failure) is retried a bounded
number of times, `attempts` in all, with a short pause between them on the store's clock;
`work` is told which attempt it is, so a write whose commit was cut off can see that it was
in fact stored and not store it twice. What still fails is typed, and names the database:

- `DatabaseUnavailableError`: the server cannot be reached, or kept failing;
- `DatabaseBusyError`: every pooled connection stayed in use past `pool_timeout`;
- `DatabaseSchemaError`: the tables are missing, older or newer (`promptkit db upgrade`).

No call waits longer than about `pool_timeout` per attempt plus the pauses: no hang.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import (
    ConfigError,
    DatabaseBusyError,
    DatabaseUnavailableError,
)
from promptkit.logging import get_logger

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

T = TypeVar("T")
Work = Callable[["Connection[tuple[Any, ...]]", "Database"], T]

_log = get_logger("promptkit.database")
DEFAULT_POOL_TIMEOUT = 5.0
DEFAULT_ATTEMPTS = 3
_FIRST_PAUSE = 0.05
_PROBE_TIMEOUT = 2


def database_label(url: str) -> str:
    """`url` without its password and options, as errors and logs name a database:
    `postgresql://user@host:port/name` (a socket folder given as `?host=` is kept)."""
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    socket = parse_qs(parts.query).get("host")
    tail = f"?host={socket[0]}" if socket and not host else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}{tail}"


def require_driver() -> None:
    """ConfigError saying which extra to install when psycopg or psycopg_pool is missing."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as error:
        raise ConfigError(
            f"a postgresql:// store needs psycopg 3 and psycopg_pool ({error.name} is not"
            " installed): pip install 'promptkit[postgres]'"
        ) from None


class Database:
    """A pooled PostgreSQL database (see the module doc). Open on first use; `close()` it (or
    use it as a context manager) to close its connections."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        pool_timeout: float = DEFAULT_POOL_TIMEOUT,
        attempts: int = DEFAULT_ATTEMPTS,
        clock: Clock = SYSTEM_CLOCK,
        check_schema: bool = True,
    ) -> None:
        require_driver()
        if attempts < 1 or max_size < 1 or min_size < 0 or pool_timeout <= 0:
            raise ConfigError(
                "a database needs attempts >= 1, max_size >= 1, min_size >= 0 and a positive"
                f" pool_timeout; got attempts={attempts}, max_size={max_size},"
                f" min_size={min_size}, pool_timeout={pool_timeout}"
            )
        self._url = url
        self._label = database_label(url)
        self._min_size = min(min_size, max_size)
        self._max_size = max_size
        self._pool_timeout = pool_timeout
        self._attempts = attempts
        self._clock = clock
        self._schema_checked = not check_schema
        self._lock = threading.Lock()
        self._thread = threading.local()
        self._pool: ConnectionPool[Any] | None = None

    @property
    def url(self) -> str:
        return self._url

    @property
    def label(self) -> str:
        """The database as messages name it (no password)."""
        return self._label

    @property
    def clock(self) -> Clock:
        return self._clock

    def run(self, work: Work[T], *, what: str) -> T:
        """`work(connection, self)` in one transaction, retried on a broken connection; `what`
        says what it does, for the error (`write overrides a/b/latest.toml`). The attempt is
        `self.attempt` inside `work` (1 on the first)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        failure: psycopg.OperationalError | None = None
        for attempt in range(1, self._attempts + 1):
            if attempt > 1:
                self._clock.sleep(_FIRST_PAUSE * 2 ** (attempt - 2))
            try:
                with self._connection() as connection, connection.transaction():
                    self._require_schema(connection)
                    self._thread.attempt = attempt
                    return work(connection, self)
            except PoolTimeout as error:
                raise self._no_connection(error, what) from None
            except psycopg.OperationalError as error:
                failure = error
                _log.warning(
                    "database_attempt_failed",
                    database=self._label,
                    what=what,
                    attempt=attempt,
                    error=_first_line(error),
                )
        raise DatabaseUnavailableError(
            f"{self._label}: could not {what} after {self._attempts} attempts"
            f" ({_first_line(failure)}); nothing was written",
            database=self._label,
        )

    @property
    def attempt(self) -> int:
        """Which attempt of `run` this thread is in (1 on the first)."""
        return int(getattr(self._thread, "attempt", 1))

    def connect(self, *, autocommit: bool = True) -> Connection[tuple[Any, ...]]:
        """A connection of its own, outside the pool (for LISTEN); DatabaseUnavailableError when
        the server cannot be reached."""
        import psycopg

        try:
            return psycopg.connect(self._url, autocommit=autocommit, connect_timeout=_PROBE_TIMEOUT)
        except psycopg.OperationalError as error:
            raise DatabaseUnavailableError(
                f"{self._label} cannot be reached ({_first_line(error)})", database=self._label
            ) from None

    def close(self) -> None:
        """Close every pooled connection; the next `run` opens the pool again."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Database({self._label!r})"

    # -- internals ------------------------------------------------------------------------------

    def _connection(self) -> Any:
        with self._lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                self._pool = ConnectionPool(
                    self._url,
                    min_size=self._min_size,
                    max_size=self._max_size,
                    timeout=self._pool_timeout,
                    # A connection the server dropped (a restart) is found and replaced when
                    # taken, not in the middle of a write.
                    check=ConnectionPool.check_connection,
                    name=self._label,
                    open=False,
                )
                self._pool.open(wait=False)
            pool = self._pool
        return pool.connection()

    def _require_schema(self, connection: Connection[tuple[Any, ...]]) -> None:
        if self._schema_checked:
            return
        from promptkit.database._schema import require_schema

        require_schema(connection, self._label)
        self._schema_checked = True

    def _no_connection(self, error: Exception, what: str) -> Exception:
        """A pool timeout is either a busy pool or a server that cannot be reached: a direct
        connection tells which."""
        try:
            self.connect().close()
        except DatabaseUnavailableError as unreachable:
            return DatabaseUnavailableError(
                f"could not {what}: {unreachable}; nothing was written", database=self._label
            )
        return DatabaseBusyError(
            f"{self._label}: could not {what}: all {self._max_size} pooled connections stayed in"
            f" use for {self._pool_timeout:g} s; nothing was written (raise max_size, or hold"
            " connections for less time)",
            database=self._label,
        )


def _first_line(error: BaseException | None) -> str:
    text = str(error).strip() if error is not None else "unknown error"
    return text.splitlines()[0] if text else type(error).__name__
