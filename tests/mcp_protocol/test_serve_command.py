"""`promptkit mcp serve` refuses what it cannot serve with one line and an exit status, before
anything is served, and never writes to stdout (the stdio protocol channel) when it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptkit.cli import main

from ..conftest import run_promptkit


@pytest.mark.parametrize("address", ["0.0.0.0:8765", "192.0.2.7:8765", "example.com:80"])
def test_http_listens_on_loopback_only(address: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["mcp", "serve", ".", "--http", address])

    assert exited.value.code == 2
    assert "is not a loopback address" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["8765", "localhost:port", "127.0.0.1:70000"])
def test_an_address_that_is_not_host_and_port_is_a_usage_error(
    address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["mcp", "serve", ".", "--http", address])

    assert exited.value.code == 2
    assert "is not HOST:PORT" in capsys.readouterr().err


def test_a_missing_workspace_is_one_line_on_stderr_and_nothing_on_stdout(tmp_path: Path) -> None:
    completed = run_promptkit("mcp", "serve", str(tmp_path / "missing"), cwd=tmp_path)

    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.count("\n") == 1
    assert "does not exist" in completed.stderr


def test_a_prompt_without_a_digest_section_is_refused_before_serving(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "mcp_plain_prompts.py").write_text(
        "from promptkit.prompt import Prompt, TextSection\n\n"
        'PLAIN = Prompt(ns="team", key="plain", sections=(TextSection(title="Role",'
        ' key="role", text="Help."),))\n',
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(repo))

    status = main(["mcp", "serve", str(repo), "--prompt", "mcp_plain_prompts:PLAIN"])

    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert "team/plain has no WorkspaceDigestSection" in captured.err
