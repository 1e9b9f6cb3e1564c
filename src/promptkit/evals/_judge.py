"""`LLMJudge`: a model grades a reply against criteria, through any adapter, as a typed verdict.

The judge is an ordinary promptkit prompt (`JUDGE_PROMPT`, `promptkit.evals/judge`) with a
`JudgeVerdict` output type, so its wording can be tuned in an overrides store like any other
prompt, and it runs on whichever adapter the caller passes: the one under evaluation, a
stronger model, or `FakeProviderServer` in tests. Each judgement runs on a fresh Session.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from promptkit._jsonable import json_ready
from promptkit.errors import ModelOutputError
from promptkit.evals._dataset import Case
from promptkit.evals._evaluators import Score
from promptkit.prompt import MarkdownSection, OverridesLookup, Prompt, TextSection

if TYPE_CHECKING:
    from promptkit.adapters import PromptResponse, ProviderAdapter

DEFAULT_JUDGE_DEADLINE_S = 120.0


class JudgeVerdict(BaseModel):
    """What the judge decides: pass, partial or fail, a score in [0, 1], and why."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["pass", "partial", "fail"]
    score: float = Field(ge=0.0, le=1.0, description="1 is a reply that fully meets the criteria")
    reason: str = Field(description="one or two sentences a reviewer can check")


@dataclass(frozen=True)
class JudgeParams:
    """What the judge sees of one case."""

    criteria: str
    user_input: str
    expected: str
    reply: str


JUDGE_PROMPT: Prompt[JudgeVerdict] = Prompt(
    ns="promptkit.evals",
    key="judge",
    name="Evaluation judge",
    sections=(
        TextSection(
            title="Role",
            key="role",
            text=(
                "You grade one reply of an AI assistant. Judge only against the criteria;"
                " be strict and brief."
            ),
        ),
        MarkdownSection(
            title="Case",
            key="case",
            params_type=JudgeParams,
            template=(
                "Criteria: {{ criteria }}\n\n"
                "User input:\n\n{{ user_input }}\n\n"
                "Expected answer (may be empty):\n\n{{ expected }}\n\n"
                "Reply to grade:\n\n{{ reply }}"
            ),
        ),
    ),
    output_type=JudgeVerdict,
)


@dataclass(frozen=True)
class LLMJudge:
    """Scores a reply with a model's `JudgeVerdict` on `criteria`, run through `adapter`."""

    adapter: ProviderAdapter
    criteria: str
    name: str = "judge"
    prompt: Prompt[JudgeVerdict] = JUDGE_PROMPT
    overrides_store: OverridesLookup | None = None
    overrides_tag: str = "latest"
    deadline_s: float = DEFAULT_JUDGE_DEADLINE_S

    async def evaluate(self, case: Case, response: PromptResponse[Any]) -> Score:
        from promptkit.session import Session

        params = JudgeParams(
            criteria=self.criteria,
            user_input=case.input or "(the rendered prompt only)",
            expected=_as_text(case.expected),
            reply=response.text,
        )
        judged = await self.adapter.aevaluate(
            self.prompt,
            params,
            session=Session(),
            overrides_store=self.overrides_store,
            overrides_tag=self.overrides_tag,
            deadline=self.deadline_s,
        )
        verdict = judged.output
        if verdict is None:  # an output type is declared, so evaluate parsed one or raised
            raise ModelOutputError("the judge prompt returned no verdict", response=judged)
        return Score(verdict.score, f"{verdict.verdict}: {verdict.reason}")


def _as_text(expected: Any) -> str:
    if expected is None:
        return ""
    if isinstance(expected, str):
        return expected
    return json.dumps(json_ready(expected), ensure_ascii=False)
