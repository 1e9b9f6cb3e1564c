"""Sessions: typed slices changed by events through reducers, snapshots, and JSONL persistence.

`Session` is the one place promptkit state changes; `SessionStore` makes it durable per
workspace in files and `PostgresSessionStore` in a PostgreSQL database (both
`SessionStoreProtocol`), through the public seam a store works with (`Session.restore`,
`Session.attach_recorder` with a `SessionRecorder`, `Session.changes_held`, `StoredLog`). The
user guide is docs/sessions.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.session._events import (
        ModelReplied as ModelReplied,
        PromptExecuted as PromptExecuted,
        PromptRendered as PromptRendered,
        SessionRolledBack as SessionRolledBack,
        SliceCleared as SliceCleared,
        SliceSeeded as SliceSeeded,
        ToolInvoked as ToolInvoked,
    )
    from promptkit.session._postgres import (
        PostgresSessionAttachment as PostgresSessionAttachment,
        PostgresSessionStore as PostgresSessionStore,
    )
    from promptkit.session._protocol import (
        SessionAttachmentProtocol as SessionAttachmentProtocol,
        SessionProtocol as SessionProtocol,
        SessionStoreProtocol as SessionStoreProtocol,
    )
    from promptkit.session._reducers import (
        Reducer as Reducer,
        append as append,
        replace_latest as replace_latest,
        upsert_by as upsert_by,
    )
    from promptkit.session._session import (
        Session as Session,
        SessionRecorder as SessionRecorder,
        StoredLog as StoredLog,
        Subscriber as Subscriber,
    )
    from promptkit.session._slices import (
        register_in_memory_slice_type as register_in_memory_slice_type,
        register_slice_type as register_slice_type,
    )
    from promptkit.session._snapshot import SessionSnapshot as SessionSnapshot
    from promptkit.session._store import (
        FsyncPolicy as FsyncPolicy,
        SessionAttachment as SessionAttachment,
        SessionStore as SessionStore,
        StoredSession as StoredSession,
        resolve_state_root as resolve_state_root,
        workspace_id as workspace_id,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.session._events": (
                "ModelReplied",
                "PromptExecuted",
                "PromptRendered",
                "SessionRolledBack",
                "SliceCleared",
                "SliceSeeded",
                "ToolInvoked",
            ),
            "promptkit.session._postgres": ("PostgresSessionAttachment", "PostgresSessionStore"),
            "promptkit.session._protocol": (
                "SessionAttachmentProtocol",
                "SessionProtocol",
                "SessionStoreProtocol",
            ),
            "promptkit.session._reducers": ("Reducer", "append", "replace_latest", "upsert_by"),
            "promptkit.session._session": ("Session", "SessionRecorder", "StoredLog", "Subscriber"),
            "promptkit.session._slices": ("register_in_memory_slice_type", "register_slice_type"),
            "promptkit.session._snapshot": ("SessionSnapshot",),
            "promptkit.session._store": (
                "FsyncPolicy",
                "SessionAttachment",
                "SessionStore",
                "StoredSession",
                "resolve_state_root",
                "workspace_id",
            ),
        },
    )
