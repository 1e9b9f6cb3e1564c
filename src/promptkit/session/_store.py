"""SessionStore: durable JSONL persistence of sessions, per workspace, with crash recovery.

Layout under the state root (explicit argument > $PROMPTKIT_HOME > ~/.promptkit):

    workspaces/.gitignore                          "*": git and promptkit's own listings
                                                   leave the sessions out, wherever the
                                                   state root is (even inside a workspace)
    workspaces/<workspace_id>/sessions/<session_id>/metadata.json
                                                   /base.jsonl    the slices at one seq
                                                   /events.jsonl  changes after it, appended
    workspaces/<workspace_id>/runs/<kind>/         the record of a command's last run
                                                   (`run_dir`: manifest.json and artifacts)

A session's state is base plus every event record with a higher seq, applied in seq order.
Records hold the *changes* an event made (values appended, or a slice's new contents), never the
reducer that made them, so loading needs no reducers. The record format and its checksum chain
are in `promptkit.session._records`; appending is `promptkit.session._attachment`.

A loaded session remembers the last record it was loaded at. Attaching it again after the
stored log moved on (another process appended) is refused with `SessionStaleError`: writing the
copy in hand as the new base would drop those events.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from promptkit._durable import write_atomically
from promptkit._input_files import open_regular_file
from promptkit._names import require_key
from promptkit.errors import SessionError, SessionStaleError
from promptkit.logging import get_logger
from promptkit.session._attached import Attached
from promptkit.session._attachment import FsyncPolicy, SessionAttachment, acquire_session_lock
from promptkit.session._records import (
    BASE_FILE,
    EVENTS_FILE,
    METADATA_FILE,
    StoredSession,
    check_head,
    read_base,
    read_metadata,
    replay_events,
    require_current,
    stored_head,
    trace_id_or_new,
    workspace_id,
)
from promptkit.session._session import Session, StoredLog

__all__ = [
    "FsyncPolicy",
    "SessionAttachment",
    "SessionStore",
    "StoredSession",
    "resolve_state_root",
    "workspace_id",
]

_log = get_logger("promptkit.session")

_EVERY_EVENT = FsyncPolicy()


def resolve_state_root(state_root: Path | str | None = None) -> Path:
    """The state root: `state_root` if given, else $PROMPTKIT_HOME, else ~/.promptkit."""
    chosen = state_root if state_root is not None else os.environ.get("PROMPTKIT_HOME") or None
    path = Path(chosen) if chosen is not None else Path.home() / ".promptkit"
    return path.expanduser().resolve()


class SessionStore:
    """Persists sessions under a state root; see the module docstring for the layout."""

    def __init__(
        self, state_root: Path | str | None = None, *, fsync: FsyncPolicy = _EVERY_EVENT
    ) -> None:
        self._state_root = resolve_state_root(state_root)
        self._fsync = fsync
        self._attached: Attached[SessionAttachment] = Attached()

    @property
    def state_root(self) -> Path:
        return self._state_root

    @property
    def fsync(self) -> FsyncPolicy:
        return self._fsync

    @property
    def state_folders(self) -> tuple[Path, ...]:
        """The state root: a workspace listing that contains it leaves it out."""
        return (self._state_root,)

    def location(self, workspace_root: Path | str, session_id: str) -> str:
        """The folder of session `session_id` of `workspace_root`, as text."""
        return str(self.session_dir(workspace_root, session_id))

    def session_dir(self, workspace_root: Path | str, session_id: str) -> Path:
        """Where session `session_id` of `workspace_root` lives; the id is checked first."""
        require_key(session_id, what="session id", error=SessionError)
        return self._sessions_dir(workspace_root) / session_id

    def attach(
        self, session: Session, workspace_root: Path | str, *, trace_id: str | None = None
    ) -> SessionAttachment:
        """Record every later change of `session` under `workspace_root` until closed.

        The current state is written as the new base first (so a session that already holds
        values, or was loaded, starts complete). A stored session with the same id can only be
        continued by the session `load` returned for it, and only while the stored log is
        still where that copy was loaded (`SessionStaleError` otherwise); anything else is
        refused rather than overwritten. `trace_id` (key rule; default a fresh random id) marks
        every record written through this attachment.
        """
        trace = trace_id_or_new(trace_id)
        root = Path(workspace_root).expanduser().resolve()
        session_dir = self.session_dir(root, session.session_id)

        def start() -> SessionAttachment:
            # Called with the session's changes held, so the base it writes is its state.
            session_dir.mkdir(parents=True, exist_ok=True)
            _ignore_in_listings(self._state_root / "workspaces")
            attachment = SessionAttachment(
                store=self,
                session=session,
                workspace_root=root,
                session_dir=session_dir,
                trace_id=trace,
                file_lock=acquire_session_lock(session_dir),
            )
            try:
                stored = any((session_dir / name).exists() for name in (METADATA_FILE, BASE_FILE))
                if stored:
                    require_current(session, str(session_dir), stored_head(session_dir))
                attachment.start(existing=stored)
            except BaseException:
                attachment.release()
                raise
            return attachment

        attachment = session.attach_recorder(start)
        self._attached.add(attachment)
        _log.info(
            "session_attached",
            session_id=session.session_id,
            path=str(session_dir),
            trace_id=trace,
        )
        return attachment

    def compact(self, session: Session) -> None:
        """Rewrite `session`'s base.jsonl atomically with its current state; empty events.jsonl."""
        self._attached.of(session).compact()

    def load(self, workspace_root: Path | str, session_id: str) -> Session:
        """Rebuild session `session_id` of `workspace_root` from base plus events in seq order.

        A torn last line of events.jsonl (a crash mid-append) is skipped with a warning; any
        other damaged record, or one altered, deleted or moved after it was written, raises
        SessionCorruptError naming file:line. Slice names must be registered in this process.
        Reducers are code, not data: register them again on the returned session before
        dispatching more events.
        """
        session_dir = self.session_dir(workspace_root, session_id)
        if not session_dir.is_dir():
            raise SessionError(
                f"no stored session {session_id!r} for workspace {Path(workspace_root)} "
                f"(looked in {session_dir})"
            )
        base_file = session_dir / BASE_FILE
        for _ in range(_LOAD_ATTEMPTS):
            # Another process may compact the session while it is read: it replaces base.jsonl,
            # then empties events.jsonl. A base header that changed during the read means the
            # base and the events read may be of two different moments: read them again.
            header = _header_line(base_file)
            metadata = read_metadata(session_dir / METADATA_FILE)
            base, slices = read_base(base_file, session_id)
            head = replay_events(session_dir / EVENTS_FILE, session_id, base, slices)
            if _header_line(base_file) == header:
                break
        else:
            raise SessionStaleError(
                f"session {session_id!r} in {session_dir} was compacted by another process"
                f" each of the {_LOAD_ATTEMPTS} times it was read; load it again later"
            )
        check_head(head, metadata.head, events=str(session_dir / EVENTS_FILE))
        return Session.restore(
            session_id=session_id,
            tags=metadata.tags,
            seq=head[0],
            slices=slices,
            stored_log=StoredLog(str(session_dir), head),
        )

    def sessions(self, workspace_root: Path | str) -> tuple[StoredSession, ...]:
        """The stored sessions of `workspace_root`, most recently active first."""
        sessions_dir = self._sessions_dir(workspace_root)
        if not sessions_dir.is_dir():
            return ()
        found = []
        for entry in sessions_dir.iterdir():
            metadata_path = entry / METADATA_FILE
            # Directories we did not create (bad names, no metadata) are not sessions.
            if not (entry.is_dir() and _is_key(entry.name) and metadata_path.is_file()):
                continue
            found.append(read_metadata(metadata_path))
        return tuple(sorted(found, key=lambda s: (s.last_activity, s.session_id), reverse=True))

    def latest(self, workspace_root: Path | str) -> Session | None:
        """The most recently active stored session of `workspace_root`, loaded; None if none."""
        stored = self.sessions(workspace_root)
        return self.load(workspace_root, stored[0].session_id) if stored else None

    def close(self) -> None:
        """Close every attachment made through this store (fsync, unlock, status 'closed')."""
        for attachment in self._attached.all():
            attachment.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def run_dir(self, workspace_root: Path | str, kind: str) -> Path:
        """Where a command keeps the record of its last run of `kind` (`optimize`) on
        `workspace_root`. Nothing is created, except that a state root inside the workspace is
        marked ignored first (as writing a session does), so the record never shows in the
        workspace's listing, digest or fingerprint."""
        require_key(kind, what="run kind", error=SessionError)
        workspaces = self._state_root / "workspaces"
        state, workspace = self._state_root.resolve(), Path(workspace_root).resolve()
        if state == workspace or workspace in state.parents:
            workspaces.mkdir(parents=True, exist_ok=True)
            _ignore_in_listings(workspaces)
        return workspaces / workspace_id(workspace_root) / "runs" / kind

    def _sessions_dir(self, workspace_root: Path | str) -> Path:
        return self._state_root / "workspaces" / workspace_id(workspace_root) / "sessions"

    def _forget(self, attachment: SessionAttachment) -> None:
        self._attached.forget(attachment)


_IGNORE_EVERYTHING = (
    "# Written by promptkit: session files are state, not source; tools that honour"
    " .gitignore\n# (git, and promptkit's workspace listings) leave them out.\n*\n"
)


def _ignore_in_listings(folder: Path) -> None:
    """Put a `.gitignore` that ignores everything in `folder` (only promptkit writes there), so a
    state root inside a workspace never shows in its listing, digest or fingerprint."""
    marker = folder / ".gitignore"
    if not marker.exists():
        write_atomically(marker, _IGNORE_EVERYTHING)


_LOAD_ATTEMPTS = 20


def _header_line(base_file: Path) -> bytes | None:
    """The first line of base.jsonl (its header, unique to each write of the base)."""
    try:
        # Opened only when regular: a FIFO would block here (the read reports what it is).
        with open_regular_file(base_file) as file:
            return file.readline()
    except OSError:
        return None


def _is_key(name: str) -> bool:
    try:
        require_key(name, what="session id", error=SessionError)
    except SessionError:
        return False
    return True
