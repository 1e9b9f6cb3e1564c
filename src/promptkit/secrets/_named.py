"""Credentials recognised by the name in front of them: `NAME=value`, `--flag value`, headers.

- `aws-secret-access-key`, `secret-assignment`: a high-entropy value given to a secret-like name
  (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, `*_API_KEY`, `auth`...) as `NAME=value`,
  `NAME: value`, `"name": "value"` or `--name value` (`--auth <token>` too). Password-like names
  (`*PASSWORD*`, `*_PWD`, `*SECRET*`, `*_TOKEN`, `*_API_KEY`) also take a chosen password of 8
  to 15 characters when it mixes character classes (`DB_PASSWORD=Tr0ub4dor&3`), but never
  letters alone (`changeme`, `str`), a path, or a value naming a secret or placeholder
  (`newPassword1`, `Example123`).
- `basic-auth-password` (`curl -u user:pw`), `bearer-token` (`Authorization: Bearer ...`).

What deliberately does not count: hashes, git SHAs and UUIDs by themselves (only when assigned to
a secret-like name, `WEBHOOK_SECRET=<hex>`, since that is how hex secrets are written down);
references and code: `${{ secrets.X }}`, `$TOKEN`, `os.environ[...]`, an unquoted attribute path
(`settings.API_KEY`), or words joined by separators (`user_account_id`) on the right-hand side.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from promptkit.secrets._common import MIN_SECRET_LENGTH, Span, is_random_looking, shannon_entropy

__all__ = ["basic_auth_spans", "secret_line_spans"]


_BEARER = re.compile(r"(?i)(?<![A-Za-z0-9])bearer[ \t]{1,4}+([A-Za-z0-9._~+/\-]{20,2048}+=*)")

# Only lines with one of these words can hold a bearer token or a `NAME = value` secret. The search
# runs on the lower-cased text, since a case-insensitive alternation is several times slower; the
# case-insensitive pattern is used only when lower-casing changed the text's length (and so its
# offsets), which a few Unicode letters do.
_SECRET_WORD = re.compile(r"key|token|secret|passw|pwd|bearer|auth|credential")
_SECRET_WORD_ANY_CASE = re.compile(r"(?i)key|token|secret|passw|pwd|bearer|auth|credential")

_ASSIGNMENT = re.compile(
    r"""
    (?<![A-Za-z0-9_.\-])
    (?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,99}+)
    # Quotes may be escaped: JSON inside a JSON string (`"{\"api_key\": \"...\"}"`).
    (?:\\?+["'])?+
    [ \t]{0,16}+
    (?::=|\?=|\+=|=|:)(?!=)
    [ \t]{0,16}+
    \\?+(?P<quote>["'`]?+)
    # 8 characters, not 16: short values count for password-like names (`_is_short_credential`).
    (?P<value>[^\s"'`,;()\[\]{}<>\\]{8,1024}+)
    (?=[\s"'`,;)\]}\\]|\Z)
    """,
    re.VERBOSE,
)

# `--password value`, `--api-token value`: a flag named like a secret, its value after a space.
_SECRET_FLAG = re.compile(
    r"(?<![A-Za-z0-9_\-])--(?P<name>[A-Za-z][A-Za-z0-9\-]{0,60}+)[ \t]++\\?+(?P<quote>[\"']?+)"
    r"(?P<value>[^\s\"'`;|&()<>\[\]{}\\]{8,1024}+)(?=[\s\"'`;|&)\\]|\Z)"
)

# `curl -u user:password`; uid:gid pairs (`docker run -u 1000:1000`) are not credentials.
# The flag starts with a literal `-` so the engine can scan for it; that white space comes before
# it is checked on each hit.
_BASIC_AUTH_FLAG = re.compile(
    r"-(?:u|-user)(?:[ \t]++|=)[\"']?+(?P<user>[^\s:\"'$]{1,128}+)"
    r":(?P<value>[^\s\"'@$\[\]]{1,256}+)"
)

_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# Names ending in one of these are secret-like (`*_TOKEN`); `key` needs a qualifier (`*_KEY`),
# since a bare `key:` is everywhere in configuration (cache keys, translation keys...).
_SECRET_LAST_WORDS = frozenset(
    {"token", "secret", "apikey", "passphrase", "pass", "pw", "auth", "credential", "credentials"}
)
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


def secret_line_spans(text: str) -> list[Span]:
    lowered = text.lower()
    words = (
        _SECRET_WORD.finditer(lowered)
        if len(lowered) == len(text)
        else _SECRET_WORD_ANY_CASE.finditer(text)
    )
    spans: list[Span] = []
    line_end = -1
    for word in words:
        if word.start() < line_end:
            continue
        line_start = text.rfind("\n", 0, word.start()) + 1
        line_end = text.find("\n", word.end())
        if line_end == -1:
            line_end = len(text)
        for match in _BEARER.finditer(text, line_start, line_end):
            if is_random_looking(match.group(1)):
                spans.append(Span("bearer-token", match.start(1), match.end(1)))
        for pattern in (_ASSIGNMENT, _SECRET_FLAG):
            spans.extend(_named_value_spans(pattern, text, line_start, line_end))
    return spans


def _named_value_spans(pattern: re.Pattern[str], text: str, start: int, end: int) -> Iterator[Span]:
    position = start
    while (match := pattern.search(text, position, end)) is not None:
        rule = _assignment_rule(match.group("name"), match.group("value"), match.group("quote"))
        if rule is not None:
            yield Span(rule, match.start("value"), match.end("value"))
            position = match.end()
        else:
            # The value may itself hold an assignment: `"build": "DB_PASSWORD=... vite build"`.
            position = match.start("value")


def basic_auth_spans(text: str) -> list[Span]:
    return [
        Span("basic-auth-password", match.start("value"), match.end("value"))
        for match in _BASIC_AUTH_FLAG.finditer(text)
        if (match.start() == 0 or text[match.start() - 1].isspace())
        and not (match.group("value").isdigit() and match.group("user").isdigit())
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
    if len(value) < MIN_SECRET_LENGTH:
        is_credential = _is_password_name(words) and _is_short_credential(value)
    else:
        is_credential = is_random_looking(value)
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
