"""Choosing who writes a digest, as `promptkit optimize` and the REPL do: a model when one is
configured (`promptkit.adapters.choose_adapter`), else the offline static writer.

`auto` takes the static writer when no API key and no base URL are given; `static` always does.
The choice comes with a sentence saying why, for the user to see, and keeps the adapter (None
for the static writer) for commands that need a model to answer prompts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from promptkit.adapters import choose_adapter, model_configured
from promptkit.errors import ProviderError

if TYPE_CHECKING:
    from promptkit.adapters import ProviderAdapter
    from promptkit.hostfiles import ListingProcess
    from promptkit.optimize._types import DigestWriter

WriterName = Literal["auto", "openai", "anthropic", "static"]
WRITER_NAMES: tuple[str, ...] = get_args(WriterName)


@dataclass(frozen=True)
class WriterChoice:
    """The digest writer, one sentence saying which it is and why, and the adapter behind it
    (None for the static writer, which answers no prompt)."""

    writer: DigestWriter
    reason: str
    adapter: ProviderAdapter | None

    @classmethod
    def of_adapter(
        cls, adapter: ProviderAdapter, reason: str, *, listing: ListingProcess | None = None
    ) -> WriterChoice:
        """The choice of `adapter`'s model as the writer (and as the REPL's answering model);
        `listing` is as for `ModelDigestWriter`."""
        from promptkit.optimize._model_writer import ModelDigestWriter

        return cls(ModelDigestWriter(adapter, listing=listing), reason, adapter)


def choose_digest_writer(
    provider: str = "auto",
    *,
    model: str | None = None,
    base_url: str | None = None,
    api: str | None = None,
    environ: Mapping[str, str] | None = None,
    listing: ListingProcess | None = None,
    structured_output: str = "native",
) -> WriterChoice:
    """The writer for `provider` (`auto`, `openai`, `anthropic` or `static`).

    `model`, `base_url`, `api`, `environ` and `structured_output` are as for `choose_adapter`;
    keys are never put in the reason or in an error message. `listing`, a listing already under
    way in a helper process, goes to a model's writer (see `ModelDigestWriter`); the static
    writer lists what it reads.
    """
    env = os.environ if environ is None else environ
    if provider not in WRITER_NAMES:
        raise ProviderError(f"unknown provider {provider!r}: use one of {', '.join(WRITER_NAMES)}")
    # Each writer is imported only when chosen: every CLI command's parser imports this module
    # for WRITER_NAMES, the model writer's import (adapters, the tool loop) is costly to start,
    # and so is the static writer's (the scanners), which a model's run never uses.
    if not writes_with_model(provider, base_url=base_url, environ=env):
        from promptkit.optimize._static_writer import StaticDigestWriter

        return WriterChoice(
            StaticDigestWriter(), _static_reason(provider, model, base_url), adapter=None
        )
    choice = choose_adapter(
        provider,
        model=model,
        base_url=base_url,
        api=api,
        environ=env,
        structured_output=structured_output,
    )
    return WriterChoice.of_adapter(choice.adapter, choice.reason, listing=listing)


def writes_with_model(
    provider: str, *, base_url: str | None = None, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether `choose_digest_writer` with these arguments chooses a model (and not the static
    writer), decided without importing any writer."""
    env = os.environ if environ is None else environ
    return provider != "static" and (provider != "auto" or model_configured(env, base_url))


def _static_reason(provider: str, model: str | None, base_url: str | None) -> str:
    reason = "static optimizer (no model: the digest is built from the files)"
    if provider == "auto":
        reason = f"auto chose the {reason}, as neither an API key nor a base URL is set"
    ignored = [flag for flag, value in (("model", model), ("base URL", base_url)) if value]
    if ignored:
        reason += f"; the {' and '.join(ignored)} given is not used"
    return reason
