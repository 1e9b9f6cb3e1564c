"""Finding the configuration, prompt, session and overrides a command works on.

- `load_prompt_source` / `bind_prompt`: `package.module:attr` references and `promptkit.prompts`
  entry points, loaded and bound to a session and workspace; `project_prompts` /
  `use_project`: the `[tool.promptkit] prompts` of the project, and its folder importable;
  `import_reference`: what any other reference names (an application, a deps factory).
- `workspace_options` / `bind_workspace`: every workspace command's options resolved against
  the project configuration (`promptkit.config.command_config`: a flag wins, else
  `[tool.promptkit]`, else the default), and the stores they name (`overrides_store_of`,
  `session_store_of`).
- `workspace_prompt` (`DEFAULT_PROMPT_REFERENCE`, `promptkit.discovery:workspace_prompt`): the
  built-in workspace prompt.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.discovery._references import (
        EntryPointPrompts as EntryPointPrompts,
        PromptFactory as PromptFactory,
        PromptSource as PromptSource,
        bind_prompt as bind_prompt,
        entry_point_prompts as entry_point_prompts,
        find_prompt as find_prompt,
        import_reference as import_reference,
        load_prompt_source as load_prompt_source,
        project_prompts as project_prompts,
        use_project as use_project,
    )
    from promptkit.discovery._stores import (
        overrides_store_of as overrides_store_of,
        session_store_of as session_store_of,
    )
    from promptkit.discovery._workspace import (
        DEFAULT_PROMPT_REFERENCE as DEFAULT_PROMPT_REFERENCE,
        BoundWorkspace as BoundWorkspace,
        WorkspaceOptions as WorkspaceOptions,
        bind_options as bind_options,
        bind_workspace as bind_workspace,
        existing_workspace as existing_workspace,
        workspace_options as workspace_options,
        workspace_prompt as workspace_prompt,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.discovery._references": (
                "EntryPointPrompts",
                "PromptFactory",
                "PromptSource",
                "bind_prompt",
                "entry_point_prompts",
                "find_prompt",
                "import_reference",
                "load_prompt_source",
                "project_prompts",
                "use_project",
            ),
            "promptkit.discovery._stores": ("overrides_store_of", "session_store_of"),
            "promptkit.discovery._workspace": (
                "DEFAULT_PROMPT_REFERENCE",
                "BoundWorkspace",
                "WorkspaceOptions",
                "bind_options",
                "bind_workspace",
                "existing_workspace",
                "workspace_options",
                "workspace_prompt",
            ),
        },
    )
