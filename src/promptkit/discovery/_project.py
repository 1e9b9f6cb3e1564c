"""The prompts a project lists for promptkit's tools: `[tool.promptkit] prompts` in pyproject.toml.

```toml
[tool.promptkit]
prompts = ["myapp.prompts:review_prompt", "myapp.prompts:triage_prompt"]
```

`overrides check` compares override files with these prompts (and with `--prompt` and the
`promptkit.prompts` entry points), so CI finds stale entries without a long command line. The
file is the first `pyproject.toml` found from the given folder upwards; references are imported
with that folder importable, as `--prompt` is from the current one.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from promptkit.errors import PromptValidationError

PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class ProjectPrompts:
    """The prompt references listed in `file` (None when no pyproject.toml was found)."""

    file: Path | None
    references: tuple[str, ...] = ()


def project_prompts(start: Path) -> ProjectPrompts:
    """The `[tool.promptkit] prompts` of the nearest pyproject.toml at or above `start`.

    PromptValidationError names the file and what is wrong when the list is malformed. The
    file's folder is made importable, so its references resolve as from its root.
    """
    file = next(
        (
            folder / PYPROJECT
            for folder in (start, *start.parents)
            if (folder / PYPROJECT).is_file()
        ),
        None,
    )
    if file is None:
        return ProjectPrompts(None)
    try:
        document = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as error:
        raise PromptValidationError(f"{file}: cannot be read as TOML ({error})") from None
    tool = document.get("tool", {})
    settings = tool.get("promptkit", {}) if isinstance(tool, dict) else {}
    references = settings.get("prompts", []) if isinstance(settings, dict) else None
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        raise PromptValidationError(
            f"{file}: [tool.promptkit] prompts must be a list of prompt references such as"
            ' "myapp.prompts:review_prompt"'
        )
    folder = str(file.parent.resolve())
    if references and folder not in sys.path:
        sys.path.insert(0, folder)
    return ProjectPrompts(file, tuple(references))
