"""The digest gate: what a model wrote is stored only when it is a digest of this workspace.

Judged against the `repo` fixture (a README, a Makefile with `test` and `lint`, a package in
`src/demo/`, a test in `tests/`): the replies a small local model really gave (a JSON schema,
the schema's description, a paraphrase of the prompt) are refused, and a digest built from the
workspace's own paths and commands is accepted whatever it picks of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from promptkit.optimize._gate import DigestGate, Verdict, WorkspaceEvidence
from promptkit.repofacts import scan_workspace
from promptkit.workspace import HostMount

from ..conftest import REPO_FILES, committed_repo

# What Qwen2.5-Coder 0.5B answered on llama.cpp's llama-server (wire captures of issue 32).
SCHEMA_BLOB = """```json
{
  "description": "The plan to restate the objective in one sentence.",
  "properties": {"objective": {"title": "Objective", "type": "string"}},
  "required": ["objective"],
  "title": "_SetupPlanParams",
  "type": "object"
}
```"""
SCHEMA_DESCRIPTION = "The workspace digest, as markdown (the seed's\n`_OptimizationResponse`)."
GIVEN = (
    "Write a digest of the workspace mounted below. The reply schema: The workspace digest, as"
    " markdown (the seed's `_OptimizationResponse`). Explore the workspace with the tools first."
)
GROUNDED = """## Layout
- `src/demo/`: the package; its entry point is `src/demo/cli.py`
- `tests/`: the test suite

## Tooling
- Test: `make test` (runs `pytest -q`)
- Lint: `make lint`
"""


@pytest.fixture(scope="module")
def evidence(tmp_path_factory: pytest.TempPathFactory) -> WorkspaceEvidence:
    root = committed_repo(tmp_path_factory.mktemp("gate") / "repo", REPO_FILES)
    return WorkspaceEvidence.of([HostMount(root)], scan_workspace(root))


def judge(digest: str, evidence: WorkspaceEvidence) -> Verdict:
    return DigestGate().judge(digest, evidence, prompt_text=GIVEN)


def test_a_grounded_digest_is_accepted_with_its_grounding(evidence: WorkspaceEvidence) -> None:
    verdict = judge(GROUNDED, evidence)

    assert verdict.problem is None
    grounding = verdict.grounding
    assert (grounding.paths_named, grounding.paths_found) == (3, 3)
    assert (grounding.commands_named, grounding.commands_found) == (3, 3)
    assert grounding.summary() == "3 of 3 paths and 3 of 3 commands found in the workspace"


def test_a_json_schema_is_refused(evidence: WorkspaceEvidence) -> None:
    assert judge(SCHEMA_BLOB, evidence).problem == (
        "it is a JSON schema, not a description of the workspace"
    )


def test_the_schemas_description_echoed_back_is_refused(evidence: WorkspaceEvidence) -> None:
    problem = judge(SCHEMA_DESCRIPTION, evidence).problem

    assert problem is not None and "repeats the instructions" in problem


def test_a_json_object_is_refused(evidence: WorkspaceEvidence) -> None:
    problem = judge('{"layout": "src/demo", "tests": "make test"}', evidence).problem

    assert problem == "it is JSON, not a markdown description of the workspace"


def test_a_paraphrase_naming_nothing_of_the_workspace_is_refused(
    evidence: WorkspaceEvidence,
) -> None:
    paraphrase = "The workspace has files. Explore them with the tools and confirm every fact."

    assert judge(paraphrase, evidence).problem == (
        "it names no file, folder or command of the workspace"
    )


def test_a_digest_naming_mostly_what_the_workspace_lacks_is_refused(
    evidence: WorkspaceEvidence,
) -> None:
    invented = "## Layout\n- `app/models/`\n- `lib/tasks.rb`\n- `src/demo/`\n\n- `rake spec`\n"

    verdict = judge(invented, evidence)

    assert verdict.problem is not None and "most of what it names" in verdict.problem
    assert set(verdict.grounding.not_found) == {"app/models", "lib/tasks.rb", "rake spec"}


def test_a_digest_over_the_budget_is_refused(evidence: WorkspaceEvidence) -> None:
    endless = GROUNDED + "\n".join(f"- `src/demo/cli.py` line {n}" for n in range(2000))

    problem = judge(endless, evidence).problem

    assert problem is not None and "over the digest budget of 2000" in problem


def test_paths_relative_to_a_project_inside_the_tree_count(evidence: WorkspaceEvidence) -> None:
    # `demo/cli.py` is the package's own view of `src/demo/cli.py`.
    assert judge("## Layout\n- `demo/cli.py`: the command", evidence).problem is None


PATHS = ["src/demo/", "src/demo/cli.py", "src/demo/__init__.py", "tests/", "README.md", "Makefile"]
COMMANDS = ["make test", "make lint", "pytest -q", "ruff check ."]


@given(
    paths=st.lists(st.sampled_from(PATHS), min_size=1, unique=True),
    commands=st.lists(st.sampled_from(COMMANDS), unique=True),
    fenced=st.booleans(),
)
def test_any_digest_of_the_workspaces_own_paths_and_commands_is_accepted(
    evidence: WorkspaceEvidence, paths: list[str], commands: list[str], fenced: bool
) -> None:
    layout = "\n".join(f"- `{path}`: part of the project" for path in paths)
    tooling = (
        "```sh\n" + "\n".join(commands) + "\n```"
        if fenced
        else "\n".join(f"- `{command}`" for command in commands)
    )

    verdict = judge(f"## Layout\n{layout}\n\n## Tooling\n{tooling}\n", evidence)

    assert verdict.problem is None
    assert verdict.grounding.found == verdict.grounding.named == len(paths) + len(commands)


@given(st.lists(st.from_regex(r"[a-z]{3,8}/[a-z]{3,8}\.(rb|go|ts)", fullmatch=True), min_size=1))
def test_any_digest_of_paths_the_workspace_lacks_is_refused(
    evidence: WorkspaceEvidence, invented: list[str]
) -> None:
    digest = "## Layout\n" + "\n".join(f"- `{path}`" for path in invented)

    assert judge(digest, evidence).problem is not None


def test_the_evidence_holds_the_workspaces_files_folders_and_commands(tmp_path: Path) -> None:
    root = committed_repo(tmp_path / "repo", REPO_FILES)

    evidence = WorkspaceEvidence.of([HostMount(root)], scan_workspace(root))

    assert "src/demo/cli.py" in evidence.files
    assert {"src", "src/demo", "tests"} <= evidence.folders
    assert "make test" in evidence.commands or "pytest -q" in evidence.text
