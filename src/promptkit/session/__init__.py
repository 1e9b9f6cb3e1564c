"""Sessions: typed slices changed by events through reducers, snapshots, and JSONL persistence.

`Session` is the one place promptkit state changes; `SessionStore` makes it durable per
workspace, through the public seam a store works with (`Session.restore`,
`Session.attach_recorder` with a `SessionRecorder`, `Session.changes_held`, `StoredLog`). The
user guide is docs/sessions.md.
"""

from promptkit.session.events import (
    PromptExecuted,
    PromptRendered,
    SessionRolledBack,
    SliceCleared,
    SliceSeeded,
    ToolInvoked,
)
from promptkit.session.protocol import SessionProtocol
from promptkit.session.reducers import Reducer, append, replace_latest, upsert_by
from promptkit.session.session import Session, SessionRecorder, StoredLog, Subscriber
from promptkit.session.slices import register_in_memory_slice_type, register_slice_type
from promptkit.session.snapshot import SessionSnapshot
from promptkit.session.store import (
    FsyncPolicy,
    SessionAttachment,
    SessionStore,
    StoredSession,
    resolve_state_root,
    workspace_id,
)

__all__ = [
    "FsyncPolicy",
    "PromptExecuted",
    "PromptRendered",
    "Reducer",
    "Session",
    "SessionAttachment",
    "SessionProtocol",
    "SessionRecorder",
    "SessionRolledBack",
    "SessionSnapshot",
    "SessionStore",
    "SliceCleared",
    "SliceSeeded",
    "StoredLog",
    "StoredSession",
    "Subscriber",
    "ToolInvoked",
    "append",
    "register_in_memory_slice_type",
    "register_slice_type",
    "replace_latest",
    "resolve_state_root",
    "upsert_by",
    "workspace_id",
]
