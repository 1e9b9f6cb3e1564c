"""Session ids, tag names and slice names follow the key rule; hypothesis explores the rest."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from promptkit.errors import SessionError
from promptkit.session import Session, SessionStore

ALLOWED_FIRST = set(string.ascii_lowercase + string.digits)
ALLOWED_REST = ALLOWED_FIRST | set("._-")


def _follows_key_rule(name: str) -> bool:
    return (
        1 <= len(name) <= 64
        and name[0] in ALLOWED_FIRST
        and all(character in ALLOWED_REST for character in name[1:])
    )


names = st.text(
    alphabet=st.sampled_from(list("aZ09._-/\\\x00 \n\t:é") + list(string.ascii_lowercase)),
    max_size=70,
) | st.text(max_size=70)


@given(names)
def test_session_ids_outside_the_key_rule_are_refused(name: str) -> None:
    if _follows_key_rule(name):
        assert Session(session_id=name).session_id == name
    else:
        with pytest.raises(SessionError, match="invalid session id"):
            Session(session_id=name)


@given(names)
def test_tag_names_and_values_outside_the_key_rule_are_refused(name: str) -> None:
    if _follows_key_rule(name):
        assert Session(tags={name: name}).tags == {name: name}
    else:
        with pytest.raises(SessionError, match="invalid session tag name"):
            Session(tags={name: "ok"})
        with pytest.raises(SessionError, match="invalid value of session tag"):
            Session(tags={"ok": name})


@given(st.from_regex(r"[a-z0-9][a-z0-9._-]{0,63}", fullmatch=True))
def test_every_valid_session_id_stays_inside_the_sessions_directory(name: str) -> None:
    store = SessionStore("/nonexistent-state-root")
    session_dir = store.session_dir("/workspace", name)
    assert session_dir.parent.name == "sessions"
    assert session_dir.name == name
    assert Path(session_dir).resolve().parent == session_dir.parent
