"""`PostgresServer`: a throwaway PostgreSQL server in a temporary folder, for tests and benchmarks.

It runs the machine's own server binaries (`initdb`, `pg_ctl`, `postgres`: found on PATH, in
/usr/local/bin, or under /usr/lib/postgresql/<version>/bin), listens on a Unix socket inside its
folder only (no TCP port, so servers of parallel test workers never collide), trusts local
connections, and is removed whole by `stop()`. `initdb` refuses to run as root: under root the
server runs as an unprivileged user (`postgres` when the machine has one, else `nobody`), which
owns the folder; nothing else changes.

    with PostgresServer.start() as server:
        url = server.create_database("app")   # postgresql://promptkit@/app?host=...

`PostgresServer.binaries()` is None where no server is installed: a test suite skips with that
reason instead of failing.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import quote

from promptkit.errors import RunError

SUPERUSER = "promptkit"
_UNPRIVILEGED_USERS = ("postgres", "nobody")
# A test server trades durability for speed: nothing here must survive a power loss.
FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


class PostgresServerError(RunError, RuntimeError):
    """The test server could not be set up, started or stopped; the message has its log."""


@dataclass(frozen=True)
class PostgresBinaries:
    """Where `initdb` and `pg_ctl` are."""

    initdb: Path
    pg_ctl: Path


class PostgresServer:
    """A PostgreSQL server of its own in a temporary folder (see the module doc)."""

    def __init__(
        self, folder: Path, binaries: PostgresBinaries, user: str | None, settings: dict[str, str]
    ) -> None:
        self._folder = folder
        self._binaries = binaries
        self._user = user
        self._settings = settings
        self._running = False

    @staticmethod
    def binaries() -> PostgresBinaries | None:
        """The server binaries of this machine, or None when none are installed."""
        candidates = [os.environ.get("PATH", ""), "/usr/local/bin"]
        candidates.extend(sorted(map(str, Path("/usr/lib/postgresql").glob("*/bin")), reverse=True))
        for folder in candidates:
            initdb = shutil.which("initdb", path=folder)
            pg_ctl = shutil.which("pg_ctl", path=folder)
            if initdb and pg_ctl:
                return PostgresBinaries(Path(initdb), Path(pg_ctl))
        return None

    @classmethod
    def start(
        cls, *, durable: bool = False, settings: dict[str, str] | None = None
    ) -> PostgresServer:
        """Create a cluster in a new temporary folder and start it; PostgresServerError when no
        binaries are installed or the server does not come up. `durable=False` (the default)
        turns fsync off; `settings` are more `postgres -c` settings."""
        binaries = cls.binaries()
        if binaries is None:
            raise PostgresServerError(
                "no PostgreSQL server binaries (initdb, pg_ctl) on PATH, in /usr/local/bin or"
                " under /usr/lib/postgresql"
            )
        folder = Path(tempfile.mkdtemp(prefix="pk-pg-"))
        user = _unprivileged_user() if os.geteuid() == 0 else None
        chosen = ({} if durable else dict(FAST_SETTINGS)) | (settings or {})
        server = cls(folder, binaries, user, chosen)
        try:
            server._initdb()
            server._pg_ctl("start", *server._start_options())
        except BaseException:
            server._remove()
            raise
        server._running = True
        atexit.register(server.stop)
        return server

    @property
    def folder(self) -> Path:
        return self._folder

    @property
    def socket_folder(self) -> Path:
        return self._folder / "run"

    @property
    def log_file(self) -> Path:
        return self._folder / "server.log"

    def url(self, database: str = "postgres") -> str:
        """The connection URL of `database` on this server."""
        return f"postgresql://{SUPERUSER}@/{database}?host={quote(str(self.socket_folder))}"

    def create_database(self, name: str) -> str:
        """Create database `name` (letters, digits and `_`) and return its URL."""
        if not name.replace("_", "").isalnum() or not name.isascii():
            raise PostgresServerError(f"database name {name!r}: use letters, digits and '_'")
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def restart(self) -> None:
        """Stop the server (fast: open connections are cut) and start it again."""
        self._pg_ctl("restart", "-m", "fast", *self._start_options())

    def stop_server(self) -> None:
        """Stop the server, keeping its folder (start it again with `start_server`)."""
        if self._running:
            self._pg_ctl("stop", "-w", "-t", "60", "-m", "fast")
            self._running = False

    def start_server(self) -> None:
        """Start the server again after `stop_server`."""
        if not self._running:
            self._pg_ctl("start", *self._start_options())
            self._running = True

    def stop(self) -> None:
        """Stop the server and remove its folder; calling it again does nothing."""
        with contextlib.suppress(PostgresServerError):
            self.stop_server()
        self._remove()
        atexit.unregister(self.stop)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _start_options(self) -> tuple[str, ...]:
        # `-l`: the server's output goes to its log, never to a pipe of ours it would hold open.
        return ("-w", "-t", "60", "-l", str(self.log_file), "-o", self._options())

    def _options(self) -> str:
        options = {
            "listen_addresses": "''",
            "unix_socket_directories": f"'{self.socket_folder}'",
            "max_connections": "200",
            **self._settings,
        }
        return " ".join(f"-c {key}={value}" for key, value in options.items())

    def _initdb(self) -> None:
        self.socket_folder.mkdir()
        if self._user is not None:
            for path in (self._folder, self.socket_folder):
                shutil.chown(path, self._user)
        self._run(
            str(self._binaries.initdb),
            "-D",
            str(self._folder / "data"),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )

    def _pg_ctl(self, *args: str) -> None:
        self._run(str(self._binaries.pg_ctl), "-D", str(self._folder / "data"), *args)

    def _run(self, *command: str) -> None:
        completed = subprocess.run(
            command,
            cwd=self._folder,
            user=self._user,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode != 0:
            log = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
            raise PostgresServerError(
                f"{' '.join(Path(part).name for part in command[:4])} failed (exit"
                f" {completed.returncode}): {completed.stderr.strip()}\n{log[-2000:]}"
            )

    def _remove(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


def _unprivileged_user() -> str:
    import pwd

    for name in _UNPRIVILEGED_USERS:
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise PostgresServerError(
        "initdb refuses to run as root and this machine has no 'postgres' or 'nobody' user to"
        " run the server as"
    )
