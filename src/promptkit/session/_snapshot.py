"""SessionSnapshot: an immutable copy of every slice of a session at one sequence number.

A snapshot in memory holds every slice, registered or not, so `Session.rollback` restores all of
them. Its JSON form (`to_json` / `from_json`) holds the registered slice types only, by their
stable names; slices of unregistered types are in-memory state and are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, TypeVar

from promptkit.errors import SessionError
from promptkit.session._codec import codec_for
from promptkit.session._slices import slice_name, slice_type_named

T = TypeVar("T")

SNAPSHOT_FORMAT = 1


@dataclass(frozen=True)
class SessionSnapshot:
    """The slices of session `session_id` after event number `seq`, taken at `taken_at`."""

    session_id: str
    seq: int
    taken_at: datetime
    slices: Mapping[type[Any], tuple[Any, ...]] = field(hash=False)

    def __post_init__(self) -> None:
        # Empty slices are dropped so that two snapshots of the same state compare equal.
        kept = {t: tuple(values) for t, values in self.slices.items() if values}
        object.__setattr__(self, "slices", MappingProxyType(kept))

    def select_all(self, slice_type: type[T]) -> tuple[T, ...]:
        """The values of `slice_type` in this snapshot (empty when it had none)."""
        return self.slices.get(slice_type, ())

    def to_json(self) -> str:
        """UTF-8 JSON of the registered slices; unregistered slice types are left out."""
        slices: dict[str, list[Any]] = {}
        for slice_type, values in self.slices.items():
            name = slice_name(slice_type)
            if name is not None:
                codec = codec_for(slice_type)
                slices[name] = [codec.encode(value) for value in values]
        document = {
            "format": SNAPSHOT_FORMAT,
            "session_id": self.session_id,
            "seq": self.seq,
            "taken_at": self.taken_at.isoformat(),
            "slices": dict(sorted(slices.items())),
        }
        return json.dumps(document, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> SessionSnapshot:
        """Rebuild a snapshot written by `to_json`; SessionError naming what is wrong otherwise.

        Every slice name must be registered in this process (`register_slice_type`).
        """
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SessionError(f"snapshot JSON is malformed: {exc}") from None
        if not isinstance(document, dict) or document.get("format") != SNAPSHOT_FORMAT:
            raise SessionError(
                f"not a session snapshot: expected an object with format {SNAPSHOT_FORMAT}"
            )
        session_id = document.get("session_id")
        seq = document.get("seq")
        taken_at = document.get("taken_at")
        stored = document.get("slices")
        if not (
            isinstance(session_id, str)
            and isinstance(seq, int)
            and isinstance(taken_at, str)
            and isinstance(stored, dict)
        ):
            raise SessionError(
                "session snapshot needs session_id (string), seq (integer), taken_at (ISO 8601 "
                "string) and slices (object)"
            )
        try:
            taken = datetime.fromisoformat(taken_at)
        except ValueError:
            raise SessionError(f"snapshot taken_at {taken_at!r} is not ISO 8601") from None
        slices: dict[type[Any], tuple[Any, ...]] = {}
        for name, values in stored.items():
            slice_type = slice_type_named(name)
            if not isinstance(values, list):
                raise SessionError(f"snapshot slice {name!r} must be an array of values")
            codec = codec_for(slice_type)
            slices[slice_type] = tuple(codec.decode(value) for value in values)
        return cls(session_id=session_id, seq=seq, taken_at=taken, slices=slices)
