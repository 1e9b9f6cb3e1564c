"""Every command reads the project's `[tool.promptkit]` table the same way: run from a folder
deep inside the project with no option at all, each finds the same overrides folder, tag,
state folder and workspace, and so the same digest, and runs the application the table names
(`app`, bound from the same table).

The project keeps its overrides, state and repository in folders of its own (none of them the
current folder), serves the tag `prod`, and lists its prompt; a GLOBAL optimize writes the
shared digest, then every command is run as a real process, the MCP server through the SDK's
client.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from ..conftest import REPO_FILES, committed_repo, offline_env, run_promptkit
from ..mcp_protocol.conftest import within

PROMPTS_MODULE = """
from promptkit import App, Prompt, Session, TextSection, WorkspaceDigestSection


def review(session: Session, workspace: object) -> Prompt[None]:
    return Prompt(
        ns="shop",
        key="review",
        sections=(
            TextSection(title="Role", key="role", text="You review the shop."),
            WorkspaceDigestSection(session=session),
        ),
    )


app = App.from_project()
"""

TABLE = """
[tool.promptkit]
overrides = "ops/overrides"
tag = "prod"
state = "ops/state"
workspace = "repo"
prompts = ["shop_prompts:review"]
app = "shop_prompts:app"
provider = "static"
"""


@dataclass(frozen=True)
class Project:
    root: Path
    cwd: Path
    digest: str

    @property
    def shared_file(self) -> Path:
        return self.root / "ops" / "overrides" / "_shared" / "workspace-digest" / "prod.toml"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = tmp_path_factory.mktemp("binding") / "project"
    committed_repo(root / "repo", REPO_FILES)
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\n' + TABLE, encoding="utf-8")
    (root / "shop_prompts.py").write_text(PROMPTS_MODULE, encoding="utf-8")
    cwd = root / "repo" / "src" / "demo"
    optimized = run_promptkit("optimize", "--scope", "global", "--json", cwd=cwd)
    assert optimized.returncode == 0, optimized.stderr
    report = json.loads(optimized.stdout)
    project = Project(root=root, cwd=cwd, digest=report["digest"])
    assert report["stored_in"] == [str(project.shared_file)]
    return project


def _render(project: Project) -> str:
    completed = run_promptkit("render", cwd=project.cwd)
    assert completed.returncode == 0, completed.stderr
    assert "workspace digest from the shared-override" in completed.stderr
    return completed.stdout


def _digest_status(project: Project) -> str:
    completed = run_promptkit("digest", "status", "--json", cwd=project.cwd)
    assert completed.returncode == 0, completed.stderr
    status = json.loads(completed.stdout)
    assert status["origin"] == "shared-override"
    assert status["workspace"] == str(project.root / "repo")
    return project.digest


def _digest_export(project: Project) -> str:
    completed = run_promptkit("digest", "export", cwd=project.cwd)
    assert completed.returncode == 0, completed.stderr
    return (project.root / "repo" / "AGENTS.md").read_text(encoding="utf-8")


def _repl(project: Project) -> str:
    completed = run_promptkit("repl", cwd=project.cwd, stdin="digest\n")
    assert completed.returncode == 0, completed.stderr
    assert f"origin:    shared override ({project.shared_file})" in completed.stdout
    return completed.stdout


def _overrides_list(project: Project) -> str:
    completed = run_promptkit("overrides", "list", "--json", cwd=project.cwd)
    assert completed.returncode == 0, completed.stderr
    listing = json.loads(completed.stdout)
    assert listing["overrides_dir"] == str(project.root / "ops" / "overrides")
    [shared] = listing["files"]
    assert (shared["kind"], shared["tag"], shared["file"]) == (
        "shared",
        "prod",
        str(project.shared_file),
    )
    return project.digest


def _overrides_show(project: Project) -> str:
    completed = run_promptkit(
        "overrides", "show", "--prompt", "shop_prompts:review", "--json", cwd=project.cwd
    )
    assert completed.returncode == 0, completed.stderr
    shown = json.loads(completed.stdout)
    assert (shown["file"], shown["tag"]) == (
        str(project.root / "ops" / "overrides" / "shop" / "review" / "prod.toml"),
        "prod",
    )
    return project.digest


def _eval(project: Project) -> str:
    # The fake model answers "seen" only to a request that carries the digest.
    marker = project.digest.splitlines()[1]
    script = project.root / "replies.json"
    script.write_text(
        json.dumps({"rules": [{"when": [marker], "text": "seen"}, {"text": "not seen"}]}),
        encoding="utf-8",
    )
    (project.root / "evals").mkdir(exist_ok=True)
    (project.root / "evals" / "review.jsonl").write_text(
        '{"id": "digest", "expected": "seen"}\n', encoding="utf-8"
    )
    completed = run_promptkit(
        "eval",
        "shop_prompts:review",
        "--provider",
        "fake",
        "--script",
        str(script),
        "--json",
        cwd=project.cwd,
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    [result] = report["results"]
    assert (result["override_tag"], result["text"], result["score"]) == ("prod", "seen", 1.0)
    return project.digest


def _mcp_serve(project: Project) -> str:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "promptkit", "mcp", "serve"],
        cwd=project.cwd,
        env=offline_env(),
    )

    async def digest() -> str:
        async with Client(server) as client:
            result = await client.call_tool("workspace_digest", {})
        return "\n".join(block.text for block in result.content if block.type == "text")

    text = within(digest())
    assert "origin: shared-override" in text
    return text


COMMANDS: dict[str, Callable[[Project], str]] = {
    "render": _render,
    "digest status": _digest_status,
    "digest export": _digest_export,
    "repl": _repl,
    "overrides list": _overrides_list,
    "overrides show": _overrides_show,
    "eval": _eval,
    "mcp serve": _mcp_serve,
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_finds_the_projects_overrides_and_digest_from_inside_it(
    project: Project, command: str
) -> None:
    assert project.digest in COMMANDS[command](project)


def test_a_flag_wins_over_the_table(project: Project, tmp_path: Path) -> None:
    completed = run_promptkit(
        "digest", "status", "--json", "--overrides-dir", str(tmp_path), cwd=project.cwd
    )

    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["origin"] == "placeholder"


def test_an_unknown_key_stops_every_command_naming_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.promptkit]\noveride = 'x'\n")

    for words in (("render",), ("overrides", "list"), ("eval", "m:p")):
        completed = subprocess.run(
            [sys.executable, "-m", "promptkit", *words],
            cwd=tmp_path,
            env=offline_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        assert completed.returncode == 2, (words, completed.stderr)
        assert "unknown key 'overide'" in completed.stderr
