"""Node projects: package.json scripts, run through the package manager the repository uses,
and the packages of pnpm, npm and yarn workspaces with their own scripts.

The package manager is the one `packageManager` declares, else the one a lockfile's name tells.
Workspace packages are found from the root's `workspaces` globs or `pnpm-workspace.yaml` (in
the order the globs name them; `**/` matches no folder too, as in pnpm), and their manifests are
read through the collector's reader. A manifest's subpath `exports` that point at listed source
files are recorded as the package's exported modules.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from typing import Any

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import classify_name, unquote

__all__ = ["parse_package_json", "parse_pnpm_workspace"]

_MAX_WORKSPACE_PACKAGES = 40
_MANIFEST_LIMIT = 256 * 1024

_NODE_TOOLS: Mapping[str, str] = {
    "jest": "jest",
    "vitest": "vitest",
    "mocha": "mocha",
    "eslint": "eslint",
    "prettier": "prettier",
    "typescript": "typescript",
    "@biomejs/biome": "biome",
    "vite": "vite",
    "webpack": "webpack",
    "turbo": "turbo",
    "nx": "nx",
    "playwright": "playwright",
    "@playwright/test": "playwright",
    "oxlint": "oxlint",
    "tsup": "tsup",
    "tsx": "tsx",
    "lerna": "lerna",
    "@changesets/cli": "changesets",
    "husky": "husky",
    "lint-staged": "lint-staged",
}


def parse_package_json(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    document = _load_json(text)
    if document is None:
        return
    _record_package(collector, source, directory, document, is_member=False)
    if not directory:
        _parse_members(collector, _workspace_globs(document.get("workspaces")))


def parse_pnpm_workspace(
    collector: ToolingCollector, source: str, directory: str, text: str
) -> None:
    """pnpm-workspace.yaml: its `packages:` globs name the workspace's packages."""
    if directory:
        return
    collector.tools.add("pnpm")
    globs: list[str] = []
    in_packages = False
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            in_packages = line.startswith("packages:")
            continue
        item = line.strip()
        if in_packages and item.startswith("- "):
            globs.append(unquote(item[2:].strip()))
    _parse_members(collector, globs)


def _record_package(
    collector: ToolingCollector,
    source: str,
    directory: str,
    document: Mapping[str, Any],
    *,
    is_member: bool,
) -> None:
    runner = collector.node_runner(directory, document)
    collector.tools.update(("node", runner))
    name = document.get("name")
    if not is_member:
        collector.project("Node package", name, [runner], source)
    scripts = document.get("scripts")
    if isinstance(scripts, dict):
        for script, body in sorted(scripts.items()):
            # `"//": "..."` is npm's convention for a comment, not a script.
            if not isinstance(body, str) or "no test specified" in body or script.startswith("//"):
                continue
            if _is_lifecycle_hook(script, scripts):
                continue
            command = _script_command(runner, script)
            collector.add(classify_name(script), command, source, body, directory=directory)
    collector.exported_modules.update(_exported_modules(collector, directory, document))
    for dependencies in (document.get("devDependencies"), document.get("dependencies")):
        if isinstance(dependencies, dict):
            collector.tools.update(
                _NODE_TOOLS[package] for package in dependencies if package in _NODE_TOOLS
            )


def _is_lifecycle_hook(script: str, scripts: Mapping[str, Any]) -> bool:
    """Whether the package manager runs `script` itself, around another (`pretest` before
    `test`, `postbuild` after `build`): nobody types it."""
    for prefix in ("pre", "post"):
        if script.startswith(prefix) and script[len(prefix) :] in scripts:
            return True
    return False


def _parse_members(collector: ToolingCollector, globs: list[str]) -> None:
    """Read the package.json of each workspace package the `globs` match (bounded)."""
    patterns = [glob.rstrip("/") for glob in globs if glob and not glob.startswith("!")]
    excluded = [glob[1:].rstrip("/") for glob in globs if glob.startswith("!")]
    if not patterns:
        return
    ranked: list[tuple[int, str]] = []
    for path in collector.present:
        if not path.endswith("/package.json") or "node_modules/" in path:
            continue
        member = path.removesuffix("/package.json")
        rank = _first_match(member, patterns)
        if rank is not None and not _matches(member, excluded):
            ranked.append((rank, member))
    # In the order the globs name them, so the bound keeps `packages/*` when thirty examples
    # follow; alphabetically within a glob.
    members = [member for _, member in sorted(ranked)]
    for member in members[:_MAX_WORKSPACE_PACKAGES]:
        if member.count("/") <= 0:
            continue  # The scan reads a direct subdirectory's package.json itself.
        text = collector.read(f"{member}/package.json", _MANIFEST_LIMIT)
        document = _load_json(text) if text is not None else None
        if document is not None:
            _record_package(collector, f"{member}/package.json", member, document, is_member=True)


def _matches(directory: str, patterns: list[str]) -> bool:
    return _first_match(directory, patterns) is not None


def _first_match(directory: str, patterns: list[str]) -> int | None:
    for index, pattern in enumerate(patterns):
        # `packages/*` matches one level; `packages/**` any depth below.
        same_depth = "**" in pattern or directory.count("/") == pattern.count("/")
        if same_depth and fnmatch.fnmatchcase(directory, pattern):
            return index
        # `**/` also matches no folder at all: `packages/**/*` holds `packages/a`.
        if "**/" in pattern and fnmatch.fnmatchcase(directory, pattern.replace("**/", "")):
            return index
    return None


def _workspace_globs(workspaces: object) -> list[str]:
    if isinstance(workspaces, dict):
        workspaces = workspaces.get("packages")
    if isinstance(workspaces, list):
        return [glob for glob in workspaces if isinstance(glob, str)]
    return []


def _load_json(text: str) -> dict[str, Any] | None:
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def _script_command(runner: str, script: str) -> str:
    if runner == "npm":
        return "npm test" if script == "test" else f"npm run {script}"
    if runner == "yarn":
        return f"yarn {script}"
    if re.fullmatch(r"[\w:.-]+", script) is None:
        return f"{runner} run '{script}'"
    return f"{runner} {script}" if runner == "pnpm" else f"{runner} run {script}"


def _exported_modules(
    collector: ToolingCollector, directory: str, document: Mapping[str, Any]
) -> list[str]:
    """The listed source files a package's subpath `exports` point at (`"./stdio":
    "./src/stdio.ts"`): the modules it offers besides its main entry, one per subpath."""
    exports = document.get("exports")
    if not isinstance(exports, dict):
        return []
    found: list[str] = []
    prefix = f"{directory}/" if directory else ""
    for key, value in exports.items():
        if key in (".", "./package.json") or not key.startswith("./"):
            continue
        for target in _targets(value):
            # Only a file the listing holds: a `dist/` build output or a `../` path is not.
            path = prefix + target.removeprefix("./")
            if path in collector.present:
                found.append(path)
                break
    return found


def _targets(value: object) -> list[str]:
    """Every string in an `exports` value, whose conditions (`import`, `types`...) nest."""
    targets: list[str] = []
    pending = [value]
    while pending:  # a loop, not recursion: a manifest may nest as deep as JSON allows
        item = pending.pop()
        if isinstance(item, str):
            targets.append(item)
        elif isinstance(item, dict):
            pending.extend(reversed(list(item.values())))
    return targets
