"""Markdown-safe text for the static digest, and the line value its parts are made of.

The digest goes into prompts, so it is held to a stricter standard than logs: on top of
`redact_secrets` (applied by the scan), any long word that mixes upper case, lower case and
digits with high entropy, such as a password passed as `-p <value>`, is replaced by
`[REDACTED:random-string]`, and nothing can break a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from promptkit.secrets import shannon_entropy

__all__ = ["DigestLine", "code_span", "count_of", "plain"]

_BACKTICKS = re.compile(r"`+")
# Paths and dotted names split at "/" and ".", so only opaque runs are candidates.
_OPAQUE_WORD = re.compile(r"[A-Za-z0-9+=_\-]{16,}")
_MIN_RANDOM_ENTROPY = 3.5
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


@dataclass(frozen=True, slots=True)
class DigestLine:
    """One whole line of the digest: its part, how much it matters, and its text."""

    section: str
    priority: float
    text: str
    # False for a line that may fill room left over, but never its section's reserved share.
    in_share: bool = True


def count_of(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def plain(text: str) -> str:
    """`text` safe to place on one markdown line: one line, no random-looking words."""
    return _OPAQUE_WORD.sub(_conceal_if_random, _UNPRINTABLE.sub("?", text))


def _conceal_if_random(match: re.Match[str]) -> str:
    word = match.group()
    is_mixed = (
        any(char.isupper() for char in word)
        and any(char.islower() for char in word)
        and any(char.isdigit() for char in word)
    )
    if is_mixed and shannon_entropy(word) >= _MIN_RANDOM_ENTROPY:
        return "[REDACTED:random-string]"
    return word


def code_span(text: str) -> str:
    """`text` as inline code, fenced with enough backticks to hold any it contains."""
    text = plain(text)
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in _BACKTICKS.findall(text)) + 1)
    return f"{fence} {text} {fence}"
