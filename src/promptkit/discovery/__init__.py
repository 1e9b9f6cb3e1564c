"""Finding the prompt, session and overrides a command works on.

`references`: `package.module:attr` references and `promptkit.prompts` entry points, loaded and
bound to a session and workspace. `project`: the `[tool.promptkit] prompts` a project lists
in its pyproject.toml. `workspace`: the built-in workspace prompt and what the
workspace commands' shared options (`PATH`, `--prompt`, `--state-dir`, `--overrides-dir`) name.
"""

from typing import TYPE_CHECKING

from promptkit._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "EntryPointPrompts": "promptkit.discovery.references",
    "PromptFactory": "promptkit.discovery.references",
    "PromptSource": "promptkit.discovery.references",
    "bind_prompt": "promptkit.discovery.references",
    "entry_point_prompts": "promptkit.discovery.references",
    "find_prompt": "promptkit.discovery.references",
    "load_prompt_source": "promptkit.discovery.references",
    "ProjectPrompts": "promptkit.discovery.project",
    "project_prompts": "promptkit.discovery.project",
    "BoundWorkspace": "promptkit.discovery.workspace",
    "DEFAULT_PROMPT_REFERENCE": "promptkit.discovery.workspace",
    "WorkspaceOptions": "promptkit.discovery.workspace",
    "bind_workspace": "promptkit.discovery.workspace",
    "existing_workspace": "promptkit.discovery.workspace",
    "workspace_options": "promptkit.discovery.workspace",
    "workspace_prompt": "promptkit.discovery.workspace",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from promptkit.discovery.project import (
        ProjectPrompts as ProjectPrompts,
        project_prompts as project_prompts,
    )
    from promptkit.discovery.references import (
        EntryPointPrompts as EntryPointPrompts,
        PromptFactory as PromptFactory,
        PromptSource as PromptSource,
        bind_prompt as bind_prompt,
        entry_point_prompts as entry_point_prompts,
        find_prompt as find_prompt,
        load_prompt_source as load_prompt_source,
    )
    from promptkit.discovery.workspace import (
        DEFAULT_PROMPT_REFERENCE as DEFAULT_PROMPT_REFERENCE,
        BoundWorkspace as BoundWorkspace,
        WorkspaceOptions as WorkspaceOptions,
        bind_workspace as bind_workspace,
        existing_workspace as existing_workspace,
        workspace_options as workspace_options,
        workspace_prompt as workspace_prompt,
    )
