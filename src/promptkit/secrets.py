"""Credential detection and redaction for any text promptkit stores, logs or sends.

`find_secrets` reports where a credential sits (rule, line, column) and never the value itself;
`redact_secrets` replaces each credential with `[REDACTED:<rule>]`. Both run on every log record
and on every workspace digest, so the scan is built to be cheap: one regex pass finds every
provider-token prefix, the other rules only look at text holding a literal they need (`://`,
`PRIVATE KEY`, `-u`) or at lines holding a secret-like word. No pattern can backtrack
catastrophically: quantifiers are bounded or possessive.

Rules (the names that appear in findings and redaction markers):

- `openai-api-key`, `openai-project-key`, `anthropic-api-key`, `aws-access-key-id`,
  `github-token` (`ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`), `github-fine-grained-token`
  (`github_pat_`), `slack-token` (`xox[abprs]-`), `json-web-token` (`eyJ...`): tokens with a
  recognisable shape.
- `private-key`: a whole PEM/OpenSSH/PGP private key block (to the end of the text when its END
  line is missing).
- `url-password` (`scheme://user:password@host`), `basic-auth-password` (`curl -u user:pw`),
  `bearer-token` (`Authorization: Bearer ...`).
- `aws-secret-access-key`, `secret-assignment`: a high-entropy value given to a secret-like name
  (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, `*_API_KEY`...) as `NAME=value`, `NAME: value`,
  `"name": "value"` or `--name value`. Password-like names (`*PASSWORD*`, `*_PWD`, `*SECRET*`,
  `*_TOKEN`, `*_API_KEY`) also take a chosen password of 8 to 15 characters when it mixes
  character classes (`DB_PASSWORD=Tr0ub4dor&3`), but never letters alone (`changeme`, `str`), a
  path, or a value naming a secret or placeholder (`newPassword1`, `Example123`).

What deliberately does not count:

- Hashes, git SHAs and UUIDs by themselves: lockfiles (`integrity`, `hash`, `checksum`) and
  commit ids never match. They are reported only when assigned to a secret-like name
  (`WEBHOOK_SECRET=<hex>`), because that is how hex secrets are usually written down.
- References and code: `${{ secrets.X }}`, `$TOKEN`, `os.environ[...]`, an unquoted attribute
  path (`settings.API_KEY`), or words joined by separators (`user_account_id`) on the
  right-hand side.
- Redaction markers themselves, so redacting twice changes nothing.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["SecretFinding", "find_secrets", "redact_secrets", "shannon_entropy"]


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
class _Span:
    rule: str
    start: int
    end: int


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


# Every provider token starts with one of these literals; one pass finds them all, and each hit is
# then matched against its rules' full patterns. (Named groups here would defeat the regex engine's
# literal-prefix scan, so the hit is dispatched on its text instead.)
_TOKEN_PREFIX = re.compile(r"sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abprs]-|eyJ")


@dataclass(frozen=True, slots=True)
class _TokenRule:
    name: str
    pattern: re.Pattern[str]
    needs_digit: bool = False


_ANTHROPIC = _TokenRule("anthropic-api-key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,400}+"))
_OPENAI_PROJECT = _TokenRule("openai-project-key", re.compile(r"sk-proj-[A-Za-z0-9_\-]{20,400}+"))
# A digit is required so that prose such as `sk-learn-style-long-hyphenated-words` stays out.
_OPENAI = _TokenRule(
    "openai-api-key", re.compile(r"sk-(?!ant-|proj-)[A-Za-z0-9_\-]{20,400}+"), needs_digit=True
)
# Key ids have a fixed length: a longer run of capitals is some other identifier.
_AWS_KEY_ID = _TokenRule(
    "aws-access-key-id", re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
)
_GITHUB = _TokenRule("github-token", re.compile(r"gh[pousr]_[A-Za-z0-9]{36,251}+"))
_GITHUB_FINE_GRAINED = _TokenRule(
    "github-fine-grained-token", re.compile(r"github_pat_[A-Za-z0-9_]{22,244}+")
)
_SLACK = _TokenRule(
    "slack-token", re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,250}+"), needs_digit=True
)

# A signed JSON Web Token: base64url of `{"...` (hence `eyJ`) for header and payload, a signature.
_JWT = _TokenRule(
    "json-web-token",
    re.compile(r"eyJ[A-Za-z0-9_\-]{8,2048}+\.eyJ[A-Za-z0-9_\-]{8,8192}+\.[A-Za-z0-9_\-]{8,2048}+"),
)

# `sk-ant-` and `sk-proj-` are tried before plain `sk-` (whose pattern also refuses them), so an
# Anthropic key is never reported as an OpenAI one.
_RULES_BY_PREFIX_START: dict[str, tuple[_TokenRule, ...]] = {
    "sk": (_ANTHROPIC, _OPENAI_PROJECT, _OPENAI),
    "AK": (_AWS_KEY_ID,),
    "AS": (_AWS_KEY_ID,),
    "gh": (_GITHUB,),
    "gi": (_GITHUB_FINE_GRAINED,),
    "xo": (_SLACK,),
    "ey": (_JWT,),
}

_PRIVATE_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_END = re.compile(r"-----END [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")

# `scheme://user:password@host`: only the password is reported; `git@host:org/repo` has no `://`.
_URL_USERINFO = re.compile(r"[^\s/@:\"'<>]{1,256}+:([^\s/@\"'<>\[\]]{3,512}+)@")

_BEARER = re.compile(r"(?i)(?<![A-Za-z0-9])bearer[ \t]{1,4}+([A-Za-z0-9._~+/\-]{20,2048}+=*)")

# Only lines with one of these words can hold a bearer token or a `NAME = value` secret. The search
# runs on the lower-cased text, since a case-insensitive alternation is several times slower; the
# case-insensitive pattern is used only when lower-casing changed the text's length (and so its
# offsets), which a few Unicode letters do.
_SECRET_WORD = re.compile(r"key|token|secret|passw|pwd|bearer")
_SECRET_WORD_ANY_CASE = re.compile(r"(?i)key|token|secret|passw|pwd|bearer")

_ASSIGNMENT = re.compile(
    r"""
    (?<![A-Za-z0-9_.\-])
    (?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,99}+)
    ["']?+
    [ \t]{0,16}+
    (?::=|\?=|\+=|=|:)(?!=)
    [ \t]{0,16}+
    (?P<quote>["'`]?+)
    # 8 characters, not 16: short values count for password-like names (`_is_short_credential`).
    (?P<value>[^\s"'`,;()\[\]{}<>\\]{8,1024}+)
    (?=[\s"'`,;)\]}\\]|\Z)
    """,
    re.VERBOSE,
)

# `--password value`, `--api-token value`: a flag named like a secret, its value after a space.
_SECRET_FLAG = re.compile(
    r"(?<![A-Za-z0-9_\-])--(?P<name>[A-Za-z][A-Za-z0-9\-]{0,60}+)[ \t]++(?P<quote>[\"']?+)"
    r"(?P<value>[^\s\"'`;|&()<>\[\]{}\\]{8,1024}+)(?=[\s\"'`;|&)]|\Z)"
)

# `curl -u user:password`; uid:gid pairs (`docker run -u 1000:1000`) are not credentials.
_BASIC_AUTH_FLAG = re.compile(
    r"(?<!\S)(?:-u|--user)(?:[ \t]++|=)[\"']?+(?P<user>[^\s:\"'$]{1,128}+)"
    r":(?P<value>[^\s\"'@$\[\]]{1,256}+)"
)

_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# Names ending in one of these are secret-like (`*_TOKEN`); `key` needs a qualifier (`*_KEY`),
# since a bare `key:` is everywhere in configuration (cache keys, translation keys...).
_SECRET_LAST_WORDS = frozenset({"token", "secret", "apikey", "passphrase", "pass", "pw"})
_SECRET_ANY_WORDS = frozenset({"password", "passwd", "secret", "secrets", "passphrase"})

# Password-like names (`*PASSWORD*`, `*_PWD`, `*_TOKEN`, `*_API_KEY`...) also accept a shorter
# value when it is shaped like a credential, since people choose passwords far shorter than a
# generated key. A bare `PWD` is the shell's working directory, so `pwd` needs a qualifier.
_PASSWORD_ANY_WORDS = frozenset({"password", "passwd", "passphrase", "secret", "secrets"})
_PASSWORD_LAST_WORDS = frozenset({"token", "apikey", "pass", "pw"})
# `SECRET_NAME=db-creds-v2`, `password_file: ./pw.txt`: these names point at a secret.
_POINTER_LAST_WORDS = frozenset(
    {"name", "id", "arn", "ref", "file", "path", "dir", "url", "env", "var", "version", "type"}
)
# A value that names a secret or a placeholder (`newPassword1`, `Changeme123`) is a reference or
# a stand-in, not a chosen credential.
_NOT_A_CREDENTIAL_WORDS = frozenset(
    {"password", "passwd", "pwd", "secret", "token", "key", "change", "changeme", "example"}
    | {"placeholder", "dummy", "your", "none", "null", "redacted"}
)
# Letters and digits alone count when this varied (about ten distinct characters in a short run).
_MIN_SHORT_ALNUM_ENTROPY = 3.2
_MIN_SECRET_LENGTH = 16
_MIN_ENTROPY = 3.5
# Hex has at most 4 bits per character, so a random hex secret scores lower than base64.
_MIN_HEX_ENTROPY = 3.0
_HEX = re.compile(r"[0-9a-fA-F\-]+")
# Words joined by separators (`user_account_id`, `BUILD-CACHE-KEY`) name things; they are not
# random. Unquoted, an attribute path (`settings.API_KEY`, `self._token`) is code reading a
# secret (a dotted token such as a JWT has a rule of its own). A lone unquoted identifier is not
# excused: random letters look like one too often, and missing a secret costs more than
# redacting a name.
_JOINED_WORDS = re.compile(
    r"_*(?:[a-z]+|[0-9]+)(?:[_.\-](?:[a-z]+|[0-9]+))+_*"
    r"|_*(?:[A-Z]+|[0-9]+)(?:[_.\-](?:[A-Z]+|[0-9]+))+_*"
)
_ATTRIBUTE_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+=]{40}")


def find_secrets(text: str, *, location: str | None = None) -> list[SecretFinding]:
    """Every credential in `text`, in text order, as (rule, line, column): never the value."""
    spans = _find_spans(text)
    findings: list[SecretFinding] = []
    for span in spans:
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
    spans = _find_spans(text)
    if not spans:
        return text
    parts: list[str] = []
    cursor = 0
    for span in spans:
        if span.end <= cursor:
            continue
        parts.append(text[cursor : max(cursor, span.start)])
        parts.append(f"[REDACTED:{span.rule}]")
        cursor = span.end
    parts.append(text[cursor:])
    return "".join(parts)


def _find_spans(text: str) -> list[_Span]:
    """Non-overlapping spans sorted by start; where rules overlap the earliest, longest wins."""
    found = _token_spans(text)
    if "PRIVATE KEY" in text:
        found.extend(_private_key_spans(text))
    found.extend(_url_password_spans(text))
    if "-u" in text or "--user" in text:
        found.extend(_basic_auth_spans(text))
    found.extend(_secret_line_spans(text))
    if not found:
        return found
    # Stable sort: on an identical span the token rule, found first, names the finding.
    found.sort(key=lambda span: (span.start, -span.end))
    kept: list[_Span] = []
    for span in found:
        if kept and span.start < kept[-1].end:
            continue
        kept.append(span)
    return kept


def _token_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    for hit in _TOKEN_PREFIX.finditer(text):
        index = hit.start()
        if index > 0 and text[index - 1] in _TOKEN_CHARS:
            continue
        for rule in _RULES_BY_PREFIX_START[text[index : index + 2]]:
            match = rule.pattern.match(text, index)
            if match is not None and (
                not rule.needs_digit or any(char.isdigit() for char in match.group())
            ):
                spans.append(_Span(rule.name, index, match.end()))
                break
    return spans


def _url_password_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    index = text.find("://")
    while index != -1:
        match = _URL_USERINFO.match(text, index + 3)
        if match is not None:
            spans.append(_Span("url-password", match.start(1), match.end(1)))
        index = text.find("://", index + 3)
    return spans


def _private_key_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    for begin in _PRIVATE_KEY_BEGIN.finditer(text):
        if spans and begin.start() < spans[-1].end:
            continue
        end = _PRIVATE_KEY_END.search(text, begin.end())
        # Without an END line the rest of the text may be key material: hide all of it.
        spans.append(_Span("private-key", begin.start(), end.end() if end else len(text)))
    return spans


def _secret_line_spans(text: str) -> list[_Span]:
    lowered = text.lower()
    words = (
        _SECRET_WORD.finditer(lowered)
        if len(lowered) == len(text)
        else _SECRET_WORD_ANY_CASE.finditer(text)
    )
    spans: list[_Span] = []
    line_end = -1
    for word in words:
        if word.start() < line_end:
            continue
        line_start = text.rfind("\n", 0, word.start()) + 1
        line_end = text.find("\n", word.end())
        if line_end == -1:
            line_end = len(text)
        for match in _BEARER.finditer(text, line_start, line_end):
            if _is_random_looking(match.group(1)):
                spans.append(_Span("bearer-token", match.start(1), match.end(1)))
        for pattern in (_ASSIGNMENT, _SECRET_FLAG):
            spans.extend(_named_value_spans(pattern, text, line_start, line_end))
    return spans


def _named_value_spans(
    pattern: re.Pattern[str], text: str, start: int, end: int
) -> Iterator[_Span]:
    position = start
    while (match := pattern.search(text, position, end)) is not None:
        rule = _assignment_rule(match.group("name"), match.group("value"), match.group("quote"))
        if rule is not None:
            yield _Span(rule, match.start("value"), match.end("value"))
            position = match.end()
        else:
            # The value may itself hold an assignment: `"build": "DB_PASSWORD=... vite build"`.
            position = match.start("value")


def _basic_auth_spans(text: str) -> list[_Span]:
    return [
        _Span("basic-auth-password", match.start("value"), match.end("value"))
        for match in _BASIC_AUTH_FLAG.finditer(text)
        if not (match.group("value").isdigit() and match.group("user").isdigit())
    ]


def _assignment_rule(name: str, value: str, quote: str) -> str | None:
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    if not words:
        return None
    if "".join(words).endswith("awssecretaccesskey") and _AWS_SECRET_VALUE.fullmatch(value):
        return "aws-secret-access-key"
    is_secret_name = (
        words[-1] in _SECRET_LAST_WORDS
        or (words[-1] == "key" and len(words) > 1)
        or any(word in _SECRET_ANY_WORDS for word in words)
        or _is_password_name(words)
    )
    if not is_secret_name or value.startswith(("$", "%", "@")):
        return None
    if _JOINED_WORDS.fullmatch(value) or (not quote and _ATTRIBUTE_PATH.fullmatch(value)):
        return None
    if len(value) < _MIN_SECRET_LENGTH:
        is_credential = _is_password_name(words) and _is_short_credential(value)
    else:
        is_credential = _is_random_looking(value)
    return "secret-assignment" if is_credential else None


def _is_password_name(words: list[str]) -> bool:
    if words[-1] in _POINTER_LAST_WORDS:
        return False
    return (
        any(word in _PASSWORD_ANY_WORDS for word in words)
        or words[-1] in _PASSWORD_LAST_WORDS
        or (words[-1] == "pwd" and len(words) > 1)
        or words[-2:] == ["api", "key"]
    )


def _is_short_credential(value: str) -> bool:
    """Mixed character classes (`Tr0ub4dor&3`), or varied enough letters and digits; a value
    of letters only (`changeme`, a type name such as `SecretStr`) never counts, nor a path."""
    if "/" in value:
        return False
    words = {word.lower() for word in _NAME_WORDS.findall(value)}
    if words & _NOT_A_CREDENTIAL_WORDS:
        return False
    has_lower = any(char.islower() for char in value)
    has_upper = any(char.isupper() for char in value)
    has_digit = any(char.isdigit() for char in value)
    has_symbol = not value.isalnum()
    if has_lower + has_upper + has_digit + has_symbol >= 3:
        return True
    return (
        (has_lower or has_upper)
        and has_digit
        and shannon_entropy(value) >= _MIN_SHORT_ALNUM_ENTROPY
    )


def _is_random_looking(value: str) -> bool:
    if len(value) < _MIN_SECRET_LENGTH:
        return False
    threshold = _MIN_HEX_ENTROPY if _HEX.fullmatch(value) else _MIN_ENTROPY
    return shannon_entropy(value) >= threshold


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution (0.0 for "")."""
    length = len(value)
    if not length:
        return 0.0
    return -sum((count / length) * math.log2(count / length) for count in Counter(value).values())
