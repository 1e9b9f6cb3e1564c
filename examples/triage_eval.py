"""Evaluate a prompt change before it ships, offline: a ticket-triage prompt, a YAML dataset, a
candidate override of one section, a fake model answering from a reply script, a side-by-side
report, and promotion of the candidate only because the evaluation shows it is better.

Run: python examples/triage_eval.py [OUTPUT_DIR]   (writes report.html and manifest.json there)
The same run from the command line is shown in docs/evaluation.md.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from promptkit import LocalPromptOverridesStore, MarkdownSection, Prompt, TextSection
from promptkit.adapters import OpenAIAdapter
from promptkit.evals import (
    Case,
    JsonFieldEquals,
    load_dataset,
    promote_overrides,
    run_evaluation,
    write_evaluation_outputs,
)
from promptkit.testing import FakeProviderServer, load_reply_script

HERE = Path(__file__).resolve().parent
DATASET = HERE / "evals" / "triage.yaml"
REPLIES = HERE / "evals" / "triage_replies.yaml"
CANDIDATE_RULES = (
    "Label each ticket bug, question or billing. Anything about money (charges, refunds,"
    " invoices) is billing, even when it is asked as a question."
)


@dataclass(frozen=True)
class Ticket:
    """A support ticket as it arrives."""

    subject: str
    body: str


class Triage(BaseModel):
    label: Literal["bug", "question", "billing"]
    urgent: bool
    reason: str


TRIAGE_PROMPT: Prompt[Triage] = Prompt(
    ns="examples",
    key="triage",
    sections=(
        TextSection(title="Rules", key="rules", text="Label each ticket bug, question or billing."),
        MarkdownSection(
            title="Ticket",
            key="ticket",
            params_type=Ticket,
            template="Subject: {{ subject }}\n\n{{ body }}",
        ),
    ),
    output_type=Triage,
)


def is_urgent_right(case: Case, response: Any) -> bool | None:
    """A Python evaluator: the urgency flag matches the expected one."""
    if response.output is None or not isinstance(case.expected, dict):
        return None
    return bool(response.output.urgent == case.expected["urgent"])


def main(output_dir: Path) -> int:
    store = LocalPromptOverridesStore(output_dir / "overrides")
    store.set_section_override(TRIAGE_PROMPT, tag="candidate", path="rules", body=CANDIDATE_RULES)
    dataset = load_dataset(DATASET, TRIAGE_PROMPT)
    with FakeProviderServer() as server:
        server.respond_with(load_reply_script(REPLIES).reply_to)
        adapter = OpenAIAdapter(
            model="fake-model",
            client_kwargs={"api_key": "fake-key", "base_url": server.openai_base_url},
        )
        report = run_evaluation(
            TRIAGE_PROMPT,
            dataset,
            adapter,
            [JsonFieldEquals("label"), is_urgent_right],
            tag=["latest", "candidate"],
            overrides_store=store,
            concurrency=4,
        )
    for tag in report.override_tags:
        print(f"{tag}: mean score {report.summary(tag).mean_score:.2f}")
    comparison = report.compare("latest", "candidate")
    print("improved:", ", ".join(d.case_id for d in comparison.improved) or "none")
    print("regressed:", ", ".join(d.case_id for d in comparison.regressed) or "none")
    print("execution record:", write_evaluation_outputs(report, output_dir))
    promoted = promote_overrides(
        TRIAGE_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.9
    )
    print("promoted; evidence in the [promotion] table of", promoted.overrides_location)
    return 0


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="triage-"))
    sys.exit(main(target))
