"""`promptkit optimize` and `promptkit render` end to end, as real subprocesses in a real git
repository, with no API key in the environment (so `auto` means the static optimizer); and the
progress display, fed by a real optimization run against FakeProviderServer."""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from promptkit.adapters import ProviderAdapter, TokenUsage
from promptkit.cli import main
from promptkit.discovery import bind_workspace
from promptkit.optimize import choose_digest_writer, optimize_workspace_digest
from promptkit.repl import Progress
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from ..conftest import PROVIDER_ENV_KEYS, git, offline_env, run_promptkit
from .conftest import make_prompt

FACTORY_MODULE = """\
from promptkit.digest import WorkspaceDigestSection
from promptkit.prompt import Prompt, TextSection
from promptkit.workspace import HostMount, VfsWorkspaceSection


def build(session, workspace):
    return Prompt(
        ns="team",
        key="triage",
        sections=(
            TextSection(title="Role", key="role", text="You triage issues."),
            VfsWorkspaceSection(session=session, mounts=[HostMount(workspace)]),
            WorkspaceDigestSection(session=session, key="repo-digest"),
        ),
    )


def of_src(session, workspace):
    return Prompt(
        ns="team",
        key="src",
        sections=(
            VfsWorkspaceSection(session=session, mounts=[HostMount(workspace / "src")]),
            WorkspaceDigestSection(session=session),
        ),
    )


def without_digest(session, workspace):
    return Prompt(
        ns="team",
        key="bare",
        sections=(VfsWorkspaceSection(session=session, mounts=[HostMount(workspace)]),),
    )
"""


def promptkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m promptkit` offline, with its default state home inside `cwd`."""
    env = {**offline_env(), "PROMPTKIT_HOME": str(cwd / "promptkit-home")}
    return run_promptkit(*args, cwd=cwd, env=env)


def digest_part(stdout: str) -> str:
    """The digest `optimize` printed: everything before the line saying where it was stored."""
    return stdout.split("\nstored the ", 1)[0].strip()


def test_static_optimize_then_render_shows_the_digest(repo: Path, tmp_path: Path) -> None:
    optimized = promptkit("optimize", str(repo), "--state-dir", "state", cwd=tmp_path)
    rendered = promptkit("render", "--workspace", str(repo), "--state-dir", "state", cwd=tmp_path)

    assert optimized.returncode == 0, optimized.stderr
    digest = digest_part(optimized.stdout)
    assert "make test" in digest
    assert "(session scope)" in optimized.stdout
    assert rendered.returncode == 0, rendered.stderr
    assert digest in rendered.stdout
    assert "workspace digest from the session" in rendered.stderr


def test_auto_says_it_chose_the_static_optimizer_in_plain_progress_lines(
    repo: Path, tmp_path: Path
) -> None:
    optimized = promptkit("optimize", str(repo), "--state-dir", "state", cwd=tmp_path)

    assert optimized.returncode == 0, optimized.stderr
    assert "auto chose the static optimizer" in optimized.stderr
    assert "done: 0 tool calls" in optimized.stderr
    assert "\x1b" not in optimized.stderr


def test_global_scope_writes_the_shared_override_file(repo: Path, tmp_path: Path) -> None:
    optimized = promptkit(
        "optimize", str(repo), "--scope", "global", "--tag", "v2", "--state-dir", "state",
        cwd=tmp_path,
    )  # fmt: skip
    rendered = promptkit(
        "render", "--workspace", str(repo), "--tag", "v2", "--state-dir", "state", cwd=tmp_path
    )

    assert optimized.returncode == 0, optimized.stderr
    shared_file = repo / "overrides" / "_shared" / "workspace-digest" / "v2.toml"
    assert str(shared_file) in optimized.stdout
    assert 'source = "optimizer"' in shared_file.read_text(encoding="utf-8")
    assert not (repo / "overrides" / "promptkit" / "workspace" / "v2.toml").exists()
    assert digest_part(optimized.stdout) in rendered.stdout
    assert "workspace digest from the shared-override" in rendered.stderr


def test_global_scope_replaces_an_operator_digest_only_with_force(
    repo: Path, tmp_path: Path
) -> None:
    global_run = ("optimize", str(repo), "--scope", "global", "--state-dir", "state")
    assert promptkit(*global_run, cwd=tmp_path).returncode == 0
    shared_file = repo / "overrides" / "_shared" / "workspace-digest" / "latest.toml"
    curated = shared_file.read_text(encoding="utf-8").replace("## ", "## Curated ", 1)
    shared_file.write_text(curated, encoding="utf-8")

    refused = promptkit(*global_run, cwd=tmp_path)
    forced = promptkit(*global_run, "--force", cwd=tmp_path)

    assert refused.returncode != 0
    assert "an operator wrote" in refused.stderr and "--force" in refused.stderr
    assert forced.returncode == 0, forced.stderr
    assert "## Curated" not in shared_file.read_text(encoding="utf-8")


def test_output_dir_receives_the_workspace_manifest_and_the_run_record(
    repo: Path, tmp_path: Path
) -> None:
    optimized = promptkit(
        "optimize", str(repo), "--state-dir", "state", "--output-dir", "out", cwd=tmp_path
    )

    assert optimized.returncode == 0, optimized.stderr
    workspace = json.loads((tmp_path / "out" / "workspace.manifest.json").read_text("utf-8"))
    assert workspace["strategy"] == "existing"
    assert workspace["head_sha"] == git(repo, "rev-parse", "HEAD")
    assert workspace["ref"] == "main"
    assert (workspace["has_history"], workspace["is_shallow"]) == (True, False)
    assert workspace["created_at"].endswith("Z")
    record = json.loads((tmp_path / "out" / "manifest.json").read_text("utf-8"))
    assert (record["status"], record["outcome"]) == ("completed", "success")
    assert record["duration"].endswith("s")
    assert "workspace.manifest.json" in record["artifacts"]
    assert record["metadata"]["provider"] == "static"
    assert "error" not in record


def test_a_factory_named_by_module_attr_is_called_with_the_session_and_workspace(
    repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "team_prompts.py").write_text(FACTORY_MODULE, encoding="utf-8")

    optimized = promptkit(
        "optimize", str(repo), "--prompt", "team_prompts:build", "--state-dir", "state",
        cwd=tmp_path,
    )  # fmt: skip
    rendered = promptkit(
        "render", "--workspace", str(repo), "--prompt", "team_prompts:build",
        "--state-dir", "state", cwd=tmp_path,
    )  # fmt: skip

    assert optimized.returncode == 0, optimized.stderr
    assert "'repo-digest' digest" in optimized.stdout
    assert digest_part(optimized.stdout) in rendered.stdout


def test_a_prompt_without_a_digest_section_is_refused_and_no_session_is_stored(
    repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "team_prompts.py").write_text(FACTORY_MODULE, encoding="utf-8")

    optimized = promptkit(
        "optimize", str(repo), "--prompt", "team_prompts:without_digest",
        "--state-dir", "state", cwd=tmp_path,
    )  # fmt: skip

    assert optimized.returncode == 2
    assert "has no WorkspaceDigestSection" in optimized.stderr
    assert "Traceback" not in optimized.stderr
    assert not (tmp_path / "state").exists()


def test_a_path_that_does_not_exist_is_a_clear_error_with_exit_status_2(tmp_path: Path) -> None:
    optimized = promptkit("optimize", str(tmp_path / "missing"), cwd=tmp_path)

    assert optimized.returncode == 2
    assert "does not exist" in optimized.stderr
    assert "Traceback" not in optimized.stderr


def test_progress_shows_each_tool_call_of_a_run_as_it_happens(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    stream = io.StringIO()
    progress = Progress(stream, live=False)
    session, run_session = Session(), Session()
    run_session.subscribe(progress.on_event)
    server.enqueue(
        Reply.tool_calls(
            ToolCall("planning_setup_plan", {"objective": "Describe", "steps": ["layout"]}),
            ToolCall("vfs_read_file", {"path": "/README.md"}),
        ),
        Reply.json({"digest": "## Layout\n- README.md"}),
    )

    openai_adapter.optimize(
        make_prompt(session, repo), session=session, optimization_session=run_session
    )
    progress.done(2, TokenUsage(input_tokens=20, output_tokens=10, unpriced=1))

    lines = stream.getvalue().splitlines()
    assert [line.split("] ", 1)[1].split(" {")[0] for line in lines[:2]] == [
        "tool 1: planning_setup_plan",
        "tool 2: vfs_read_file",
    ]
    assert '"path": "/README.md"' in lines[1]
    assert " ok (" in lines[1]
    assert lines[2].endswith("done: 2 tool calls, 20 input / 10 output tokens, 1 unpriced")
    assert "\x1b" not in stream.getvalue()


def test_live_progress_redraws_a_status_line_between_tool_calls() -> None:
    stream = io.StringIO()
    progress = Progress(stream, live=True)

    progress.say("optimizing")
    progress.end_status()

    assert stream.getvalue().count("\r\x1b[K") == 2
    assert "waiting for the model: 0 replies" in stream.getvalue()


@pytest.fixture
def digest_server(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> FakeProviderServer:
    """The fake provider answering every request with a digest, and no provider key set: the
    command's `--base-url` makes `auto` choose it."""
    for name in PROVIDER_ENV_KEYS:
        monkeypatch.delenv(name, raising=False)
    server.respond_with(lambda request: Reply.json({"digest": "## Layout\n- src/"}))
    return server


def served_model(server: FakeProviderServer) -> tuple[str, ...]:
    return ("--base-url", server.openai_base_url, "--model", "served-model")


def optimize_as_a_library(
    repo: Path,
    state: Path,
    server: FakeProviderServer,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> None:
    """What the command does for `repo`, called in-process: the workspace is listed here."""
    bound = bind_workspace(str(repo), prompt=None, state_dir=str(state), overrides_dir=None)
    choice = choose_digest_writer("auto", model="served-model", base_url=server.openai_base_url)
    optimize_workspace_digest(
        choice.writer,
        bound.prompt,
        session=bound.session,
        overrides_store=bound.overrides,
        include=include,
        exclude=exclude,
        leave_out=bound.sessions.state_folders,
    )


def test_a_model_run_of_the_command_sends_the_first_request_the_library_sends(
    repo: Path,
    tmp_path: Path,
    digest_server: FakeProviderServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The command lists the workspace in a helper process; the library lists it in-process.
    state = str(tmp_path / "command-state")
    assert main(["optimize", str(repo), *served_model(digest_server), "--state-dir", state]) == 0
    optimize_as_a_library(repo, tmp_path / "library-state", digest_server)

    by_command, by_library = digest_server.requests
    capsys.readouterr()
    assert "Mounted directories" in by_command.body["messages"][0]["content"]
    assert by_command.raw_body == by_library.raw_body


def test_a_model_run_of_the_command_with_globs_counts_the_files_the_library_counts(
    repo: Path,
    tmp_path: Path,
    digest_server: FakeProviderServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The helper counts the narrowed files ahead of listing them; the library narrows here.
    globs = ("--include", "src/**", "--include", "tests/**", "--exclude", "tests")
    state = str(tmp_path / "command-state")
    command = ["optimize", str(repo), *served_model(digest_server), "--state-dir", state]
    assert main([*command, *globs]) == 0
    optimize_as_a_library(
        repo,
        tmp_path / "library-state",
        digest_server,
        include=["src/**", "tests/**"],
        exclude=["tests"],
    )

    by_command, by_library = digest_server.requests
    capsys.readouterr()
    assert "- `/`: 2 files," in by_command.body["messages"][0]["content"]
    assert by_command.raw_body == by_library.raw_body


def test_a_model_run_of_the_command_reads_the_files_its_helper_listed(
    repo: Path,
    tmp_path: Path,
    digest_server: FakeProviderServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The first request goes out on the helper's counts; the files come when a tool needs one.
    digest_server.enqueue(
        Reply.tool_calls(
            ToolCall("vfs_glob", {"pattern": "src/**/*.py"}),
            ToolCall("vfs_read_file", {"path": "/README.md"}),
        )
    )
    state = str(tmp_path / "state")

    assert main(["optimize", str(repo), *served_model(digest_server), "--state-dir", state]) == 0

    capsys.readouterr()
    tool_results = json.dumps(digest_server.requests[1].body["messages"][-2:])
    assert "/src/demo/cli.py" in tool_results
    assert "Run the tests with `make test`" in tool_results


def test_a_model_run_whose_prompt_mounts_another_folder_describes_that_folder(
    repo: Path,
    tmp_path: Path,
    digest_server: FakeProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The command's listing helper lists PATH; the prompt mounts PATH/src, listed in-process.
    (tmp_path / "src_prompts.py").write_text(FACTORY_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    prompt = ("--prompt", "src_prompts:of_src", "--state-dir", str(tmp_path / "state"))
    digest_server.respond_with(lambda request: Reply.json({"digest": "## Layout\n- `demo/`"}))

    assert main(["optimize", str(repo), *served_model(digest_server), *prompt]) == 0

    (request,) = digest_server.requests
    capsys.readouterr()
    assert "- `/`: 2 files," in request.body["messages"][0]["content"]
