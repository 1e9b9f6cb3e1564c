"""Reading the cases of a YAML dataset with the line each case starts on.

The file is a list of cases, or a mapping whose `cases` key holds that list. PyYAML's safe
loader builds the values (no arbitrary objects), and its node tree gives each case's line, so a
case that does not validate is reported where it is written. Aliases are refused
(`promptkit._input_files.yaml_loader`): a handful of nested ones expand into billions of values.
Imported only for YAML datasets.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from promptkit._input_files import yaml_loader
from promptkit.errors import DatasetError


def yaml_documents(text: str, file: Path) -> list[tuple[int, object]]:
    """Each case of the YAML `text` with its 1-based line; DatasetError when it is not YAML or
    not a list of cases."""
    loader = yaml_loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return []
        node = _cases_node(root, file)
        return [(item.start_mark.line + 1, loader.construct_document(item)) for item in node.value]
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise DatasetError(
            f"{file}{line}: not valid YAML: {error.problem or error.context}"
        ) from None
    except yaml.YAMLError as error:
        raise DatasetError(f"{file}: not valid YAML: {error}") from None
    finally:
        loader.dispose()


def _cases_node(root: yaml.Node, file: Path) -> yaml.SequenceNode:
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "cases":
                root = value
                break
    if not isinstance(root, yaml.SequenceNode):
        raise DatasetError(
            f"{file} line {root.start_mark.line + 1}: a YAML dataset is a list of cases (or a"
            " mapping with a `cases` list)"
        )
    return root
