""".NET: a solution (`.sln`, `.slnx`) or a lone project at the top, and `global.json`.

`dotnet build` and `dotnet test` take the solution when there is exactly one; `dotnet test` is
offered only when the repository holds a test project (one that references the test SDK or is
named for tests, as `*.Tests.csproj`). `global.json` pins the SDK a build needs.
"""

from __future__ import annotations

import json
import re

from promptkit.repofacts._tooling.collector import ToolingCollector

__all__ = ["parse_dotnet", "parse_global_json"]

_PROJECT_SUFFIXES = (".csproj", ".fsproj", ".vbproj")
_TEST_PROJECT = re.compile(r"Tests?\.[cfv]sproj$|(?:^|/)tests?/")


def parse_dotnet(collector: ToolingCollector, name: str, source: str, directory: str) -> None:
    """A solution or project file (by its presence): build and test it with `dotnet`."""
    collector.tools.add("dotnet")
    collector.programs.add("dotnet")
    solutions = sorted(
        path
        for path in collector.present
        if path.count("/") == source.count("/")
        and path.startswith(f"{directory}/" if directory else "")
        and path.endswith((".sln", ".slnx"))
    )
    if name.endswith(_PROJECT_SUFFIXES) and solutions:
        return  # the solution beside it speaks for it
    if name.endswith((".sln", ".slnx")) and solutions and source != solutions[0]:
        return  # one line for the folder's solutions
    target = name if len(solutions) <= 1 else ""
    projects = [path for path in collector.present if path.endswith(_PROJECT_SUFFIXES)]
    facts = [f"{len(projects)} projects"] if len(projects) > 1 else []
    kind = ".NET solution" if name.endswith((".sln", ".slnx")) else ".NET project"
    collector.project(kind, name, facts, source)
    suffix = f" {target}" if target else ""
    collector.add_default("dotnet", "build", f"dotnet build{suffix}", source, directory)
    if any(_TEST_PROJECT.search(path) for path in projects):
        collector.add_default("dotnet", "test", f"dotnet test{suffix}", source, directory)


def parse_global_json(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """global.json: the .NET SDK version the build pins."""
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return
    sdk = document.get("sdk") if isinstance(document, dict) else None
    version = sdk.get("version") if isinstance(sdk, dict) else None
    if isinstance(version, str):
        collector.project(".NET SDK", version, [], source)
