"""Credential detection and redaction: the one scanner every sink of promptkit passes through.

`find_secrets` reports where a credential sits (rule, line, column) and never the value itself;
`redact_secrets` replaces each credential with `[REDACTED:<rule>]`; `redact_value` does the same
for every string inside nested dicts, lists, tuples and exceptions (log records, session
records, tool values); `mask_secrets` also says which rules fired, for a note to the reader.
They run on every tool result before the model sees it, on every log record, on session
records, execution records, override bodies and digests, so the scan is built to be cheap: one
regex pass finds every provider-token prefix, the other rules only look at text holding a
literal they need (`://`, `PRIVATE KEY`, `Q~`, `:AA`, `-u`) or at lines holding a secret-like
word. No pattern can backtrack catastrophically: quantifiers are bounded or possessive.

The rules, by the name that appears in findings and redaction markers:

- Shaped tokens, found with no name in front: 91 shapes (86 rule names) whose facts (prefix,
  alphabet, length) come from gitleaks' default rule set and providers' documentation, among
  them model providers (`openai-api-key`, `openai-project-key`, `anthropic-api-key`, `groq-api-key`,
  `perplexity-api-key`, `xai-api-key`, `replicate-api-token`, `huggingface-token`), clouds
  (`aws-access-key-id`, `aws-bedrock-api-key`, `google-api-key`, Google OAuth client secrets
  and access tokens, `azure-client-secret`, Alibaba, Cloudflare, DigitalOcean, Fly.io, Heroku,
  Vault, Doppler, Pulumi), code hosting and packages (`github-token`, `gitlab-token`, npm, PyPI,
  RubyGems, Clojars, Artifactory, Sourcegraph, SonarQube), chat, mail and payments (Slack,
  SendGrid, Sendinblue, Mailgun, Mailchimp, Stripe keys and webhook secrets, Shopify, Square,
  Plaid, Telegram bot tokens) and `json-web-token` (plain or base64-encoded); the full table is
  `promptkit.secrets._tokens`.
- `private-key`: a whole PEM/OpenSSH/PGP private key block, or a 64/70-character base64 body
  line of one seen without its BEGIN line.
- `url-password` (`scheme://user:password@host`) and `url-token` (a generated-looking token in
  a URL path or a `?token=` query value; see `promptkit.secrets._urls`).
- Named values: `secret-assignment`, `aws-secret-access-key`, `basic-auth-password`,
  `bearer-token` (see `promptkit.secrets._named`).

Redaction markers are never taken for secrets, so redacting twice changes nothing.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.secrets._common import shannon_entropy as shannon_entropy
    from promptkit.secrets._scanner import (
        MaskedText as MaskedText,
        SecretFinding as SecretFinding,
        find_secrets as find_secrets,
        mask_secrets as mask_secrets,
        redact_secrets as redact_secrets,
        redact_value as redact_value,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.secrets._common": ("shannon_entropy",),
            "promptkit.secrets._scanner": (
                "MaskedText",
                "SecretFinding",
                "find_secrets",
                "mask_secrets",
                "redact_secrets",
                "redact_value",
            ),
        },
    )
