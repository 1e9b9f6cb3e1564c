"""render_static_digest: bounded, reproducible markdown that never carries a credential."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from promptkit.repofacts import (
    ToolCommand,
    WatchOut,
    WorkspaceFacts,
    estimate_tokens,
    render_static_digest,
    scan_workspace,
)
from promptkit.secrets import find_secrets

Writer = Callable[[Path, str, str | bytes], Path]

# Fake credentials in each rule's shape, made up for this test.
OPENAI = "sk-Fake0123456789abcdefGHIJKLMNOPqrstuv"
OPENAI_PROJECT = "sk-proj-Fake0123456789abcdefGHIJKLMNOPqrstuv"
ANTHROPIC = "sk-ant-api03-Fake0123456789abcdefGHIJKLMNOPqrstuv"
AWS_KEY_ID = "AKIAFAKE0123456789AB"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY012"
GITHUB = "ghp_Fake0123456789abcdefghijklmnopqrstuv"
GITHUB_OAUTH = "gho_Fake0123456789abcdefghijklmnopqrstuv"
GITHUB_FINE = "github_pat_11FAKE0123456789abcdef_ghijklmnopqrstuvwxyz0123"
SLACK = "xoxb-1234567890-0987654321-FakeTokenValueHere"
PASSWORD = "Xy9kLm2Pq8Rt5Vw3Zb7c"
URL_PASSWORD = "Sup3rS3cretPw"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.Zm9vYmFy"
PRIVATE_KEY_BODY = "MIIEowIBAAKCAQEAfakefakefakefakefakefake0123456789"
ENV_ONLY = "only-in-dotenv-0123456789abcdef"

CREDENTIALS = (
    OPENAI,
    OPENAI_PROJECT,
    ANTHROPIC,
    AWS_KEY_ID,
    AWS_SECRET,
    GITHUB,
    GITHUB_OAUTH,
    GITHUB_FINE,
    SLACK,
    PASSWORD,
    URL_PASSWORD,
    BEARER,
    PRIVATE_KEY_BODY,
    ENV_ONLY,
)


def run_git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
    )


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return root


LEAKY_FILES = {
    "Makefile": (
        f"deploy: TOKEN={GITHUB}\n\t./deploy --token {GITHUB_OAUTH}\n"
        f"test:\n\tOPENAI_API_KEY={OPENAI} pytest -q\n"
        f"lint:\n\tcurl -H 'Authorization: Bearer {BEARER}' https://lint.example\n"
    ),
    "README.md": (
        "# Leaky\n\nYou must always export the key first.\n\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{PRIVATE_KEY_BODY}\n-----END RSA PRIVATE KEY-----\n"
    ),
    "CONTRIBUTING.md": (
        "Before deploying, always load the deploy key:\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{PRIVATE_KEY_BODY}\n-----END RSA PRIVATE KEY-----\n\n"
        f"- Never commit `{ANTHROPIC}` again.\n"
        f"- Always use the shared key {OPENAI_PROJECT} before running tests.\n"
        "- Always run the linters before pushing.\n"
    ),
    "AGENTS.md": (
        f"- You must set AWS_ACCESS_KEY_ID={AWS_KEY_ID} before deploying.\n"
        f"- Never paste aws_secret_access_key = {AWS_SECRET} into chat.\n"
        f"- Do not post to Slack with {SLACK} directly.\n"
        f"\n```sh\n$ uv publish -p {PASSWORD}\n```\n"
    ),
    "package.json": (
        '{"name": "leaky", "scripts": {'
        f'"test": "GITHUB_TOKEN={GITHUB_FINE} jest", '
        f'"build": "DB_PASSWORD={PASSWORD} vite build", '
        f'"migrate": "migrate --url postgres://admin:{URL_PASSWORD}@db:5432/app"'
        "}}"
    ),
    ".github/workflows/ci.yml": (
        "name: CI\non: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    env:\n"
        f"      OPENAI_API_KEY: {OPENAI}\n    steps:\n"
        f"      - run: curl -u admin:{URL_PASSWORD} https://x.example\n"
        f"      - run: |\n          export SLACK_TOKEN={SLACK}\n          make test\n"
    ),
    ".env": f"SERVICE_SECRET={ENV_ONLY}\n",
    "pyproject.toml": (
        '[project]\nname = "leaky"\n[tool.hatch.envs.default.scripts]\n'
        f'release = "twine upload -p {PASSWORD}"\n'
    ),
    "justfile": f"publish:\n    cargo publish --token {GITHUB}\n",
    f"{GITHUB}/notes.txt": "a directory named like a token\n",
    "src/app.py": "print('hello')\n",
}


@pytest.fixture(scope="module")
def leaky_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("leaky"), LEAKY_FILES)
    run_git(root, "init", "-q")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "leaky")
    return root


@pytest.fixture(scope="module")
def leaky_facts(leaky_repo: Path) -> WorkspaceFacts:
    return scan_workspace(leaky_repo)


def test_digest_has_commands_layout_tooling_workflows_and_watch_outs_in_that_order(
    leaky_facts: WorkspaceFacts,
) -> None:
    headings = re.findall(r"^### (.+)$", render_static_digest(leaky_facts), re.MULTILINE)
    assert headings == ["Commands", "Layout", "Tooling", "Workflows", "Watch-outs"]


def test_fake_credentials_never_appear_in_the_static_digest(leaky_facts: WorkspaceFacts) -> None:
    digest = render_static_digest(leaky_facts, max_tokens=100_000)
    leaked = [credential for credential in CREDENTIALS if credential in digest]
    assert leaked == []
    assert find_secrets(digest) == []


def test_redacted_commands_keep_their_shape_in_the_digest(leaky_facts: WorkspaceFacts) -> None:
    digest = render_static_digest(leaky_facts, max_tokens=100_000)
    assert "- Test: `make test` = `OPENAI_API_KEY=[REDACTED:openai-api-key] pytest -q`" in digest
    assert "Always run the linters before pushing. (CONTRIBUTING.md)" in digest


def test_watch_outs_that_held_a_credential_are_dropped(leaky_facts: WorkspaceFacts) -> None:
    assert [watch_out.text for watch_out in leaky_facts.watch_outs] == [
        "Always run the linters before pushing."
    ]


def test_random_looking_words_are_concealed_even_without_a_known_shape(
    leaky_facts: WorkspaceFacts,
) -> None:
    digest = render_static_digest(leaky_facts, max_tokens=100_000)
    assert "`uv publish -p [REDACTED:random-string]`" in digest


def test_digest_is_byte_identical_in_separate_processes(
    leaky_repo: Path, leaky_facts: WorkspaceFacts, tmp_path: Path
) -> None:
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from promptkit.repofacts import render_static_digest, scan_workspace\n"
        "digest = render_static_digest(scan_workspace(sys.argv[1]))\n"
        "Path(sys.argv[2]).write_bytes(digest.encode('utf-8'))\n"
    )
    outputs = []
    for seed in ("1", "2"):
        output = tmp_path / f"digest-{seed}.md"
        subprocess.run(
            [sys.executable, "-c", program, str(leaky_repo), str(output)],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.append(output.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0] == render_static_digest(leaky_facts).encode("utf-8")


def test_digest_holds_no_absolute_path_or_timestamp(
    leaky_repo: Path, leaky_facts: WorkspaceFacts
) -> None:
    digest = render_static_digest(leaky_facts, max_tokens=100_000)
    assert str(leaky_repo) not in digest
    assert re.search(r"\d{4}-\d{2}-\d{2}", digest) is None


@settings(max_examples=150, deadline=None)
@given(budget=st.integers(min_value=0, max_value=1200))
def test_digest_never_exceeds_its_token_budget(leaky_facts: WorkspaceFacts, budget: int) -> None:
    digest = render_static_digest(leaky_facts, max_tokens=budget)
    assert estimate_tokens(digest) <= budget


# Text whose characters take one to four UTF-8 bytes each (`…` takes three, `🙂` four).
MULTI_BYTE_TEXT = st.text(alphabet=st.sampled_from("ab é…日本語🙂-_/.:`"), min_size=1, max_size=90)


@settings(max_examples=120, deadline=None)
@given(
    budget=st.integers(min_value=0, max_value=900),
    texts=st.lists(MULTI_BYTE_TEXT, min_size=1, max_size=30),
)
def test_the_budget_holds_by_utf8_bytes_for_multi_byte_text(
    leaky_facts: WorkspaceFacts, budget: int, texts: list[str]
) -> None:
    facts = replace(
        leaky_facts,
        commands=tuple(
            ToolCommand("test" if n % 2 else "lint", f"make {text}", "Makefile", detail=text)
            for n, text in enumerate(texts)
        ),
        projects=tuple(texts),
        watch_outs=tuple(WatchOut("AGENTS.md", f"Never {text}") for text in texts),
    )

    digest = render_static_digest(facts, max_tokens=budget)

    assert len(digest.encode("utf-8")) <= budget * 4
    assert estimate_tokens(digest) <= budget


@settings(max_examples=60, deadline=None)
@given(budget=st.integers(min_value=0, max_value=1200))
def test_smaller_budgets_keep_only_whole_lines_of_the_full_digest(
    leaky_facts: WorkspaceFacts, budget: int
) -> None:
    full_lines = set(render_static_digest(leaky_facts, max_tokens=100_000).splitlines())
    assert set(render_static_digest(leaky_facts, max_tokens=budget).splitlines()) <= full_lines


def test_a_tight_budget_keeps_the_file_count_and_first_test_command(
    leaky_facts: WorkspaceFacts,
) -> None:
    digest = render_static_digest(leaky_facts, max_tokens=80)
    assert digest.startswith("### Commands\n- Test: `make test`")
    assert "\n### Layout\n- 10 files" in digest


def test_a_budget_too_small_for_any_line_gives_an_empty_digest(
    leaky_facts: WorkspaceFacts,
) -> None:
    assert render_static_digest(leaky_facts, max_tokens=0) == ""


def test_a_negative_budget_is_refused(leaky_facts: WorkspaceFacts) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        render_static_digest(leaky_facts, max_tokens=-1)


def test_names_with_line_breaks_cannot_break_the_markdown(tmp_path: Path) -> None:
    write_tree(tmp_path, {"evil\n### Injected/x.txt": "x\n", "ok/y.txt": "y\n"})
    digest = render_static_digest(scan_workspace(tmp_path))
    assert re.findall(r"^### (.+)$", digest, re.MULTILINE) == ["Layout"]
    # The listing leaves a name with a line break out (and counts it), so it cannot be shown.
    assert "Injected" not in digest


def test_empty_workspace_digest_says_there_is_nothing(tmp_path: Path) -> None:
    assert render_static_digest(scan_workspace(tmp_path)) == (
        "### Layout\n- No readable text files"
    )


def test_top_level_directories_past_the_sixteenth_are_summed_up(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"dir{index:02}/file.txt": "x\n" for index in range(20)})
    digest = render_static_digest(scan_workspace(tmp_path))
    assert "- `dir15/` (1 file)" in digest
    assert "dir16" not in digest
    assert "- 4 more top-level directories with 4 files" in digest
