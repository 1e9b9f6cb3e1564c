"""The attachments a session store made and has not closed yet: what both stores keep the same
way, so `compact(session)` finds the attachment of a session and `close()` closes them all."""

from __future__ import annotations

import threading
from typing import Generic, Protocol, TypeVar

from promptkit.errors import SessionError
from promptkit.session._session import Session


class _Attachment(Protocol):
    @property
    def session(self) -> Session: ...


A = TypeVar("A", bound=_Attachment)


class Attached(Generic[A]):
    """Open attachments of one store; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[A] = []

    def add(self, attachment: A) -> None:
        with self._lock:
            self._open.append(attachment)

    def forget(self, attachment: A) -> None:
        with self._lock:
            if attachment in self._open:
                self._open.remove(attachment)

    def of(self, session: Session) -> A:
        """The open attachment of `session`; SessionError when it has none here."""
        with self._lock:
            found = [a for a in self._open if a.session is session]
        if not found:
            raise SessionError(
                f"session {session.session_id!r} is not attached to this store; "
                "attach it before compacting"
            )
        return found[0]

    def all(self) -> list[A]:
        with self._lock:
            return list(self._open)
