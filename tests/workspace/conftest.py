"""Fixtures for the workspace section tests: a host tree with every kind of file to leave out."""

from pathlib import Path
from typing import Any

import pytest

from promptkit.hostfiles import HOST_READER
from promptkit.prompt import Tool, ToolContext, ToolResult
from promptkit.workspace import WorkspaceSection

CONTEXT = ToolContext(prompt_ns="tests", prompt_key="workspace", call_id="call-1")


@pytest.fixture
def host_tree(tmp_path: Path) -> Path:
    """A plain directory: text files, a credential file, binaries, a huge file, bad symlinks."""
    root = tmp_path / "host"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "app.py").write_text("import os\n\n\ndef main():\n    print('hi')\n")
    (root / "src" / "pkg" / "util.py").write_text("def helper():\n    return 42\n")
    (root / "README.md").write_text("# Host tree\n\nRun `make test`.\n")
    (root / ".env").write_text("API_TOKEN=abc\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (root / "data.txt").write_bytes(b"text then \x00 a NUL byte")
    (root / "huge.log").write_text("x" * (2 * 1024 * 1024))
    (root / "latin1.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    (root / "passwd-link").symlink_to("/etc/passwd")
    (root / "etc-link").symlink_to("/etc")
    return root


def call(section: WorkspaceSection, name: str, **arguments: Any) -> ToolResult:
    """Run tool `name` of `section` the way an adapter does: validate, then run."""
    tool = tool_named(section, name)
    return tool.run(tool.parse_arguments(arguments), CONTEXT)


def tool_named(section: WorkspaceSection, name: str) -> Tool[Any]:
    return next(tool for tool in section.tools if tool.name == name)


def snapshot_tree(root: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of every entry under `root`, symlinks not followed."""
    found: dict[str, tuple[int, int]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        found[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns)
    return found


class CountingReader:
    """A WorkspaceReader that reads the host and records every path it was asked for, and
    how many bytes it was asked to read at most."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.limits: list[int] = []

    def read(self, root: Path, relative: str, *, limit: int) -> bytes:
        self.reads.append(relative)
        self.limits.append(limit)
        return HOST_READER.read(root, relative, limit=limit)
