"""Runs the ```python snippets of every docs/*.md guide, so the guides cannot drift from the code.

All blocks of one file run in order in one fresh namespace, inside a temporary working
directory. A failing block is reported with its file and the line its fence opens on, and
tracebacks point at lines of the markdown file itself.
"""

import re
import sys
import traceback
import types
from pathlib import Path

import pytest

from promptkit.testing import PostgresServer

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
# Three or more backticks, closed by the same fence (as in CommonMark), so a snippet can hold a
# line of ``` when its own fence is longer.
PYTHON_BLOCK = re.compile(
    r"^(?P<fence>`{3,})python[ \t]*\n(?P<code>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL
)


class SnippetError(AssertionError):
    """A documentation snippet raised; the message names the file and the block's line."""


def python_blocks(text: str) -> list[tuple[int, str]]:
    """Each ```python block as (line number of its opening fence, code), in file order."""
    return [
        (text.count("\n", 0, match.start()) + 1, match.group("code"))
        for match in PYTHON_BLOCK.finditer(text)
    ]


def run_python_blocks(path: Path, monkeypatch: pytest.MonkeyPatch, workdir: Path) -> int:
    """Run every python block of `path` in one namespace inside `workdir`; return the count."""
    monkeypatch.chdir(workdir)
    # A real module object, registered in sys.modules, so dataclasses, pydantic and
    # typing.get_type_hints can resolve names defined by the snippets.
    module_name = "docs_snippets_" + re.sub(r"\W", "_", path.stem)
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    monkeypatch.setitem(sys.modules, module_name, module)
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    for fence_line, code in blocks:
        # Padding with newlines makes traceback line numbers those of the markdown file.
        source = "\n" * fence_line + code
        try:
            exec(compile(source, str(path), "exec"), module.__dict__)
        except Exception as error:
            raise SnippetError(
                f"{path.name}: python block at line {fence_line} failed:"
                f" {type(error).__name__}: {error}\n{traceback.format_exc()}"
            ) from error
    return len(blocks)


@pytest.mark.parametrize("path", DOCS, ids=[path.name for path in DOCS])
def test_guide_snippets_run(path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if path.name == "database.md" and PostgresServer.binaries() is None:
        pytest.skip("no PostgreSQL server binaries on this machine: its snippets start a server")
    assert run_python_blocks(path, monkeypatch, tmp_path) > 0, f"{path.name} has no python block"


def test_snippets_of_one_file_share_a_namespace_and_run_in_the_temporary_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    guide = tmp_path / "guide.md"
    guide.write_text(
        "# Guide\n\n```python\nfrom pathlib import Path\nvalue = 41\n```\n\n"
        "```text\nnot python\n```\n\n"
        "```python\nPath('out.txt').write_text(str(value + 1))\n```\n",
        encoding="utf-8",
    )
    workdir = tmp_path / "work"
    workdir.mkdir()

    assert run_python_blocks(guide, monkeypatch, workdir) == 2
    assert (workdir / "out.txt").read_text() == "42"


def test_a_longer_fence_holds_a_line_of_three_backticks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    code = "reply = '''\n```json\n{}\n```\n'''\nassert reply.count('`' * 3) == 2\n"
    guide = tmp_path / "fences.md"
    guide.write_text(f"# Fences\n\n````python\n{code}````\n", encoding="utf-8")

    assert python_blocks(guide.read_text(encoding="utf-8")) == [(3, code)]
    assert run_python_blocks(guide, monkeypatch, tmp_path) == 1


def test_failing_snippet_is_reported_with_its_file_and_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    guide = tmp_path / "broken.md"
    guide.write_text(
        "# Broken\n\n```python\nok = True\n```\n\nSome prose.\n\n"
        "```python\n\nraise KeyError('x')\n```\n",
        encoding="utf-8",
    )

    with pytest.raises(SnippetError) as raised:
        run_python_blocks(guide, monkeypatch, tmp_path)

    message = str(raised.value)
    assert "broken.md: python block at line 9 failed: KeyError" in message
    assert f'File "{guide}", line 11' in message
