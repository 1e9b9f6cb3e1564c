"""`promptkit mcp serve` as agents see it, through the SDK's own MCP client: over stdio and
Streamable HTTP (real subprocesses), and in-process for the finer behaviours.

The digest is the one `promptkit render` shows, with its freshness; the file tools refuse what
the VFS tools refuse, with the same words, and mask credentials; the server is read-only unless
started with --allow-writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client, MCPError

from promptkit.cli import main
from promptkit.digest import WorkspaceDigestSection, resolve_workspace_digest
from promptkit.discovery import bind_workspace
from promptkit.mcp import DIGEST_URI, ServeOptions, build_workspace_server
from promptkit.prompt import ToolContext
from promptkit.session import Session
from promptkit.workspace import HostMount, VfsWorkspaceSection

from ..conftest import git
from .conftest import SECRET, http_server, stdio_server, store_static_digest, within

EXPECTED_TOOLS = {
    "workspace_digest",
    "vfs_list_directory",
    "vfs_read_file",
    "vfs_glob",
    "vfs_grep",
    "refresh_workspace_digest",
}


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def lists_calls_and_reads(client: Client, workspace: Path) -> None:
    """What an agent does first: list the tools, call one, read the digest resource."""
    listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == EXPECTED_TOOLS
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in listed.tools)

    read = await client.call_tool("vfs_read_file", {"path": "/README.md"})
    assert not read.is_error
    assert "Run the tests with `make test`" in text_of(read)
    assert read.structured_content == {
        "path": "/README.md",
        "first_line": 1,
        "last_line": 3,
        "total_lines": 3,
    }

    resource = await client.read_resource(DIGEST_URI)
    (contents,) = resource.contents
    assert isinstance(contents, mcp_types.TextResourceContents)
    assert "origin: session" in contents.text
    assert "freshness: fresh" in contents.text
    assert contents.meta is not None
    facts = contents.meta["promptkit/digest"]
    assert (facts["origin"], facts["is_stale"]) == ("session", False)
    assert facts["workspace"] == str(workspace)


def test_the_sdk_client_over_stdio_lists_calls_and_reads_the_digest(
    workspace: Path, state_dir: Path
) -> None:
    store_static_digest(workspace, state_dir)

    async def session() -> None:
        async with Client(stdio_server(workspace, state_dir)) as client:
            await lists_calls_and_reads(client, workspace)

    within(session())


def test_the_sdk_client_over_streamable_http_lists_calls_and_reads_the_digest(
    workspace: Path, state_dir: Path
) -> None:
    store_static_digest(workspace, state_dir)

    async def session(url: str) -> None:
        async with Client(url) as client:
            await lists_calls_and_reads(client, workspace)

    with http_server(workspace, state_dir) as url:
        within(session(url))


REFUSED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("vfs_read_file", {"path": "../etc/passwd"}),
    ("vfs_read_file", {"path": "/src/../../etc/passwd"}),
    ("vfs_list_directory", {"path": "../"}),
    ("vfs_grep", {"pattern": "root", "path": "../../etc"}),
    ("vfs_glob", {"pattern": "*", "path": "/../.."}),
    ("vfs_read_file", {"path": "/outside-link.txt"}),
    ("vfs_list_directory", {"path": "/etc-link"}),
    ("vfs_read_file", {"path": "/etc-link/passwd"}),
    ("vfs_read_file", {"path": "/.env"}),
    ("vfs_read_file", {"path": "/etc/passwd"}),
]


def test_escapes_symlinks_out_and_credential_files_are_refused_as_the_vfs_tools_refuse_them(
    workspace: Path, state_dir: Path
) -> None:
    section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(workspace)])
    context = ToolContext(prompt_ns="tests", prompt_key="mcp", call_id="1")
    through_vfs = []
    for name, arguments in REFUSED_CALLS:
        tool = next(tool for tool in section.tools if tool.name == name)
        through_vfs.append(tool.run(tool.parse_arguments(arguments), context))

    async def through_mcp() -> list[mcp_types.CallToolResult]:
        async with Client(stdio_server(workspace, state_dir)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in REFUSED_CALLS]

    for (name, arguments), direct, served in zip(
        REFUSED_CALLS, through_vfs, within(through_mcp()), strict=True
    ):
        assert served.is_error == (not direct.success), (name, arguments)
        assert text_of(served) == direct.message, (name, arguments)
        assert "root:" not in text_of(served) and "abc123" not in text_of(served)
    assert not any(result.success for result in through_vfs)


def test_a_credential_planted_in_a_file_read_over_mcp_comes_back_masked(
    workspace: Path, state_dir: Path
) -> None:
    async def session() -> tuple[mcp_types.CallToolResult, mcp_types.CallToolResult]:
        async with Client(stdio_server(workspace, state_dir)) as client:
            read = await client.call_tool("vfs_read_file", {"path": "/src/demo/settings.py"})
            grep = await client.call_tool("vfs_grep", {"pattern": "api_key"})
            return read, grep

    read, grep = within(session())

    for result in (read, grep):
        assert not result.is_error
        assert SECRET.value not in text_of(result)
        assert "[REDACTED:" in text_of(result)
        assert "promptkit masked credentials in this result" in text_of(result)
    assert "DEBUG = True" in text_of(read)


def in_process(workspace: Path, state_dir: Path, **options: Any) -> Client:
    """The SDK's client on the server built in this process (no transport)."""
    return Client(
        build_workspace_server(
            ServeOptions(path=str(workspace), state_dir=str(state_dir), **options)
        )
    )


def test_the_digest_is_resolved_as_render_resolves_it(workspace: Path, state_dir: Path) -> None:
    store_static_digest(workspace, state_dir)
    bound = bind_workspace(
        str(workspace), prompt=None, state_dir=str(state_dir), overrides_dir=None
    )
    expected = resolve_workspace_digest(bound.prompt, overrides_store=bound.overrides)

    async def session() -> mcp_types.CallToolResult:
        async with in_process(workspace, state_dir) as client:
            return await client.call_tool("workspace_digest", {})

    result = within(session())

    assert text_of(result).endswith(expected.body)
    assert result.structured_content is not None
    assert result.structured_content["origin"] == "session"
    assert result.structured_content["session_id"] == bound.session.session_id


def test_a_commit_after_the_digest_makes_it_stale_and_says_why(
    workspace: Path, state_dir: Path
) -> None:
    store_static_digest(workspace, state_dir)
    (workspace / "src/demo/new.py").write_text("VALUE = 1\n", encoding="utf-8")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "new module")

    async def session() -> mcp_types.ReadResourceResult:
        async with in_process(workspace, state_dir) as client:
            return await client.read_resource(DIGEST_URI)

    (contents,) = within(session()).contents
    assert isinstance(contents, mcp_types.TextResourceContents) and contents.meta is not None
    facts = contents.meta["promptkit/digest"]
    assert facts["is_stale"] is True
    assert facts["stale_reason"]
    assert facts["freshness"].startswith("stale (")
    assert "refresh_workspace_digest" in facts["hint"]


def test_without_a_stored_digest_the_placeholder_is_served_with_a_hint(
    workspace: Path, state_dir: Path
) -> None:
    async def session() -> mcp_types.CallToolResult:
        async with in_process(workspace, state_dir) as client:
            return await client.call_tool("workspace_digest", {})

    result = within(session())

    assert result.structured_content is not None
    assert result.structured_content["origin"] == "placeholder"
    assert "No workspace digest is available yet" in text_of(result)
    assert "call refresh_workspace_digest" in text_of(result)


def test_a_read_only_server_returns_a_refreshed_digest_without_storing_it(
    workspace: Path, state_dir: Path
) -> None:
    async def session() -> tuple[mcp_types.CallToolResult, mcp_types.CallToolResult]:
        async with in_process(workspace, state_dir) as client:
            refreshed = await client.call_tool("refresh_workspace_digest", {})
            return refreshed, await client.call_tool("workspace_digest", {})

    refreshed, digest = within(session())

    assert not refreshed.is_error
    assert refreshed.structured_content is not None
    assert refreshed.structured_content["stored"] is False
    assert "make test" in refreshed.structured_content["digest"]
    assert digest.structured_content is not None
    assert digest.structured_content["origin"] == "placeholder"
    assert not state_dir.exists()


def test_with_allow_writes_the_refreshed_digest_is_stored_and_served(
    workspace: Path, state_dir: Path
) -> None:
    async def session() -> tuple[list[mcp_types.Tool], mcp_types.CallToolResult]:
        async with in_process(workspace, state_dir, allow_writes=True) as client:
            listed = (await client.list_tools()).tools
            await client.call_tool("refresh_workspace_digest", {})
            return listed, await client.call_tool("workspace_digest", {})

    listed, digest = within(session())

    refresh = next(tool for tool in listed if tool.name == "refresh_workspace_digest")
    assert refresh.annotations is not None and refresh.annotations.read_only_hint is False
    assert digest.structured_content is not None
    assert digest.structured_content["origin"] == "session"
    assert digest.structured_content["is_stale"] is False
    bound = bind_workspace(
        str(workspace), prompt=None, state_dir=str(state_dir), overrides_dir=None
    )
    assert bound.stored_session is not None


def test_an_unknown_tool_is_a_protocol_error(workspace: Path, state_dir: Path) -> None:
    async def session() -> MCPError:
        async with in_process(workspace, state_dir) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("vfs_write_file", {"path": "/x", "content": "y"})
            return raised.value

    error = within(session())

    assert error.code == mcp_types.INVALID_PARAMS
    assert "unknown tool 'vfs_write_file'" in error.message


def test_arguments_that_do_not_match_the_schema_are_a_tool_error(
    workspace: Path, state_dir: Path
) -> None:
    async def session() -> mcp_types.CallToolResult:
        async with in_process(workspace, state_dir) as client:
            return await client.call_tool("vfs_read_file", {"path": "/README.md", "limit": 0})

    result = within(session())

    assert result.is_error
    assert "limit" in text_of(result)


TRIAGE_PROMPTS = """\
from dataclasses import dataclass

from promptkit import MarkdownSection, Prompt, WorkspaceDigestSection


@dataclass(frozen=True)
class Ticket:
    title: str
    priority: int = 3


def triage(session, workspace):
    return Prompt(
        ns="team",
        key="triage",
        sections=(
            MarkdownSection(
                title="Ticket",
                key="ticket",
                template="{{ title }} (priority {{ priority }})",
                params_type=Ticket,
            ),
            WorkspaceDigestSection(session=session),
        ),
    )
"""


def test_the_projects_prompts_are_served_rendered_with_validated_params(
    workspace: Path, state_dir: Path
) -> None:
    store_static_digest(workspace, state_dir)
    (workspace / "mcp_triage_prompts.py").write_text(TRIAGE_PROMPTS, encoding="utf-8")
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8")
        + '\n[tool.promptkit]\nprompts = ["mcp_triage_prompts:triage"]\n',
        encoding="utf-8",
    )

    async def session() -> tuple[mcp_types.ListPromptsResult, mcp_types.GetPromptResult, MCPError]:
        async with Client(stdio_server(workspace, state_dir)) as client:
            listed = await client.list_prompts()
            got = await client.get_prompt("team/triage", {"title": "Login fails", "priority": "1"})
            with pytest.raises(MCPError) as refused:
                await client.get_prompt("team/triage", {"priority": "high"})
            return listed, got, refused.value

    listed, got, refused = within(session())

    (prompt,) = listed.prompts
    assert prompt.name == "team/triage"
    assert {(a.name, a.required) for a in prompt.arguments or []} == {
        ("title", True),
        ("priority", False),
    }
    (message,) = got.messages
    assert message.content.type == "text"
    assert "Login fails (priority 1)" in message.content.text
    assert "make test" in message.content.text  # the stored digest, as `render` shows it
    assert "priority" in refused.message and "title" in refused.message


def store_operator_override(workspace: Path, state_dir: Path, body: str) -> Path:
    """An operator's override of the workspace prompt's digest section, as `promptkit
    overrides` stores it; the file it is in."""
    bound = bind_workspace(
        str(workspace), prompt=None, state_dir=str(state_dir), overrides_dir=None
    )
    section = bound.prompt.find_section(WorkspaceDigestSection)
    assert section is not None
    path = bound.prompt.path_of(section)
    assert path is not None
    bound.overrides.set_section_override(bound.prompt, path=path, body=body)
    (stored,) = (workspace / "overrides").rglob("*.toml")
    return stored


def test_an_operators_override_is_served_with_its_origin_and_its_credentials_masked(
    workspace: Path, state_dir: Path
) -> None:
    stored = store_operator_override(workspace, state_dir, "Run `make test`.\n")
    # Typed in by hand: the store refuses to write a credential, `overrides check` flags it,
    # and a render would still apply it.
    text = stored.read_text(encoding="utf-8")
    stored.write_text(text.replace("`.", f"`. {SECRET.value}"), encoding="utf-8")

    async def session() -> tuple[mcp_types.CallToolResult, mcp_types.ReadResourceResult]:
        async with in_process(workspace, state_dir) as client:
            tool = await client.call_tool("workspace_digest", {})
            return tool, await client.read_resource(DIGEST_URI)

    tool, resource = within(session())

    (contents,) = resource.contents
    assert isinstance(contents, mcp_types.TextResourceContents)
    assert contents.text == text_of(tool)
    assert "origin: override" in contents.text and "Run `make test`." in contents.text
    assert SECRET.value not in contents.text and "[REDACTED:" in contents.text
    assert tool.structured_content is not None
    assert tool.structured_content["freshness"].startswith("unknown (")


def test_a_session_digest_that_hides_an_override_names_it(workspace: Path, state_dir: Path) -> None:
    store_operator_override(workspace, state_dir, "Run `make test`.\n")
    store_static_digest(workspace, state_dir)

    async def session() -> mcp_types.CallToolResult:
        async with in_process(workspace, state_dir) as client:
            return await client.call_tool("workspace_digest", {})

    facts = within(session()).structured_content

    assert facts is not None
    assert facts["origin"] == "session"
    assert facts["shadowed_override"]


def test_a_call_runs_with_the_servers_call_timeout_as_its_deadline(
    workspace: Path, state_dir: Path
) -> None:
    server = build_workspace_server(
        ServeOptions(path=str(workspace), state_dir=str(state_dir)), call_timeout_s=1e-9
    )

    async def session() -> mcp_types.CallToolResult:
        async with Client(server) as client:
            return await client.call_tool("vfs_grep", {"pattern": "make test"})

    result = within(session())

    assert result.is_error
    assert "vfs_grep stopped after 0s" in text_of(result)


def test_a_global_digest_is_served_as_a_shared_override_with_its_freshness(
    workspace: Path, state_dir: Path
) -> None:
    optimize = ["optimize", str(workspace), "--provider", "static", "--scope", "global"]
    assert main([*optimize, "--state-dir", str(state_dir)]) == 0

    async def session() -> mcp_types.CallToolResult:
        async with in_process(workspace, state_dir) as client:
            return await client.call_tool("workspace_digest", {})

    facts = within(session()).structured_content

    assert facts is not None
    assert (facts["origin"], facts["freshness"], facts["is_stale"]) == (
        "shared-override",
        "fresh",
        False,
    )
