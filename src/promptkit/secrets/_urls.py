"""Credentials inside URLs: a password in the user part, a token in the path or the query.

`scheme://user:password@host` reports the password only (`git@host:org/repo` has no `://`).
Services that authenticate by URL put the token in the path (`/hooks/T0/B0/<token>`,
`/bot<id>:<token>/`, `/trigger/<token>`) or the query (`?token=`, `&sig=`); such a segment is
reported when it looks generated: long, and mixing upper case, lower case and digits, or hex
right after a segment that names a token. Commit ids, version numbers and slugs do not.
"""

from __future__ import annotations

import re

from promptkit.secrets._common import MIN_HEX_ENTROPY, Span, looks_generated, shannon_entropy

__all__ = ["url_spans"]

_URL_USERINFO = re.compile(r"[^\s/@:\"'<>]{1,256}+:([^\s/@\"'<>\[\]]{3,512}+)@")
# The rest of a URL after `://`: up to white space, a quote or a bracket that ends it in text.
_URL_REST = re.compile(r"[^\s\"'<>`()\[\]{}\\]{1,4096}+")
_PART = re.compile(r"[^/?&#=;]++")
_HEX = re.compile(r"[0-9a-fA-F]{32,128}")
_TOKEN_TEXT = re.compile(r"[A-Za-z0-9_\-]+")
_MIN_PATH_TOKEN_LENGTH = 20
# Path segments that say the next one is a credential (`/trigger/<hex>`, `/hooks/<hex>`).
_TOKEN_WORDS = frozenset(
    {"token", "tokens", "trigger", "hooks", "hook", "webhook", "webhooks", "secret", "key", "keys"}
)
_QUERY_NAMES = re.compile(
    r"(?i)(?:access_?token|api_?key|apikey|auth|key|password|private_token|secret|sig"
    r"|signature|token|x-amz-signature|x-goog-signature)"
)


def url_spans(text: str) -> list[Span]:
    """Passwords in URL user parts and generated-looking tokens in URL paths and queries."""
    spans: list[Span] = []
    index = text.find("://")
    while index != -1:
        start = index + 3
        userinfo = _URL_USERINFO.match(text, start)
        if userinfo is not None:
            spans.append(Span("url-password", userinfo.start(1), userinfo.end(1)))
        rest = _URL_REST.match(text, start)
        if rest is not None:
            spans.extend(_token_parts(text, rest.start(), rest.end()))
        index = text.find("://", start)
    return spans


def _token_parts(text: str, start: int, end: int) -> list[Span]:
    spans: list[Span] = []
    previous = ""
    path_start = text.find("/", start, end)
    if path_start == -1:
        return spans
    for part in _PART.finditer(text, path_start, end):
        value = part.group()
        separator = text[part.start() - 1]
        is_named_query_value = (
            separator == "=" and _QUERY_NAMES.fullmatch(previous) is not None and len(value) >= 8
        )
        if is_named_query_value or (separator in "/:=" and _looks_generated(value, after=previous)):
            spans.append(Span("url-token", part.start(), part.end()))
        previous = value
    return spans


def _looks_generated(value: str, *, after: str) -> bool:
    # `/bot123456:AA...`: a Telegram token keeps its id before a colon.
    token = value.rpartition(":")[2]
    if len(token) < _MIN_PATH_TOKEN_LENGTH:
        return False
    if _HEX.fullmatch(token):
        return after.lower() in _TOKEN_WORDS and shannon_entropy(token) >= MIN_HEX_ENTROPY
    return _TOKEN_TEXT.fullmatch(token) is not None and looks_generated(token)
