"""Credentials recognisable by their shape alone, with no name in front of them.

The shapes are facts taken from gitleaks' published default rule set (config/gitleaks.toml):
each provider's token prefix, alphabet and length. The patterns are written here, not copied, so
that every one is anchored, bounded and cheap: one regex pass finds every prefix and each hit is
then matched against the rules that can start with it. Where a shape alone would also match
ordinary identifiers (32 hex digits after `SK` or `dapi`, a 64-character base64 line) an entropy
floor decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from promptkit.secrets._common import (
    MIN_HEX_ENTROPY,
    TOKEN_CHARS,
    Span,
    mixes_letters_and_digits,
    shannon_entropy,
)

__all__ = ["azure_secret_spans", "pem_body_spans", "private_key_spans", "token_spans"]


@dataclass(frozen=True, slots=True)
class _TokenRule:
    name: str
    starts: tuple[str, ...]
    """The first two characters a match can begin with: the prefix scan dispatches on them."""
    pattern: re.Pattern[str]
    needs_digit: bool = False
    min_entropy: float = 0.0


def _rule(
    name: str, starts: str, pattern: str, *, needs_digit: bool = False, min_entropy: float = 0.0
) -> _TokenRule:
    return _TokenRule(name, tuple(starts.split()), re.compile(pattern), needs_digit, min_entropy)


_END = r"(?![A-Za-z0-9_\-])"

# Order matters where rules share a start: `sk-ant-` and `sk-proj-` come before plain `sk-`
# (whose pattern also refuses them), so an Anthropic key is never reported as an OpenAI one.
_RULES = (
    _rule("anthropic-api-key", "sk", r"sk-ant-[A-Za-z0-9_\-]{20,400}+"),
    _rule("openai-project-key", "sk", r"sk-proj-[A-Za-z0-9_\-]{20,400}+"),
    # A digit is required so that prose such as `sk-learn-style-long-hyphenated-words` stays out.
    _rule("openai-api-key", "sk", r"sk-(?!ant-|proj-)[A-Za-z0-9_\-]{20,400}+", needs_digit=True),
    _rule("stripe-secret-key", "sk rk", r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}+" + _END),
    # Key ids have a fixed length: a longer run of capitals is some other identifier.
    _rule(
        "aws-access-key-id",
        "A3 AK AS AB AC",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _rule("github-token", "gh", r"gh[pousr]_[A-Za-z0-9]{36,251}+"),
    _rule("github-fine-grained-token", "gi", r"github_pat_[A-Za-z0-9_]{22,244}+"),
    _rule("gitlab-token", "gl", r"gl(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,300}+"),
    _rule("slack-token", "xo", r"xox[abeprs]-[A-Za-z0-9\-]{10,250}+", needs_digit=True),
    _rule("slack-token", "xa", r"xapp-[0-9]-[A-Z0-9]{6,20}-[0-9]{6,20}-[a-f0-9]{32,80}+"),
    # A signed JSON Web Token: base64url of `{"...` (hence `eyJ`) for header and payload.
    _rule(
        "json-web-token",
        "ey",
        r"eyJ[A-Za-z0-9_\-]{8,2048}+\.eyJ[A-Za-z0-9_\-]{8,8192}+\.[A-Za-z0-9_\-]{8,2048}+",
    ),
    _rule("google-api-key", "AI", r"AIza[A-Za-z0-9_\-]{35}" + _END),
    _rule("sendgrid-api-key", "SG", r"SG\.[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{39,50}" + _END),
    _rule("huggingface-token", "hf ap", r"(?:hf_|api_org_)[A-Za-z]{34}" + _END),
    _rule("npm-token", "np", r"npm_[A-Za-z0-9]{36}" + _END),
    _rule("pypi-token", "py", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,1000}+"),
    _rule("shopify-token", "sh", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _END),
    _rule("digitalocean-token", "do", r"do[opr]_v1_[a-f0-9]{64}" + _END),
    _rule("square-token", "sq", r"sq0(?:atp-[A-Za-z0-9_\-]{22}|csp-[A-Za-z0-9_\-]{43})" + _END),
    _rule("linear-api-key", "li", r"lin_api_[A-Za-z0-9]{40}" + _END),
    _rule("postman-api-key", "PM", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _END),
    _rule("age-secret-key", "AG", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _rule("vault-token", "hv", r"hv[sb]\.[A-Za-z0-9_\-]{24,250}+", min_entropy=3.5),
    _rule(
        "grafana-token",
        "gl",
        r"(?:glc_[A-Za-z0-9+/]{32,400}+={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
    ),
    _rule("heroku-api-key", "HR", r"HRKU-[A-Za-z0-9_\-]{60}" + _END),
    _rule("atlassian-api-token", "AT", r"ATATT3[A-Za-z0-9_\-=]{186}"),
    # Bare hex after a short prefix: only a varied run counts (`SKU...`, `dapi` in prose do not).
    _rule("twilio-api-key", "SK", r"SK[0-9a-fA-F]{32}" + _END, min_entropy=MIN_HEX_ENTROPY),
    _rule(
        "databricks-token",
        "da",
        r"dapi[a-f0-9]{32}(?:-[0-9])?" + _END,
        min_entropy=MIN_HEX_ENTROPY,
    ),
)

# Every shaped token starts with one of these literals. The alternation is written as a trie by
# first character, since the regex engine then rejects most positions on one character compare
# (a flat list of 40 literals scans six times slower). Each hit is then matched against the
# rules that share its first two characters.
_TOKEN_PREFIX = re.compile(
    r"s(?:k[-_]|hp|q0)|rk_|A(?:3T|KIA|SIA|BIA|CCA|Iza|GE-SECRET|TATT3)|x(?:ox|app-)|eyJ|S[GK]"
    r"|g(?:h[pousr]_|ithub_pat_|l(?:pat|dt|ptt|rt)-|l[cs]_)|h(?:f_|v[sb]\.)|api_org_|npm_"
    r"|pypi-|d(?:o[opr]_v1_|api)|lin_api_|PMAK-|HRKU-"
)

_RULES_BY_START: dict[str, tuple[_TokenRule, ...]] = {}
for _token_rule in _RULES:
    for _start in _token_rule.starts:
        _RULES_BY_START[_start] = (*_RULES_BY_START.get(_start, ()), _token_rule)


def token_spans(text: str) -> list[Span]:
    """Every shaped provider token in `text`."""
    spans: list[Span] = []
    for hit in _TOKEN_PREFIX.finditer(text):
        index = hit.start()
        if index > 0 and text[index - 1] in TOKEN_CHARS and not _after_escape(text, index):
            continue
        for rule in _RULES_BY_START[text[index : index + 2]]:
            match = rule.pattern.match(text, index)
            if match is None:
                continue
            value = match.group()
            if rule.needs_digit and not any(char.isdigit() for char in value):
                continue
            if rule.min_entropy and shannon_entropy(value) < rule.min_entropy:
                continue
            spans.append(Span(rule.name, index, match.end()))
            break
    return spans


def _after_escape(text: str, index: int) -> bool:
    """Whether `index` follows an escaped line break or tab (`\\n`, as in a repr or a JSON
    string), which ends a word although its last character is a letter."""
    return index > 1 and text[index - 2] == "\\" and text[index - 1] in "ntr"


# An Azure AD client secret: three characters, a digit, `Q~`, then 31 to 34 more.
_AZURE_CLIENT_SECRET = re.compile(r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![\w~.\-])")
_AZURE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~.")


def azure_secret_spans(text: str) -> list[Span]:
    """Azure AD client secrets, found from their `Q~` (rare in other text) backwards."""
    spans: list[Span] = []
    index = text.find("Q~")
    while index != -1:
        start = index - 4
        if start >= 0 and (start == 0 or text[start - 1] not in _AZURE_CHARS):
            match = _AZURE_CLIENT_SECRET.match(text, start)
            if match is not None and (not spans or start >= spans[-1].end):
                spans.append(Span("azure-client-secret", start, match.end()))
        index = text.find("Q~", index + 2)
    return spans


_PRIVATE_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_END = re.compile(r"-----END [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")


def private_key_spans(text: str) -> list[Span]:
    """Whole PEM/OpenSSH/PGP private key blocks (to the end of the text without an END line)."""
    spans: list[Span] = []
    for begin in _PRIVATE_KEY_BEGIN.finditer(text):
        if spans and begin.start() < spans[-1].end:
            continue
        end = _PRIVATE_KEY_END.search(text, begin.end())
        # Without an END line the rest of the text may be key material: hide all of it.
        spans.append(Span("private-key", begin.start(), end.end() if end else len(text)))
    return spans


# A line of a PEM body seen without its BEGIN line (a grep hit, a page of a file): exactly the
# 64 base64 characters PEM wraps at (70 for OpenSSH), ending its line, at its start or after a
# space, quote or colon. Two patterns, since a leading alternation would defeat the engine's
# fast scan for a line start or a literal.
# The line may end in a JSON string's closing quote and comma, after an escaped newline (a
# notebook cell's source line: `"MIIE...\\n",`), or go on after an escaped newline (a repr).
_PEM_LINE_END = r"(?=(?:\\n)?[\"',]{0,2}\r?$|\\[nr])"
_PEM_BODY_AT_LINE_START = re.compile(r"(?m)^[A-Za-z0-9+/]{64}(?:[A-Za-z0-9+/]{6})?" + _PEM_LINE_END)
_PEM_BODY_AFTER_PREFIX = re.compile(
    r"(?m)(?:(?<=[ \t\"'=:])|(?<=\\[ntr]))[A-Za-z0-9+/]{64}(?:[A-Za-z0-9+/]{6})?" + _PEM_LINE_END
)
# Random base64 scores about 5.5 bits per character over 64 characters; prose and identifiers
# that happen to run that long stay well under this.
_MIN_PEM_BODY_ENTROPY = 4.8


def pem_body_spans(text: str) -> list[Span]:
    """Lines of private key material shown without the block around them."""
    return [
        Span("private-key", match.start(), match.end())
        for pattern in (_PEM_BODY_AT_LINE_START, _PEM_BODY_AFTER_PREFIX)
        for match in pattern.finditer(text)
        if mixes_letters_and_digits(match.group())
        and shannon_entropy(match.group()) >= _MIN_PEM_BODY_ENTROPY
    ]
