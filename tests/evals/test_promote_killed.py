"""A promotion killed (SIGKILL) at any step leaves the target's old entries or the new ones with
their evidence, never a mix: a child process promotes and kills itself at its Nth filesystem
step (an audit hook counts them: opens, renames, removals, chmods, directory listings), for
every N until a promotion completes."""

import importlib.util
import pickle
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

from promptkit._durable import write_atomically
from promptkit.evals import Case, Dataset, ExactMatch, run_evaluation
from promptkit.overrides import LocalPromptOverridesStore, OverridesSnapshot, check_overrides
from promptkit.testing import FakeProviderServer, reply_script_from

from .conftest import openai_adapter

CHILD = """
import os
import pickle
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from promptkit import MarkdownSection, Prompt, TextSection


@dataclass(frozen=True)
class Country:
    name: str


PROMPT = Prompt(
    ns="killed",
    key="capital",
    sections=(
        TextSection(title="Role", key="role", text="You answer geography questions."),
        TextSection(title="Style", key="style", text="Be brief."),
        MarkdownSection(
            title="Question", key="question", params_type=Country,
            template="What is the capital of {{ name }}?",
        ),
    ),
)


def main(root, report_file, kill_at):
    # Everything a promotion imports is imported first: only its own steps are counted.
    import filelock
    import tomli_w

    from promptkit.evals import promote_overrides
    from promptkit.overrides import LocalPromptOverridesStore

    report = pickle.loads(Path(report_file).read_bytes())
    store = LocalPromptOverridesStore(root)
    steps = 0

    def hook(event, args):
        nonlocal steps
        if event == "open" or (event.startswith("os.") and event != "os.kill"):
            steps += 1
            if steps == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)
    promote_overrides(
        PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.5
    )
    print(f"promoted in {steps} steps", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
"""
MAX_STEPS = 200


def _child_module(tmp_path: Path) -> tuple[Path, ModuleType]:
    script = tmp_path / "promote_child.py"
    script.write_text(CHILD, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("promote_child", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return script, module


def test_a_promotion_killed_at_any_step_leaves_the_old_or_the_new_entries(
    tmp_path: Path, server: FakeProviderServer
) -> None:
    script, child = _child_module(tmp_path)
    prompt = child.PROMPT
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    store.set_section_override(prompt, tag="latest", path="role", body="Old role.")
    store.set_section_override(prompt, tag="latest", path="style", body="Old style.")
    store.set_section_override(prompt, tag="candidate", path="role", body="New role, one word.")
    server.respond_with(
        reply_script_from(
            {"rules": [{"when": "one word", "text": "Paris"}], "default": {"text": "Lyon"}}
        ).reply_to
    )
    dataset = Dataset("capital", (Case("fr", (child.Country("France"),), expected="Paris"),))
    report = run_evaluation(
        prompt,
        dataset,
        openai_adapter(server),
        [ExactMatch()],
        tag=["latest", "candidate"],
        overrides_store=store,
    )
    report_file = tmp_path / "report.pickle"
    report_file.write_bytes(pickle.dumps(report))
    target = store.prompt_file(prompt.ns, prompt.key, "latest")
    old_bytes = target.read_bytes()
    old = report.overrides["latest"]
    new = report.overrides["candidate"]
    outcomes: list[str] = []

    for kill_at in range(1, MAX_STEPS + 1):
        write_atomically(target, old_bytes)
        ran = subprocess.run(
            [sys.executable, str(script), str(store.root), str(report_file), str(kill_at)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        stored = LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(
            prompt.descriptor, "latest"
        )
        snapshot = OverridesSnapshot.of(stored)
        assert stored is not None
        if snapshot == old:
            assert target.read_bytes() == old_bytes
            outcomes.append("old")
        else:
            assert snapshot == new, f"kill at step {kill_at} left {snapshot}"
            assert stored.promotion is not None
            assert tomllib.loads(target.read_text())["promotion"]["from_tag"] == "candidate"
            assert check_overrides(store.root, [prompt]) == ()
            outcomes.append("new")
        if ran.returncode == 0:
            assert ran.stdout.startswith("promoted in ")
            break
        assert ran.returncode == -9, ran.stderr
    else:
        raise AssertionError(f"the promotion did not complete within {MAX_STEPS} steps")

    assert outcomes[0] == "old" and outcomes[-1] == "new"
    # Once the new entries are in place they stay: no later step takes them back.
    assert outcomes == sorted(outcomes, key=lambda outcome: outcome == "new")
