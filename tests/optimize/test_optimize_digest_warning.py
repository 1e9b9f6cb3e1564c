"""An optimize run writes the digest, so the optimization prompt's own digest placeholder is
expected there and logs no `workspace_digest_missing`; the caller's prompts still warn."""

from __future__ import annotations

from pathlib import Path

from structlog.testing import capture_logs

from promptkit.adapters import ProviderAdapter
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply

from .conftest import make_prompt

DIGEST = "## Layout\n- `src/demo/`: the package"


def test_optimize_run_logs_no_workspace_digest_missing(
    adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    prompt = make_prompt(session, repo)
    server.enqueue(Reply.json({"digest": DIGEST}))

    with capture_logs() as logs:
        adapter.optimize(prompt, session=session)

    assert [log for log in logs if log["event"] == "workspace_digest_missing"] == []


def test_render_of_the_callers_prompt_without_a_digest_still_warns(repo: Path) -> None:
    prompt = make_prompt(Session(), repo)

    with capture_logs() as logs:
        prompt.render()

    missing = [log for log in logs if log["event"] == "workspace_digest_missing"]
    assert [log["prompt_key"] for log in missing] == [prompt.key]
