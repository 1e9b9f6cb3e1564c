"""Reading a project's own configuration for the commands a contributor runs.

One module per ecosystem (`python`, `node`, `rust`, `go`), per kind of runner (`runners`:
Make, just, Task, `scripts/`; `hooks`: pre-commit, lefthook; `buildfiles`: Maven, Gradle,
CMake) and for CI (`ci`). Each parser takes one configuration file's text (already passed
through `redact_secrets`) and records tools, commands and project descriptions into a
`ToolingCollector`; a parser that follows one file to another reads it through the
collector's `FileReader`. Parsers are forgiving: a file that does not parse contributes nothing
rather than failing the scan. `registry` says which file goes to which parser, and `ranking`
orders what they found, most canonical first.
"""

from promptkit.repofacts._tooling.ci import invoked_script, parse_workflow, script_commands
from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import (
    CommandPurpose,
    CommandStanding,
    FileReader,
    ToolCommand,
    Workflow,
    classify_command,
    classify_name,
)
from promptkit.repofacts._tooling.ranking import command_words, rank_commands
from promptkit.repofacts._tooling.registry import LOCKFILE_NAMES, config_files, parse_config_file

__all__ = [
    "LOCKFILE_NAMES",
    "CommandPurpose",
    "CommandStanding",
    "FileReader",
    "ToolCommand",
    "ToolingCollector",
    "Workflow",
    "classify_command",
    "classify_name",
    "command_words",
    "config_files",
    "invoked_script",
    "parse_config_file",
    "parse_workflow",
    "rank_commands",
    "script_commands",
]
