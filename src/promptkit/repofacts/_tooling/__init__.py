"""Reading a project's own configuration for the commands a contributor runs.

One module per ecosystem (`python`, `node`, `rust`, `go`, `jvm`: Gradle, Maven, sbt, Mill;
`native`: CMake, Meson, Bazel, Zig; `apple`: SwiftPM, Xcode; `dart`: pub and melos; `dotnet`;
`ruby`; `php`; `elixir`; `nix`; `deno`), per kind of runner (`runners`: Make, just, Task,
`scripts/`, `bin/` and the top's build scripts; `hooks`: pre-commit, lefthook; `buildfiles`:
TypeScript, Docker) and for CI (`ci`). `shell` says what a command line runs and whether it is
a command at all, from its shape and the repository's evidence, never from a list of known
tools. Each parser takes one configuration file's text (already passed through
`redact_secrets`) and records tools, programs, commands and project descriptions into a
`ToolingCollector`; a parser that follows one file to another reads it through the collector's
`FileReader`. Parsers are forgiving: a file that does not parse contributes nothing rather than
failing the scan. `registry` says which file goes to which parser, and `ranking` orders what
they found, most canonical first.
"""

from promptkit.repofacts._tooling.ci import (
    add_ci_checks,
    checks_a_change,
    ci_programs,
    ci_systems,
    invoked_script,
    is_ci_file,
    is_side_workflow,
    is_typed_by_hand,
    parse_workflow,
    script_commands,
)
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
from promptkit.repofacts._tooling.ranking import command_words, rank_commands, ranked_tools
from promptkit.repofacts._tooling.registry import (
    LOCKFILE_NAMES,
    VENDORED_FOLDERS,
    config_files,
    parse_config_file,
    script_folders,
)

__all__ = [
    "LOCKFILE_NAMES",
    "VENDORED_FOLDERS",
    "CommandPurpose",
    "CommandStanding",
    "FileReader",
    "ToolCommand",
    "ToolingCollector",
    "Workflow",
    "add_ci_checks",
    "checks_a_change",
    "ci_programs",
    "ci_systems",
    "classify_command",
    "classify_name",
    "command_words",
    "config_files",
    "invoked_script",
    "is_ci_file",
    "is_side_workflow",
    "is_typed_by_hand",
    "parse_config_file",
    "parse_workflow",
    "rank_commands",
    "ranked_tools",
    "script_commands",
    "script_folders",
]
