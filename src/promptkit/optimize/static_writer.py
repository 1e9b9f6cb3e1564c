"""`StaticAdapter`: the offline default, which writes workspace digests without a model.

Its digest comes from `scan_workspace` and `render_static_digest` (layout, tooling, workflows and
watch-outs read from the files themselves); `optimize` is the one every adapter inherits, so the
same validation runs before anything else, empty or credential-bearing digests are refused the
same way, and SESSION and GLOBAL storage are the same. It needs no API key and no network, and
the same tree gives the same digest byte for byte. `evaluate` cannot work without a model, and
its error says how to configure one.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, NoReturn

from promptkit.adapters.base import ProviderAdapter
from promptkit.adapters.optimize import DigestDraft, OptimizationTarget, digest_response
from promptkit.errors import ProviderError
from promptkit.prompt import Prompt
from promptkit.session import Session
from promptkit.workspace import render_static_digest, scan_workspace

STATIC_PROVIDER = "static"
STATIC_MODEL = "static"
DEFAULT_STATIC_DIGEST_TOKENS = 2000


class StaticAdapter(ProviderAdapter):
    """Optimizes from the files alone; `max_tokens` bounds the digest (estimated tokens)."""

    def __init__(self, *, max_tokens: int = DEFAULT_STATIC_DIGEST_TOKENS) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"StaticAdapter: max_tokens must be an int >= 1, got {max_tokens!r}")
        self._max_tokens = max_tokens

    @property
    def provider(self) -> str:
        return STATIC_PROVIDER

    @property
    def model(self) -> str:
        return STATIC_MODEL

    def __repr__(self) -> str:
        return f"StaticAdapter(max_tokens={self._max_tokens})"

    # Both refuse whatever they are given, so they take any arguments rather than repeat the
    # full evaluate signature only to ignore it; `NoReturn` keeps the ABC's contract for mypy.
    def evaluate(self, prompt: Prompt[Any], *params: Any, **options: Any) -> NoReturn:
        """Always raises ProviderError: answering a prompt needs a model."""
        _needs_model(prompt)

    async def aevaluate(self, prompt: Prompt[Any], *params: Any, **options: Any) -> NoReturn:
        """Always raises ProviderError: answering a prompt needs a model."""
        _needs_model(prompt)

    def draft_workspace_digest(
        self,
        target: OptimizationTarget,
        *,
        optimization_session: Session,
        deadline: float | timedelta | None,
        max_tool_rounds: int,
    ) -> DigestDraft:
        """The digest of the workspace from a static scan; no model runs, so the session, the
        deadline and the tool rounds have nothing to bound."""
        facts = scan_workspace(target.workspace_root)
        digest = render_static_digest(facts, max_tokens=self._max_tokens)
        response = digest_response(
            digest,
            prompt_name=target.prompt.display_name,
            provider=self.provider,
            model=self.model,
        )
        return DigestDraft(response=response, provenance=facts.manifest)


def _needs_model(prompt: Prompt[Any]) -> NoReturn:
    raise ProviderError(
        f"cannot evaluate {prompt.display_name}: StaticAdapter has no model, it only writes"
        " workspace digests (optimize). Configure a model: set OPENAI_API_KEY or"
        " ANTHROPIC_API_KEY, point --base-url at a local OpenAI-compatible server (vLLM, Ollama,"
        " llama.cpp), or use OpenAIAdapter(model=...) or AnthropicAdapter(model=...)"
    )
