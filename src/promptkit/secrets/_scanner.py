"""The scan itself: finding, masking and redacting credentials by every rule of the package.

Each rule family lives in its own module (`_tokens`, `_urls`, `_named`); this one runs them on
a text, keeps the earliest and longest span where they overlap, and walks nested values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from promptkit.secrets._common import Span
from promptkit.secrets._named import basic_auth_spans, secret_line_spans
from promptkit.secrets._tokens import (
    azure_secret_spans,
    infix_token_spans,
    pem_body_spans,
    private_key_spans,
    token_spans,
)
from promptkit.secrets._urls import url_spans

# Nested values deeper than this are replaced whole: a cyclic or adversarially deep structure
# must not turn redaction into a crash (or let its innermost strings through unscanned).
_MAX_REDACTION_DEPTH = 64
_TOO_DEEP = "[REDACTED:nested too deep to scan]"


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One credential found in a text: which rule matched and where (1-based line and column).

    The value is never kept, so a finding is safe to log, store or show.
    `location` is whatever the caller passed to `find_secrets` (a file path, a log field...).
    """

    rule: str
    line: int
    column: int
    location: str | None = None


@dataclass(frozen=True, slots=True)
class MaskedText:
    """A text with its credentials replaced, and the rules that replaced them (sorted, unique)."""

    text: str
    rules: tuple[str, ...]

    @property
    def is_masked(self) -> bool:
        return bool(self.rules)


def find_secrets(text: str, *, location: str | None = None) -> list[SecretFinding]:
    """Every credential in `text`, in text order, as (rule, line, column): never the value."""
    findings: list[SecretFinding] = []
    for span in _find_spans(text):
        line_start = text.rfind("\n", 0, span.start) + 1
        findings.append(
            SecretFinding(
                rule=span.rule,
                line=text.count("\n", 0, span.start) + 1,
                column=span.start - line_start + 1,
                location=location,
            )
        )
    return findings


def redact_secrets(text: str) -> str:
    """`text` with every credential replaced by `[REDACTED:<rule>]`; other text is untouched."""
    return mask_secrets(text).text


def mask_secrets(text: str) -> MaskedText:
    """`redact_secrets` that also reports which rules fired."""
    spans = _find_spans(text)
    if not spans:
        return MaskedText(text, ())
    parts: list[str] = []
    cursor = 0
    for span in spans:
        parts.append(text[cursor : span.start])
        parts.append(f"[REDACTED:{span.rule}]")
        cursor = span.end
    parts.append(text[cursor:])
    return MaskedText("".join(parts), tuple(sorted({span.rule for span in spans})))


def redact_value(value: Any, *, _depth: int = 0) -> Any:
    """`value` with every string inside it redacted, at any nesting depth.

    Dicts (keys and values), lists, tuples (returned as lists, as JSON holds them), sets and
    exceptions (as `Type: message`) are walked; other objects are returned unchanged, since only
    their own serialiser knows their text.
    """
    if isinstance(value, str):
        return redact_secrets(value)
    if _depth >= _MAX_REDACTION_DEPTH:
        return _TOO_DEEP if isinstance(value, Mapping | list | tuple | set) else value
    if isinstance(value, Mapping):
        return {
            redact_value(key, _depth=_depth + 1): redact_value(item, _depth=_depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_value(item, _depth=_depth + 1) for item in value]
    if isinstance(value, set | frozenset):
        return {redact_value(item, _depth=_depth + 1) for item in value}
    if isinstance(value, BaseException):
        return redact_secrets(f"{type(value).__name__}: {value}")
    return value


def _find_spans(text: str) -> list[Span]:
    """Non-overlapping spans sorted by start; where rules overlap the earliest, longest wins."""
    found = token_spans(text)
    if "PRIVATE KEY" in text:
        found.extend(private_key_spans(text))
    found.extend(pem_body_spans(text))
    if "Q~" in text:
        found.extend(azure_secret_spans(text))
    found.extend(infix_token_spans(text))
    if "://" in text:
        found.extend(url_spans(text))
    if "-u" in text or "--user" in text:
        found.extend(basic_auth_spans(text))
    found.extend(secret_line_spans(text))
    if not found:
        return found
    # Stable sort: on an identical span the token rule, found first, names the finding.
    found.sort(key=lambda span: (span.start, -span.end))
    kept: list[Span] = []
    for span in found:
        if kept and span.start < kept[-1].end:
            continue
        kept.append(span)
    return kept
