"""Credentials recognisable by their shape alone, with no name in front of them.

The shapes are facts taken from gitleaks' published default rule set (config/gitleaks.toml),
plus a few formats model providers and Google document (Groq, Replicate, xAI, Google OAuth): each
token's literal prefix, alphabet and length. The patterns are written here, not copied, so that
every one is anchored at its prefix, bounded and cheap: one regex pass finds every prefix and
each hit is then matched against the rules that share its first two characters. Gitleaks rules
that need a provider's name nearby (`twitter`, `datadog`...) are not here: a value without its
name is only found when it is assigned to a secret-like name (`_named`). Where a shape alone
would also match ordinary identifiers (32 hex digits after `SK` or `dapi`, a 64-character base64
line) an entropy floor decides. A few shapes have their literal in the middle or at the end (a
Telegram bot token's `:AA`, Terraform's `.atlasv1.`, MaxMind's `_mmk`, Mailchimp's `-us1`):
they are found from that literal outwards.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from promptkit.secrets._common import (
    MIN_HEX_ENTROPY,
    TOKEN_CHARS,
    Span,
    mixes_letters_and_digits,
    shannon_entropy,
)

__all__ = [
    "azure_secret_spans",
    "infix_token_spans",
    "pem_body_spans",
    "private_key_spans",
    "token_spans",
]


@dataclass(frozen=True, slots=True)
class _TokenRule:
    name: str
    prefixes: tuple[str, ...]
    """The literals a match begins with (two characters at least): the prefix scan finds them."""
    pattern: re.Pattern[str]
    needs_digit: bool = False
    min_entropy: float = 0.0


def _rule(
    name: str, prefixes: str, pattern: str, *, needs_digit: bool = False, min_entropy: float = 0.0
) -> _TokenRule:
    return _TokenRule(name, tuple(prefixes.split()), re.compile(pattern), needs_digit, min_entropy)


_END = r"(?![A-Za-z0-9_\-])"
_B64 = r"[A-Za-z0-9+/]"

# Order matters where rules share their first two characters: a hit is matched against them in
# this order and the first match names it, so a specific shape comes before a general one that
# would also match it (`sk-ant-` and `sk-proj-` before plain `sk-`; `EAA[MC]` before `EAAA`).
_RULES = (
    # -- model providers ----------------------------------------------------------------------
    _rule("anthropic-api-key", "sk-ant-", r"sk-ant-[A-Za-z0-9_\-]{20,400}+"),
    _rule("openai-project-key", "sk-proj-", r"sk-proj-[A-Za-z0-9_\-]{20,400}+"),
    # A digit is required so that prose such as `sk-learn-style-long-hyphenated-words` stays out.
    _rule("openai-api-key", "sk-", r"sk-(?!ant-|proj-)[A-Za-z0-9_\-]{20,400}+", needs_digit=True),
    _rule("huggingface-token", "hf_ api_org_", r"(?:hf_|api_org_)[A-Za-z]{34}" + _END),
    _rule("perplexity-api-key", "pplx-", r"pplx-[A-Za-z0-9]{48}" + _END),
    _rule("groq-api-key", "gsk_", r"gsk_[A-Za-z0-9]{48,56}" + _END, needs_digit=True),
    _rule("replicate-api-token", "r8_", r"r8_[A-Za-z0-9]{37}" + _END, needs_digit=True),
    _rule("xai-api-key", "xai-", r"xai-[A-Za-z0-9]{60,100}" + _END, needs_digit=True),
    # -- clouds -----------------------------------------------------------------------------------
    # Key ids have a fixed length: a longer run of capitals is some other identifier.
    _rule(
        "aws-access-key-id",
        "A3T AKIA ASIA ABIA ACCA",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _rule("aws-bedrock-api-key", "ABSK", r"ABSK" + _B64 + r"{109,269}={0,2}" + _END),
    _rule(
        "aws-bedrock-api-key",
        "bedrock-api-key-",
        r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%_\-]{20,4000}+",
    ),
    _rule("google-api-key", "AIza", r"AIza[A-Za-z0-9_\-]{35}" + _END),
    _rule("google-oauth-client-secret", "GOCSPX-", r"GOCSPX-[A-Za-z0-9_\-]{28}" + _END),
    _rule("google-oauth-access-token", "ya29.", r"ya29\.[A-Za-z0-9_\-]{30,2048}+"),
    _rule("alibaba-access-key-id", "LTAI", r"LTAI[A-Za-z0-9]{20}" + _END, needs_digit=True),
    _rule("cloudflare-origin-ca-key", "v1.0-", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + _END),
    _rule("digitalocean-token", "doo_v1_ dop_v1_ dor_v1_", r"do[opr]_v1_[a-f0-9]{64}" + _END),
    _rule(
        "flyio-token",
        "fo1_ fm1a_ fm1r_ fm2_",
        r"(?:fo1_[A-Za-z0-9_\-]{43}|fm1[ar]_"
        + _B64
        + r"{100,4000}+={0,3}|fm2_"
        + _B64
        + r"{100,4000}+={0,3})",
    ),
    _rule("heroku-api-key", "HRKU-", r"HRKU-[A-Za-z0-9_\-]{60}" + _END),
    _rule("openshift-token", "sha256~", r"sha256~[A-Za-z0-9_\-]{43}" + _END),
    _rule(
        "planetscale-token",
        "pscale_tkn_ pscale_oauth_ pscale_pw_",
        r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}" + _END,
    ),
    _rule("scalingo-token", "tk-us-", r"tk-us-[A-Za-z0-9_\-]{48}" + _END),
    _rule("vault-token", "hvs. hvb.", r"hv[sb]\.[A-Za-z0-9_\-]{24,300}+", min_entropy=3.5),
    _rule("doppler-token", "dp.pt.", r"dp\.pt\.[A-Za-z0-9]{43}" + _END),
    _rule("pulumi-token", "pul-", r"pul-[a-f0-9]{40}" + _END, min_entropy=MIN_HEX_ENTROPY),
    _rule("prefect-api-key", "pnu_", r"pnu_[A-Za-z0-9]{36}" + _END),
    _rule(
        "databricks-token",
        "dapi",
        r"dapi[a-f0-9]{32}(?:-[0-9])?" + _END,
        min_entropy=MIN_HEX_ENTROPY,
    ),
    # -- code hosting, packages, CI -----------------------------------------------------------
    _rule("github-token", "ghp_ gho_ ghu_ ghs_ ghr_", r"gh[pousr]_[A-Za-z0-9]{36,251}+"),
    _rule("github-fine-grained-token", "github_pat_", r"github_pat_[A-Za-z0-9_]{22,244}+"),
    _rule(
        "gitlab-token",
        "glpat- gldt- glptt- glrt- glcbt- glffct- glft- glimt- glagent- gloas- glsoat-",
        r"gl(?:pat|dt|ptt|rt|cbt|ffct|ft|imt|agent|oas|soat)-[A-Za-z0-9_\-]{20,300}+",
    ),
    _rule("gitlab-runner-registration-token", "GR1348941", r"GR1348941[A-Za-z0-9_\-]{20}" + _END),
    _rule("npm-token", "npm_", r"npm_[A-Za-z0-9]{36}" + _END),
    _rule("pypi-token", "pypi-AgEIcHlwaS5vcmc", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,1000}+"),
    _rule("rubygems-api-key", "rubygems_", r"rubygems_[a-f0-9]{48}" + _END),
    _rule("clojars-token", "CLOJARS_", r"CLOJARS_[A-Za-z0-9]{60}" + _END),
    _rule("artifactory-api-key", "AKCp", r"AKCp[A-Za-z0-9]{69}" + _END, min_entropy=4.0),
    _rule("artifactory-reference-token", "cmVmd", r"cmVmd[A-Za-z0-9]{59}" + _END, min_entropy=4.0),
    _rule(
        "sourcegraph-token",
        "sgp_",
        r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + _END,
    ),
    _rule("sonarqube-token", "squ_ sqp_ sqa_", r"sq[upa]_[a-f0-9]{40}" + _END),
    _rule("readme-api-key", "rdme_", r"rdme_[a-z0-9]{70}" + _END),
    _rule("infracost-api-key", "ico-", r"ico-[A-Za-z0-9]{32}" + _END, needs_digit=True),
    _rule(
        "harness-token",
        "pat. sat.",
        r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" + _END,
    ),
    _rule("octopus-deploy-api-key", "API-", r"API-[A-Z0-9]{26}" + _END, needs_digit=True),
    # -- chat, mail, payments, SaaS ---------------------------------------------------------------
    _rule("slack-token", "xoxe.xoxb- xoxe.xoxp-", r"xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{140,200}"),
    _rule(
        "slack-token",
        "xoxa- xoxb- xoxe- xoxp- xoxr- xoxs- xoxo-",
        r"xox[abeoprs]-[A-Za-z0-9\-]{10,250}+",
        needs_digit=True,
    ),
    _rule("slack-token", "xapp-", r"xapp-[0-9]-[A-Z0-9]{6,20}-[0-9]{6,20}-[a-f0-9]{32,80}+"),
    # A signed JSON Web Token: base64url of `{"...` (hence `eyJ`) for header and payload.
    _rule(
        "json-web-token",
        "eyJ",
        r"eyJ[A-Za-z0-9_\-]{8,2048}+\.eyJ[A-Za-z0-9_\-]{8,8192}+\.[A-Za-z0-9_\-]{8,2048}+",
    ),
    # Grafana's API keys are base64 of `{"k":"...`.
    _rule("grafana-api-key", "eyJrIjoi", r"eyJrIjoi[A-Za-z0-9]{70,400}+={0,3}"),
    # A whole JSON Web Token, base64-encoded once more (`eyJ` becomes `ZXlK`).
    _rule("json-web-token", "ZXlK", r"ZXlK" + _B64 + r"{60,8000}+={0,2}", min_entropy=4.0),
    _rule("1password-service-account-token", "ops_eyJ", r"ops_eyJ" + _B64 + r"{250,4000}+={0,3}"),
    _rule(
        "1password-secret-key",
        "A3-",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}" + _END,
    ),
    _rule(
        "grafana-token",
        "glc_ glsa_",
        r"(?:glc_" + _B64 + r"{32,400}+={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
    ),
    _rule("atlassian-api-token", "ATATT3", r"ATATT3[A-Za-z0-9_\-=]{186}"),
    _rule("linear-api-key", "lin_api_", r"lin_api_[A-Za-z0-9]{40}" + _END),
    _rule("notion-api-token", "ntn_", r"ntn_[0-9]{11}[A-Za-z0-9]{35}" + _END),
    _rule("postman-api-key", "PMAK-", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _END),
    _rule(
        "age-secret-key",
        "AGE-SECRET-KEY-1",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    _rule("sendgrid-api-key", "SG.", r"SG\.[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{39,50}" + _END),
    _rule("sendinblue-api-key", "xkeysib-", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _END),
    _rule(
        "mailgun-api-key",
        "key- pubkey-",
        r"(?:pub)?key-[a-f0-9]{32}" + _END,
        min_entropy=MIN_HEX_ENTROPY,
    ),
    _rule(
        "new-relic-key",
        "NRAK- NRJS- NRII-",
        r"NR(?:AK-[A-Za-z0-9]{27}|JS-[a-f0-9]{19}|II-[A-Za-z0-9\-]{32})" + _END,
    ),
    _rule(
        "sentry-token",
        "sntryu_ sntrys_",
        r"sntry(?:u_[a-f0-9]{64}|s_eyJ[A-Za-z0-9+/=_]{60,600}+)" + _END,
    ),
    _rule("typeform-token", "tfp_", r"tfp_[A-Za-z0-9_.=\-]{59}" + _END),
    _rule("dynatrace-token", "dt0c01.", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}" + _END),
    _rule("twilio-api-key", "SK", r"SK[0-9a-fA-F]{32}" + _END, min_entropy=MIN_HEX_ENTROPY),
    _rule("stripe-secret-key", "sk_ rk_", r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}+" + _END),
    _rule("stripe-webhook-secret", "whsec_", r"whsec_" + _B64 + r"{32,100}+={0,2}" + _END),
    _rule(
        "shopify-token", "shpat_ shpca_ shppa_ shpss_", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _END
    ),
    _rule("shippo-api-token", "shippo_", r"shippo_(?:live|test)_[a-fA-F0-9]{40}" + _END),
    _rule(
        "square-token",
        "sq0atp- sq0csp-",
        r"sq0(?:atp-[A-Za-z0-9_\-]{22}|csp-[A-Za-z0-9_\-]{43})" + _END,
    ),
    _rule("facebook-access-token", "EAAM EAAC", r"EAA[MC][A-Za-z0-9]{100,400}+" + _END),
    _rule("square-token", "EAAA", r"EAAA[A-Za-z0-9_\-]{22,60}" + _END, min_entropy=3.5),
    _rule("duffel-api-token", "duffel_", r"duffel_(?:test|live)_[A-Za-z0-9_=\-]{43}" + _END),
    _rule("easypost-api-key", "EZAK EZTK", r"EZ[AT]K[A-Za-z0-9]{54}" + _END),
    _rule(
        "flutterwave-key",
        "FLWSECK_TEST- FLWPUBK_TEST-",
        r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?" + _END,
    ),
    _rule(
        "plaid-access-token",
        "access-sandbox- access-development- access-production-",
        r"access-(?:sandbox|development|production)-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}"
        + _END,
    ),
    _rule("adobe-client-secret", "p8e-", r"p8e-[A-Za-z0-9]{32}" + _END, needs_digit=True),
    _rule("airtable-token", "pat", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _END),
    _rule("frameio-api-token", "fio-u-", r"fio-u-[A-Za-z0-9_=\-]{64}" + _END),
    _rule("intra42-client-secret", "s-s4t2ud- s-s4t2af-", r"s-s4t2(?:ud|af)-[a-f0-9]{64}" + _END),
    _rule(
        "settlemint-token",
        "sm_aat_ sm_pat_ sm_sat_",
        r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}" + _END,
        needs_digit=True,
    ),
    _rule(
        "defined-networking-token",
        "dnkey-",
        r"dnkey-[A-Za-z0-9=_\-]{26}-[A-Za-z0-9=_\-]{52}" + _END,
    ),
    _rule(
        "mapbox-secret-token", "sk.eyJ", r"sk\.eyJ[A-Za-z0-9_\-]{20,400}+\.[A-Za-z0-9_\-]{20,100}+"
    ),
    _rule("yandex-api-key", "AQVN", r"AQVN[A-Za-z0-9_\-]{35,38}" + _END),
    _rule("dropbox-token", "sl.", r"sl\.[A-Za-z0-9_=.\-]{130,1400}+", min_entropy=4.0),
    _rule("twitter-bearer-token", "AAAAAAAAAAAAAAAAAAAAAA", r"A{22}[A-Za-z0-9%]{80,100}" + _END),
)


def _prefix_trie(rules: tuple[_TokenRule, ...]) -> str:
    """A regex of every rule's prefix, written as a choice by first character (the engine then
    rejects a position on one character compare; a flat list of a hundred literals is slower)."""
    by_first: defaultdict[str, set[str]] = defaultdict(set)
    for rule in rules:
        for prefix in rule.prefixes:
            by_first[prefix[0]].add(re.escape(prefix[1:]))
    branches = []
    for first in sorted(by_first):
        # Longest first, so a literal is never cut short by one that begins it.
        rest = "|".join(sorted(by_first[first], key=lambda tail: (-len(tail), tail)))
        branches.append(f"{re.escape(first)}(?:{rest})")
    return "|".join(branches)


# A token starts a word: at the start of the text, after a character no token is made of, or
# after an escaped line break or tab (`\n` in a repr or a JSON string), which ends a word
# although its last character is a letter. Matching the character before the prefix keeps the
# engine's fast scan: it tries a prefix only where a word starts, not at every letter.
_TRIE = _prefix_trie(_RULES)
_PREFIX_AT_START = re.compile("(?:" + _TRIE + ")")
_PREFIX_AFTER_SEPARATOR = re.compile(r"[^A-Za-z0-9_\-](?:" + _TRIE + ")")
_PREFIX_AFTER_ESCAPE = re.compile(r"\\[ntr](?:" + _TRIE + ")")

_RULES_BY_START: dict[str, tuple[_TokenRule, ...]] = {}
for _token_rule in _RULES:
    for _start in sorted({prefix[:2] for prefix in _token_rule.prefixes}):
        _RULES_BY_START[_start] = (*_RULES_BY_START.get(_start, ()), _token_rule)


def token_spans(text: str) -> list[Span]:
    """Every shaped provider token in `text`."""
    spans: list[Span] = []
    for index in _token_starts(text):
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


def _token_starts(text: str) -> Iterator[int]:
    """Where a rule's prefix starts a word of `text`."""
    if _PREFIX_AT_START.match(text):
        yield 0
    for hit in _PREFIX_AFTER_SEPARATOR.finditer(text):
        yield hit.start() + 1
    if "\\" in text:
        for hit in _PREFIX_AFTER_ESCAPE.finditer(text):
            yield hit.start() + 2


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


@dataclass(frozen=True, slots=True)
class _InfixRule:
    name: str
    literal: str
    """Found by `str.find`; the token starts `before` characters ahead of it."""
    before: range
    pattern: re.Pattern[str]
    min_entropy: float = 0.0


_INFIX_RULES = (
    # A Telegram bot token: the bot's number, a colon, then 35 characters starting with `AA`.
    _InfixRule(
        "telegram-bot-token",
        ":AA",
        range(8, 11),
        re.compile(r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}" + _END),
    ),
    _InfixRule(
        "terraform-api-token",
        ".atlasv1.",
        range(14, 15),
        re.compile(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}" + _END),
    ),
    _InfixRule(
        "maxmind-license-key",
        "_mmk",
        range(36, 37),
        re.compile(r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + _END),
    ),
    _InfixRule(
        "mailchimp-api-key",
        "-us",
        range(32, 33),
        re.compile(r"[a-f0-9]{32}-us[0-9]{1,2}" + _END),
        min_entropy=MIN_HEX_ENTROPY,
    ),
)


def infix_token_spans(text: str) -> list[Span]:
    """Shaped tokens whose literal is inside them, found from that literal outwards."""
    spans: list[Span] = []
    for rule in _INFIX_RULES:
        index = text.find(rule.literal)
        while index != -1:
            for before in rule.before:
                start = index - before
                if start < 0 or (start > 0 and text[start - 1] in TOKEN_CHARS):
                    continue
                match = rule.pattern.match(text, start)
                if match is not None and shannon_entropy(match.group()) >= rule.min_entropy:
                    spans.append(Span(rule.name, start, match.end()))
                    break
            index = text.find(rule.literal, index + len(rule.literal))
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
