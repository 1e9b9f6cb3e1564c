"""The project configuration: `[tool.promptkit]` of the nearest pyproject.toml that has one,
read in one place, checked key by key, its folders relative to the project; a flag wins."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from promptkit.adapters import StructuredOutputMode
from promptkit.config import (
    PROVIDERS,
    STRUCTURED_OUTPUT_MODES,
    command_config,
    find_project_config,
)
from promptkit.errors import ConfigError, UsageError
from promptkit.optimize import WRITER_NAMES


def write_table(folder: Path, table: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "pyproject.toml"
    file.write_text(f'[project]\nname = "demo"\n\n[tool.promptkit]\n{table}', encoding="utf-8")
    return file


def test_without_a_table_the_start_folder_is_the_project_with_every_default(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "plain"\n', encoding="utf-8")

    config = find_project_config(tmp_path)

    assert (config.root, config.file, config.workspace) == (tmp_path, None, tmp_path)
    assert (config.overrides, config.tag, config.state) == (
        str(tmp_path / "overrides"),
        "latest",
        None,
    )
    assert (config.provider, config.model, config.structured_output) == ("auto", None, "native")


def test_the_nearest_table_above_the_start_folder_is_the_projects(tmp_path: Path) -> None:
    file = write_table(tmp_path, 'tag = "prod"\n')
    inner = tmp_path / "src" / "pkg"
    inner.mkdir(parents=True)
    (tmp_path / "src" / "pyproject.toml").write_text("[project]\nname = 'inner'\n")

    config = find_project_config(inner)

    assert (config.root, config.file, config.tag) == (tmp_path, file, "prod")


def test_folders_in_the_table_are_relative_to_the_project_folder(tmp_path: Path) -> None:
    write_table(
        tmp_path,
        'overrides = "ops/overrides"\nstate = "ops/state"\nworkspace = "repo"\n',
    )
    inner = tmp_path / "repo" / "src"
    inner.mkdir(parents=True)

    config = find_project_config(inner)

    assert config.overrides == str(tmp_path / "ops" / "overrides")
    assert config.state == str(tmp_path / "ops" / "state")
    assert config.workspace == tmp_path / "repo"


def test_a_database_url_is_kept_as_written(tmp_path: Path) -> None:
    write_table(tmp_path, 'overrides = "postgresql://db.example.invalid/app"\n')

    assert find_project_config(tmp_path).overrides == "postgresql://db.example.invalid/app"


def test_every_key_is_read(tmp_path: Path) -> None:
    write_table(
        tmp_path,
        'prompts = ["myapp.prompts:review"]\nprovider = "openai"\nmodel = "qwen2.5-coder"\n'
        'base_url = "http://127.0.0.1:8000/v1"\nstructured_output = "prompt"\n'
        'app = "myapp.main:app"\n',
    )

    config = find_project_config(tmp_path)

    assert (config.prompts, config.app) == (("myapp.prompts:review",), "myapp.main:app")
    assert (config.provider, config.model, config.base_url, config.structured_output) == (
        "openai",
        "qwen2.5-coder",
        "http://127.0.0.1:8000/v1",
        "prompt",
    )


def test_an_unknown_key_is_an_error_naming_the_file_and_the_key(tmp_path: Path) -> None:
    file = write_table(tmp_path, 'overide = "ops"\n')

    with pytest.raises(ConfigError) as raised:
        find_project_config(tmp_path)

    assert str(raised.value).startswith(f"{file}: [tool.promptkit] has an unknown key 'overide'")
    assert "overrides" in str(raised.value)
    assert isinstance(raised.value, UsageError)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("tag = 'Not A Tag'", "tag"),
        ("tag = 3", "tag"),
        ("prompts = 'myapp:review'", "prompts"),
        ("prompts = ['no-colon']", "prompts"),
        ("provider = 'gemini'", "provider"),
        ("structured_output = 'json'", "structured_output"),
        ("base_url = 'localhost:8000'", "base_url"),
        ("overrides = ''", "overrides"),
        ("model = ['a']", "model"),
    ],
)
def test_a_value_of_the_wrong_kind_names_the_file_and_the_key(
    tmp_path: Path, line: str, key: str
) -> None:
    file = write_table(tmp_path, line + "\n")

    with pytest.raises(ConfigError, match=rf"^{file}: \[tool.promptkit\] {key} must be "):
        find_project_config(tmp_path)


def test_a_refused_value_never_shows_a_credential(tmp_path: Path) -> None:
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    write_table(tmp_path, f'base_url = "{key}"\n')

    with pytest.raises(ConfigError) as raised:
        find_project_config(tmp_path)

    assert key not in str(raised.value)


def test_a_pyproject_that_is_not_toml_is_an_error_naming_the_file(tmp_path: Path) -> None:
    file = tmp_path / "pyproject.toml"
    file.write_text("[tool.promptkit\n", encoding="utf-8")

    with pytest.raises(ConfigError, match=rf"^{file}: cannot be read as TOML"):
        find_project_config(tmp_path)


def test_a_flag_wins_over_the_table_and_is_taken_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_table(tmp_path, 'overrides = "ops/overrides"\ntag = "prod"\n')
    monkeypatch.chdir(tmp_path)

    config = command_config(overrides_dir="elsewhere", tag="canary")
    table = command_config()

    assert (config.overrides, config.tag) == ("elsewhere", "canary")
    assert (table.overrides, table.tag) == ("ops/overrides", "prod")


def test_a_tag_flag_changes_the_tag_served_not_the_projects_tag(tmp_path: Path) -> None:
    write_table(tmp_path, 'tag = "prod"\n')

    config = command_config(tmp_path, tag="candidate")

    assert (config.tag, config.project_tag) == ("candidate", "prod")


def test_the_workspace_given_is_where_the_project_is_found_from(tmp_path: Path) -> None:
    write_table(tmp_path / "project", 'tag = "prod"\n')
    (tmp_path / "project" / "repo").mkdir()

    config = command_config(workspace=tmp_path / "project" / "repo")

    assert (config.root, config.tag) == (tmp_path / "project", "prod")
    assert config.workspace == tmp_path / "project" / "repo"


def test_the_table_takes_the_names_the_commands_and_adapters_take() -> None:
    assert PROVIDERS == WRITER_NAMES
    assert get_args(StructuredOutputMode) == STRUCTURED_OUTPUT_MODES
