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


def _take(alphabet: str, count: int) -> str:
    return "".join(_RANDOM.choices(alphabet, k=count))


def _mixed(count: int) -> str:
    """Base62 with at least one upper-case letter, lower-case letter and digit."""
    while True:
        value = _take(_BASE62, count)
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


def planted_file_text() -> str:
    """Every planted line, one after another, as one file."""
    return "\n".join(planted.line for planted in PLANTED) + "\n"


def leaked_values(text: str) -> list[str]:
    """The shapes whose secret value appears in `text` (empty when nothing leaked)."""
    return [planted.shape for planted in PLANTED if planted.value in text]
