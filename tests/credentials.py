"""A corpus of planted credentials: fake values in the real formats, each in a line as it is
written in ordinary files (a config, a script, a README example, a CI file).

The values are made at import time from a seeded generator, so no credential-shaped literal sits
in the repository, and every run plants the same ones. Tests import it with
`from ..credentials import PLANTED` (or `from .credentials import PLANTED` at the top level).
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

_RANDOM = random.Random(20261124)
_BASE62 = string.ascii_letters + string.digits
_LOWER_HEX = "0123456789abcdef"
_BASE64 = _BASE62 + "+/"
_URLSAFE = _BASE62 + "_-"


def _take(alphabet: str, count: int, rng: random.Random = _RANDOM) -> str:
    return "".join(rng.choices(alphabet, k=count))


def _mixed(count: int, rng: random.Random = _RANDOM) -> str:
    """Base62 with at least one upper-case letter, lower-case letter and digit."""
    while True:
        value = _take(_BASE62, count, rng)
        if all(any(test(c) for c in value) for test in (str.isupper, str.islower, str.isdigit)):
            return value


def _jwt() -> str:
    def part(document: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")

    return (
        f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': _mixed(12)})}.{_take(_URLSAFE, 43)}"
    )


@dataclass(frozen=True)
class Planted:
    """One planted credential: its shape, the secret `value`, and `line` as a file holds it."""

    shape: str
    value: str
    line: str


def _planted(shape: str, value: str, template: str) -> Planted:
    return Planted(shape, value, template.format(value))


_PEM_LINE = _mixed(64)

PLANTED: tuple[Planted, ...] = (
    _planted("openai", "sk-" + _mixed(48), "client = OpenAI(api_key='{}')"),
    _planted("openai-project", "sk-proj-" + _mixed(56), "OPENAI_API_KEY={}"),
    _planted("anthropic", "sk-ant-api03-" + _mixed(80), "# example: {}"),
    _planted("aws-access-key-id", "AKIA" + _take("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16), "{}"),
    _planted("aws-secret", _take(_BASE64, 40), "aws_secret_access_key = {}"),
    _planted("github-classic", "ghp_" + _mixed(36), "git clone https://x:{}@github.com/o/r"),
    _planted("github-oauth", "gho_" + _mixed(36), "token: {}"),
    _planted("github-fine-grained", "github_pat_11" + _mixed(20) + "_" + _mixed(59), "{}"),
    _planted("gitlab", "glpat-" + _mixed(20), "  - curl --header 'PRIVATE-TOKEN: {}'"),
    _planted("slack-bot", "xoxb-1234567890-1234567890123-" + _mixed(24), "SLACK={}"),
    _planted(
        "slack-webhook",
        "T0"
        + _take(string.ascii_uppercase + string.digits, 7)
        + "/B0"
        + _take(string.ascii_uppercase + string.digits, 8)
        + "/"
        + _mixed(24),
        "curl -X POST https://hooks.slack.com/services/{}",
    ),
    _planted("jwt", _jwt(), "Authorization: {}"),
    _planted("stripe-live", "sk_live_" + _mixed(24), "stripe.api_key = '{}'"),
    _planted("stripe-restricted", "rk_live_" + _mixed(24), "charge({})"),
    _planted("google-api", "AIza" + _take(_URLSAFE, 35), "<script src='maps.js?v=3&k={}'>"),
    _planted("sendgrid", "SG." + _take(_URLSAFE, 22) + "." + _take(_URLSAFE, 43), "sg = {}"),
    _planted("huggingface", "hf_" + _take(string.ascii_letters, 34), "huggingface-cli login {}"),
    _planted("npm", "npm_" + _mixed(36), "//registry.npmjs.org/:_authToken={}"),
    _planted("pypi", "pypi-AgEIcHlwaS5vcmc" + _take(_URLSAFE, 70), "password = {}"),
    _planted("azure-ad", _mixed(3) + "8Q~" + _take(_BASE62 + "_~.", 34), "client_secret: {}"),
    _planted(
        "azure-storage",
        _take(_BASE64, 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=app;AccountKey={};EndpointSuffix=core",
    ),
    _planted(
        "private-key",
        "MIIEowIBAAKCAQEA" + _mixed(48),
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
    ),
    _planted("pem-body-line", _PEM_LINE, "{}"),
    _planted("url-password", _mixed(14), "DATABASE_URL=postgres://app:{}@db.internal:5432/app"),
    _planted("basic-auth", _mixed(12), "curl -u deploy:{} https://ci.example.com/api"),
    _planted("bearer", _take(_URLSAFE, 40), "curl -H 'Authorization: Bearer {}' https://api"),
    _planted(
        "lowercase-auth-flag",
        _take("abcdefghijklmnopqrstuvwxyz0123456789", 32),
        '"publish": "npm publish --auth {}"',
    ),
    _planted(
        "url-path-token",
        _mixed(32),
        "\t curl -X POST https://ci.example.com/api/v4/projects/7/trigger/{}/pipeline",
    ),
    _planted(
        "url-query-token", _take(_LOWER_HEX, 40), "wget https://dl.example.com/a.tgz?token={}"
    ),
    _planted("password-assignment", "Tr0ub4dor&3" + _mixed(3), "DB_PASSWORD={}"),
    _planted("shopify", "shpat_" + _take(_LOWER_HEX, 32), "SHOPIFY = {}"),
    _planted("digitalocean", "dop_v1_" + _take(_LOWER_HEX, 64), "doctl auth init -t {}"),
    _planted("square", "sq0atp-" + _take(_URLSAFE, 22), "square({})"),
    _planted("linear", "lin_api_" + _mixed(40), "LINEAR={}"),
    _planted("postman", "PMAK-" + _take(_LOWER_HEX, 24) + "-" + _take(_LOWER_HEX, 34), "{}"),
    _planted("age", "AGE-SECRET-KEY-1" + _take("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58), "# {}"),
    _planted("vault", "hvs." + _take(_URLSAFE, 95), "VAULT_TOKEN={}"),
    _planted("twilio", "SK" + _take(_LOWER_HEX, 32), "twilio({})"),
    _planted("databricks", "dapi" + _take(_LOWER_HEX, 32), "host + {}"),
    _planted(
        "telegram-bot-url",
        "123456789:AA" + _mixed(33),
        "requests.get(f'https://api.telegram.org/bot{}/getMe')",
    ),
    _planted("generic-secret-json", _mixed(32), '{{"client_secret": "{}"}}'),
)
"""Forty-one planted credentials of distinct shapes."""


# -- well-known key shapes in prose ----------------------------------------------------------

_PROSE_RANDOM = random.Random(20261125)
_HEX = "0123456789abcdef"
_UPPER_DIGITS = string.ascii_uppercase + string.digits
_LOWER_DIGITS = string.ascii_lowercase + string.digits


def _draw(alphabet: str, count: int) -> str:
    return _take(alphabet, count, _PROSE_RANDOM)


def _base62(count: int) -> str:
    return _mixed(count, _PROSE_RANDOM)


WELL_KNOWN_SHAPES: tuple[tuple[str, str], ...] = (
    ("anthropic-admin", "sk-ant-admin01-" + _base62(93) + "AA"),
    ("openai-service-account", "sk-svcacct-" + _base62(58) + "T3BlbkFJ" + _base62(58)),
    ("perplexity", "pplx-" + _base62(48)),
    ("groq", "gsk_" + _base62(52)),
    ("replicate", "r8_" + _base62(37)),
    ("xai", "xai-" + _base62(80)),
    ("aws-bedrock", "ABSK" + _draw(_BASE64, 132)),
    ("google-oauth-client-secret", "GOCSPX-" + _draw(_URLSAFE, 28)),
    ("google-oauth-access-token", "ya29." + _draw(_URLSAFE, 120)),
    ("alibaba", "LTAI" + _base62(20)),
    ("cloudflare-origin-ca", "v1.0-" + _draw(_HEX, 24) + "-" + _draw(_HEX, 146)),
    ("digitalocean-oauth", "doo_v1_" + _draw(_HEX, 64)),
    ("flyio", "fo1_" + _draw(_URLSAFE, 43)),
    ("heroku-v2", "HRKU-AA" + _draw(_URLSAFE, 58)),
    ("openshift", "sha256~" + _draw(_URLSAFE, 43)),
    ("planetscale", "pscale_tkn_" + _base62(43)),
    ("scalingo", "tk-us-" + _draw(_URLSAFE, 48)),
    ("vault-batch", "hvb." + _draw(_URLSAFE, 150)),
    ("doppler", "dp.pt." + _base62(43)),
    ("pulumi", "pul-" + _draw(_HEX, 40)),
    ("prefect", "pnu_" + _base62(36)),
    ("github-app", "ghs_" + _base62(36)),
    ("github-refresh", "ghr_" + _base62(36)),
    ("gitlab-deploy", "gldt-" + _base62(20)),
    ("gitlab-feed", "glft-" + _base62(20)),
    ("gitlab-oauth-secret", "gloas-" + _base62(64)),
    ("gitlab-runner-registration", "GR1348941" + _base62(20)),
    ("rubygems", "rubygems_" + _draw(_HEX, 48)),
    ("clojars", "CLOJARS_" + _draw(_LOWER_DIGITS, 60)),
    ("artifactory", "AKCp" + _base62(69)),
    ("sourcegraph", "sgp_" + _draw(_HEX, 16) + "_" + _draw(_HEX, 40)),
    ("sonarqube", "squ_" + _draw(_HEX, 40)),
    ("readme", "rdme_" + _draw(_LOWER_DIGITS, 70)),
    ("infracost", "ico-" + _base62(32)),
    ("harness", "pat." + _draw(_URLSAFE, 22) + "." + _base62(24) + "." + _base62(20)),
    ("octopus-deploy", "API-" + _draw(_UPPER_DIGITS, 26)),
    ("slack-user", "xoxp-1234567890-1234567890-1234567890-" + _draw(_HEX, 32)),
    ("slack-config", "xoxe.xoxp-1-" + _base62(166)),
    ("grafana-api-key", "eyJrIjoi" + _base62(80)),
    ("jwt-base64", "ZXlK" + _draw(_BASE64, 160)),
    ("1password-service-account", "ops_eyJ" + _draw(_BASE64, 300)),
    ("1password-secret-key", "A3-" + "-".join(_draw(_UPPER_DIGITS, n) for n in (6, 11, 5, 5, 5))),
    ("notion", "ntn_" + _draw(string.digits, 11) + _base62(35)),
    ("sendinblue", "xkeysib-" + _draw(_HEX, 64) + "-" + _base62(16)),
    ("mailgun", "key-" + _draw(_HEX, 32)),
    ("new-relic", "NRAK-" + _draw(_UPPER_DIGITS, 27)),
    ("sentry-user", "sntryu_" + _draw(_HEX, 64)),
    ("typeform", "tfp_" + _draw(_URLSAFE, 59)),
    ("dynatrace", "dt0c01." + _draw(_UPPER_DIGITS, 24) + "." + _base62(64)),
    ("stripe-webhook", "whsec_" + _base62(32)),
    ("stripe-test", "sk_test_" + _base62(24)),
    ("shopify-shared-secret", "shpss_" + _draw(_HEX, 32)),
    ("shippo", "shippo_live_" + _draw(_HEX, 40)),
    ("facebook-page", "EAAC" + _base62(120)),
    ("square-production", "EAAA" + _draw(_URLSAFE, 60)),
    ("duffel", "duffel_live_" + _draw(_URLSAFE, 43)),
    ("easypost", "EZAK" + _base62(54)),
    ("flutterwave", "FLWSECK_TEST-" + _draw("abcdefgh0123456789", 32) + "-X"),
    ("plaid", "access-production-" + "-".join(_draw(_HEX, n) for n in (8, 4, 4, 4, 12))),
    ("adobe", "p8e-" + _base62(32)),
    ("airtable", "pat" + _base62(14) + "." + _draw(_HEX, 64)),
    ("frameio", "fio-u-" + _draw(_URLSAFE, 64)),
    ("intra42", "s-s4t2ud-" + _draw(_HEX, 64)),
    ("settlemint", "sm_pat_" + _base62(16)),
    ("defined-networking", "dnkey-" + _base62(26) + "-" + _base62(52)),
    ("mapbox-secret", "sk.eyJ1Ijoi" + _base62(40) + "." + _draw(_URLSAFE, 22)),
    ("yandex", "AQVN" + _draw(_URLSAFE, 36)),
    ("dropbox", "sl." + _draw(_URLSAFE, 135)),
    ("twitter-bearer", "A" * 22 + _base62(90)),
    ("telegram-bot", "123456789:AA" + _draw(_URLSAFE, 33)),
    ("terraform", _base62(14) + ".atlasv1." + _draw(_URLSAFE, 66)),
    ("maxmind", _base62(6) + "_" + _base62(29) + "_mmk"),
    ("mailchimp", _draw(_HEX, 32) + "-us12"),
)
"""Well-known key shapes from public rule sets and providers' documentation, each a credential
by its shape alone: written in prose, with no name or URL around it, each must be found."""


def planted_file_text() -> str:
    """Every planted line, one after another, as one file."""
    return "\n".join(planted.line for planted in PLANTED) + "\n"


def well_known_prose_text() -> str:
    """Every well-known key shape, each in a sentence of its own, as notes hold them."""
    return "".join(f"Use {value} to sign in ({shape}).\n" for shape, value in WELL_KNOWN_SHAPES)


def leaked_values(text: str) -> list[str]:
    """The shapes (planted or well-known) whose secret value appears in `text` (empty when
    nothing leaked)."""
    planted = [planted.shape for planted in PLANTED if planted.value in text]
    return planted + [shape for shape, value in WELL_KNOWN_SHAPES if value in text]
