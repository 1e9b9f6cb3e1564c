"""Credential detection and redaction: the one scanner every sink of promptkit passes through.

`find_secrets` reports where a credential sits (rule, line, column) and never the value itself;
`redact_secrets` replaces each credential with `[REDACTED:<rule>]`; `redact_value` does the same
for every string inside nested dicts, lists, tuples and exceptions (log records, session
records, tool values); `mask_secrets` also says which rules fired, for a note to the reader.
They run on every tool result before the model sees it, on every log record, on session
records, execution records, override bodies and digests, so the scan is built to be cheap: one
regex pass finds every provider-token prefix, the other rules only look at text holding a
literal they need (`://`, `PRIVATE KEY`, `Q~`, `-u`) or at lines holding a secret-like word. No
pattern can backtrack catastrophically: quantifiers are bounded or possessive.

The rules, by the name that appears in findings and redaction markers:

- Shaped tokens, found with no name in front (facts from gitleaks' default rule set): OpenAI
  (`openai-api-key`, `openai-project-key`), `anthropic-api-key`, `aws-access-key-id`,
  `github-token`, `github-fine-grained-token`, `gitlab-token`, `slack-token`,
  `json-web-token`, `stripe-secret-key` (`sk_live_`, `rk_live_`), `google-api-key` (`AIza`),
  `sendgrid-api-key`, `huggingface-token`, `npm-token`, `pypi-token`, `azure-client-secret`,
  `shopify-token`, `digitalocean-token`, `square-token`, `linear-api-key`, `postman-api-key`,
  `age-secret-key`, `vault-token`, `grafana-token`, `heroku-api-key`, `atlassian-api-token`,
  `twilio-api-key`, `databricks-token` (see `promptkit.secrets._tokens`).
- `private-key`: a whole PEM/OpenSSH/PGP private key block, or a 64/70-character base64 body
  line of one seen without its BEGIN line.
- `url-password` (`scheme://user:password@host`) and `url-token` (a generated-looking token in
  a URL path or a `?token=` query value; see `promptkit.secrets._urls`).
- Named values: `secret-assignment`, `aws-secret-access-key`, `basic-auth-password`,
  `bearer-token` (see `promptkit.secrets._named`).

Redaction markers are never taken for secrets, so redacting twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from promptkit.secrets._common import Span, shannon_entropy
from promptkit.secrets._named import basic_auth_spans, secret_line_spans
from promptkit.secrets._tokens import (
    azure_secret_spans,
    pem_body_spans,
    private_key_spans,
    token_spans,
)
from promptkit.secrets._urls import url_spans

__all__ = [
    "MaskedText",
    "SecretFinding",
    "find_secrets",
    "mask_secrets",
    "redact_secrets",
    "redact_value",
    "shannon_entropy",
]

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
