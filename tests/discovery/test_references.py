"""Prompt references: what `--prompt package.module:attr` names."""

from promptkit.discovery import DEFAULT_PROMPT_REFERENCE, load_prompt_source, workspace_prompt


def test_the_default_reference_names_the_built_in_workspace_prompt() -> None:
    assert load_prompt_source(DEFAULT_PROMPT_REFERENCE) is workspace_prompt


def test_the_built_in_prompt_keeps_answering_to_its_earlier_reference() -> None:
    source = load_prompt_source("promptkit.discovery.workspace:workspace_prompt")

    assert source is workspace_prompt
