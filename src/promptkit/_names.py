"""The naming rule shared by section keys, namespaces, tags, session ids and override paths.

One rule everywhere means a name that is valid in code is also safe as a path segment on disk:
lower-case ASCII letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 64
characters. Names like `..`, `a/b`, `A` or the empty string can never reach the filesystem.
"""

from __future__ import annotations

import re

from promptkit.errors import PromptkitError

KEY_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
KEY_RULE = (
    "lower-case letters, digits, '.', '_' or '-', starting with a letter or digit, 1-64 chars"
)


def is_valid_key(value: object) -> bool:
    """Whether `value` is a string that follows the key rule."""
    return (
        isinstance(value, str)
        and KEY_PATTERN.fullmatch(value) is not None
        and not _is_dot_segment(value)
    )


def require_key(value: object, *, what: str, error: type[PromptkitError]) -> str:
    """Return `value` when it follows the key rule, else raise `error` naming `what` and value."""
    if is_valid_key(value):
        assert isinstance(value, str)
        return value
    raise error(f"invalid {what} {value!r}: expected {KEY_RULE}")


def _is_dot_segment(value: str) -> bool:
    # "." and ".." already fail the first-character rule; this guards a future loosening of it.
    return value in {".", ".."}
