"""The package surface: `import promptkit` stays light, every exported name resolves, and the
`promptkit` command answers `--version` and `--help`.

Import weight is checked by which modules get imported, never by timing; the measured
`-X importtime` figure is printed for the record.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import promptkit

HEAVY_MODULES = frozenset({"openai", "anthropic", "pydantic", "pydantic_core", "jinja2", "httpx"})


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, check=False, timeout=60
    )


def _top_level_modules_after(statement: str) -> set[str]:
    completed = _python(
        "-c", f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    )
    assert completed.returncode == 0, completed.stderr
    return {name.split(".")[0] for name in json.loads(completed.stdout)}


def test_import_promptkit_imports_no_provider_sdk_pydantic_or_jinja2() -> None:
    loaded = _top_level_modules_after("import promptkit")

    assert "promptkit" in loaded
    assert loaded & HEAVY_MODULES == set()


def test_importing_the_error_classes_stays_light() -> None:
    loaded = _top_level_modules_after("from promptkit import PromptkitError, OutputParseError")

    assert loaded & HEAVY_MODULES == set()


def test_touching_a_prompt_name_loads_the_prompt_core_without_pydantic_or_jinja2() -> None:
    loaded = _top_level_modules_after("import promptkit\npromptkit.Prompt")

    assert loaded & HEAVY_MODULES == set()


# A prompt of the built-in tool sections with a structured output, built and read as
# `promptkit overrides list` reads it (section hashes), then one of its tools called.
BUILT_PROMPT = """
from dataclasses import dataclass
from pathlib import Path
from promptkit import (HostMount, PlanningToolsSection, Prompt, Session, TextSection,
    VfsWorkspaceSection, WorkspaceDigestSection)
@dataclass(frozen=True)
class Answer:
    text: str
session = Session()
prompt = Prompt(ns="tests", key="built", output_type=Answer, sections=(
    TextSection(title="Role", key="role", text="Answer."),
    VfsWorkspaceSection(session=session, mounts=[HostMount(Path.cwd())]),
    PlanningToolsSection(session=session),
    WorkspaceDigestSection(session=session),
))
hashes = [section.content_hash for _, section in prompt.iter_sections()]
"""


def test_building_a_prompt_of_the_built_in_tool_sections_imports_no_pydantic() -> None:
    loaded = _top_level_modules_after(BUILT_PROMPT)

    assert loaded & HEAVY_MODULES == set()


def test_pydantic_is_imported_when_a_built_in_tool_is_first_called() -> None:
    tool = "prompt.find_section(PlanningToolsSection).tools[0]"
    call = f"{tool}.parse_arguments({{'objective': 'o', 'steps': ['s']}})"
    loaded = _top_level_modules_after(f"{BUILT_PROMPT}\n{call}")

    assert "pydantic" in loaded


def test_import_promptkit_pulls_no_heavy_module_per_importtime() -> None:
    completed = _python("-X", "importtime", "-c", "import promptkit")
    assert completed.returncode == 0, completed.stderr
    # Lines look like "import time:  self [us] | cumulative | imported package".
    rows = [
        [cell.strip() for cell in line.removeprefix("import time:").split("|")]
        for line in completed.stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    ]
    imported = {package for _, _, package in rows}
    cumulative_us = next(int(total) for _, total, package in rows if package == "promptkit")

    print(f"import promptkit: {cumulative_us / 1000:.1f} ms cumulative (-X importtime)")
    assert {name.split(".")[0] for name in imported} & HEAVY_MODULES == set()


@pytest.mark.parametrize("name", promptkit.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    assert getattr(promptkit, name) is not None
    assert name in dir(promptkit)


def test_every_exported_error_belongs_to_the_promptkit_error_hierarchy() -> None:
    errors = [
        value
        for value in (getattr(promptkit, name) for name in promptkit.__all__)
        if isinstance(value, type) and issubclass(value, Exception)
    ]

    assert promptkit.PromptkitError in errors
    assert all(issubclass(error, promptkit.PromptkitError) for error in errors)


def test_unknown_attribute_raises_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        promptkit.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018


def _promptkit_command() -> Path:
    # The console script is installed next to the interpreter running the tests.
    command = Path(sys.executable).with_name("promptkit")
    assert command.exists(), f"{command} is missing: run `pip install -e .` into this venv"
    return command


def test_promptkit_version_prints_the_package_version() -> None:
    completed = subprocess.run(
        [str(_promptkit_command()), "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"promptkit {promptkit.__version__}"


def test_promptkit_help_prints_usage() -> None:
    completed = subprocess.run(
        [str(_promptkit_command()), "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("usage: promptkit")
    assert "--version" in completed.stdout
