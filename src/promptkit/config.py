"""A project's configuration: the `[tool.promptkit]` table of its pyproject.toml, read here only.

```toml
[tool.promptkit]
overrides = "overrides"          # the overrides folder, or a postgresql:// URL
tag = "latest"                   # the tag the project serves; other tags fall back to its digest
prompts = ["myapp.prompts:review_prompt"]
app = "myapp.main:app"           # the application's binding (a promptkit.App), for --app
state = ".promptkit"             # the session state folder, or a postgresql:// URL
workspace = "."                  # the repository the workspace commands work on
provider = "auto"                # auto, openai, anthropic or static
model = "gpt-4.1-mini"
base_url = "http://127.0.0.1:8000/v1"
structured_output = "native"     # native, or prompt for servers without JSON-schema output
```

The project is the nearest folder, at or above the one a command starts from, whose
pyproject.toml has a `[tool.promptkit]` table; without one, the start folder itself with every
default. Relative paths in the table are relative to the project folder, so every command, run
from anywhere inside the project, finds the same folders. Every key may be left out; the
defaults are those of `ProjectConfig`. A key the table does not know, or a value of the wrong
kind, is a `ConfigError` naming the file and the key, before anything runs.

The command line reads it through `command_config` (a flag wins over the table) and
an application through `promptkit.App.from_project`.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from promptkit._names import is_valid_key
from promptkit.errors import ConfigError

PYPROJECT = "pyproject.toml"
DEFAULT_TAG = "latest"
DEFAULT_OVERRIDES_FOLDER = "overrides"

PROVIDERS = ("auto", "openai", "anthropic", "static")
"""`provider` values: `promptkit.optimize.WRITER_NAMES` (a test keeps the two equal)."""

STRUCTURED_OUTPUT_MODES = ("native", "prompt")
"""`structured_output` values, as the adapters take them."""


@dataclass(frozen=True)
class ProjectConfig:
    """What a project configures (`find_project_config` resolves it against the project
    folder: store folders absolute unless the project is the current folder, URLs kept as
    written).

    `root` is the project folder and `file` the pyproject.toml read (None when none has a
    `[tool.promptkit]` table). `overrides` and `state` are a folder or a database URL (`state`
    None: `$PROMPTKIT_HOME`, else `~/.promptkit`); `workspace` is the repository the workspace
    commands work on when not given one; `tag` the tag a command serves (the table's, or its
    `--tag`), and `project_tag` the table's own, whose shared digest a tag without its own
    uses whatever tag a command is given. `prompts` are prompt references
    (`package.module:attr`) for the commands that check every prompt. `provider`, `model`,
    `base_url` and `structured_output` choose the model as `--provider`, `--model`,
    `--base-url` and `--structured-output` do. `app` names the application's binding
    (`package.module:attr` of a `promptkit.App`, or a function returning one) the commands
    run with, as `--app` does.
    """

    root: Path
    file: Path | None = None
    overrides: str = DEFAULT_OVERRIDES_FOLDER
    tag: str = DEFAULT_TAG
    prompts: tuple[str, ...] = ()
    state: str | None = None
    workspace: Path | None = None
    provider: str = "auto"
    model: str | None = None
    base_url: str | None = None
    structured_output: str = "native"
    app: str | None = None
    project_tag: str = ""

    def __post_init__(self) -> None:
        if self.workspace is None:
            object.__setattr__(self, "workspace", self.root)
        if not self.project_tag:
            object.__setattr__(self, "project_tag", self.tag)

    @property
    def workspace_root(self) -> Path:
        """The workspace folder (`workspace`, never None once built)."""
        assert self.workspace is not None  # set in __post_init__
        return self.workspace

    def overriding(self, **given: str | Path | None) -> Self:
        """This configuration with each value in `given` that is not None in its place, as a
        command's flags replace the table's. Paths given are taken as typed (relative to the
        current folder), not to the project folder; an unknown name is a ConfigError."""
        changes: dict[str, Any] = {}
        for name, value in given.items():
            if name not in _CHECKS or name == "prompts":
                raise ConfigError(f"{name!r} is not a setting a command can give")
            if value is None:
                continue
            if name in ("overrides", "state"):
                changes[name] = _location(str(value), Path.cwd())
            elif name == "workspace":
                changes[name] = Path(value).expanduser().absolute()
            else:
                changes[name] = _checked(name, value, where="the command line")
        return dataclasses.replace(self, **changes) if changes else self


def find_project_config(start: str | os.PathLike[str] | None = None) -> ProjectConfig:
    """The configuration of the project `start` (default: the current folder) is in; see the
    module doc. ConfigError when the table cannot be used."""
    folder = Path(start if start is not None else Path.cwd()).expanduser().absolute()
    if folder.is_file():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        file = candidate / PYPROJECT
        if not file.is_file():
            continue
        table = _tool_table(file)
        if table is not None:
            return read_project_config(file, table)
    return _project(folder, None, {})


def command_config(
    start: str | Path | None = None,
    *,
    workspace: str | Path | None = None,
    overrides_dir: str | Path | None = None,
    state_dir: str | Path | None = None,
    tag: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    structured_output: str | None = None,
    app: str | None = None,
) -> ProjectConfig:
    """The project configuration a command runs with: `[tool.promptkit]` of the project found
    from `start` (default: the workspace when given, else the current folder), with each
    option the command was given in place of the table's value. ConfigError for a table that
    cannot be used."""
    found = find_project_config(start if start is not None else workspace)
    return found.overriding(
        workspace=workspace,
        overrides=overrides_dir,
        state=state_dir,
        tag=tag,
        provider=provider,
        model=model,
        base_url=base_url,
        structured_output=structured_output,
        app=app,
    )


def read_project_config(file: Path, table: Mapping[str, object]) -> ProjectConfig:
    """The configuration `table` (the `[tool.promptkit]` of `file`) says; ConfigError naming
    the file and key for a key it does not know or a value of the wrong kind."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        check = _CHECKS.get(key)
        if check is None:
            known = ", ".join(sorted(_CHECKS))
            raise ConfigError(
                f"{file}: [tool.promptkit] has an unknown key {key!r} (the keys are {known})"
            )
        values[key] = _checked(key, value, where=f"{file}: [tool.promptkit]")
    return _project(file.parent, file, values)


def _project(root: Path, file: Path | None, values: dict[str, Any]) -> ProjectConfig:
    """The configuration of the project at `root`: its paths resolved against `root`."""
    values["overrides"] = _location(values.get("overrides", DEFAULT_OVERRIDES_FOLDER), root)
    if "state" in values:
        values["state"] = _location(values["state"], root)
    if "workspace" in values:
        values["workspace"] = (root / values["workspace"]).absolute()
    return ProjectConfig(root=root, file=file, **values)


def is_location_url(location: str) -> bool:
    """Whether a store location is a URL (`postgresql://...`) rather than a folder."""
    scheme, separator, _ = location.partition("://")
    return bool(separator) and scheme.replace("+", "").isalnum()


# -- reading and checking -----------------------------------------------------------------------


def _tool_table(file: Path) -> Mapping[str, object] | None:
    try:
        document = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{file}: cannot be read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{file}: is not UTF-8 text") from None
    except (tomllib.TOMLDecodeError, RecursionError) as error:
        raise ConfigError(f"{file}: cannot be read as TOML ({error})") from None
    tool = document.get("tool")
    if not isinstance(tool, dict) or "promptkit" not in tool:
        return None
    table = tool["promptkit"]
    if not isinstance(table, dict):
        raise ConfigError(f"{file}: tool.promptkit must be a table ([tool.promptkit])")
    return table


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _one_of(choices: tuple[str, ...]) -> Callable[[object], object]:
    def check(value: object) -> object:
        return value if value in choices else None

    return check


def _tag(value: object) -> object:
    return value if isinstance(value, str) and is_valid_key(value) else None


def _prompts(value: object) -> object:
    if not isinstance(value, list) or not all(
        isinstance(item, str) and ":" in item for item in value
    ):
        return None
    return tuple(value)


def _reference(value: object) -> object:
    text = _text(value)
    return text if text is not None and ":" in text else None


def _url(value: object) -> object:
    text = _text(value)
    return text if text is not None and text.startswith(("http://", "https://")) else None


_CHECKS: dict[str, tuple[Callable[[object], object], str]] = {
    "overrides": (_text, "a folder or a database URL, as text"),
    "tag": (_tag, "a tag: lower-case letters, digits, '.', '_' or '-', such as \"latest\""),
    "prompts": (
        _prompts,
        'a list of prompt references such as ["myapp.prompts:review_prompt"]',
    ),
    "state": (_text, "a folder or a database URL, as text"),
    "app": (_reference, 'a reference to the application\'s App, such as "myapp.main:app"'),
    "workspace": (_text, "a folder, as text"),
    "provider": (_one_of(PROVIDERS), f"one of {', '.join(PROVIDERS)}"),
    "model": (_text, "a model name, as text"),
    "base_url": (_url, "an http:// or https:// URL"),
    "structured_output": (
        _one_of(STRUCTURED_OUTPUT_MODES),
        f"one of {', '.join(STRUCTURED_OUTPUT_MODES)}",
    ),
}


def _checked(key: str, value: object, *, where: str) -> Any:
    check, expected = _CHECKS[key]
    checked = check(value)
    if checked is None:
        # Imported on a failure only: the command line reads the table before its imports.
        from promptkit.secrets import redact_secrets

        shown = redact_secrets(repr(value))
        raise ConfigError(f"{where} {key} must be {expected}, got {shown}")
    return checked


def _location(location: str, root: Path) -> str:
    """A store location: a URL as written; a folder against `root`, kept as written when the
    project is the current folder (so messages name `overrides`), else absolute."""
    if is_location_url(location):
        return location
    folder = Path(location).expanduser()
    if folder.is_absolute() or root == Path.cwd().absolute():
        return str(folder)
    return str(root / folder)
