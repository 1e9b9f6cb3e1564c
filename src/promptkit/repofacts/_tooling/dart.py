"""Dart and Flutter: pubspec.yaml (a Flutter app or package, or plain Dart), pub workspaces and
melos scripts.

A package that depends on the Flutter SDK is tested and analysed with `flutter`, any other with
`dart`; both format with `dart format`. Melos scripts (in `melos.yaml`, or under `melos:` in the
root pubspec since melos 7) run as `melos run <script>`. The platform folders beside a Flutter
app's pubspec (`android/`, `ios/`...) hold the host projects Flutter generates: the registry
leaves their build files out (see `registry`).
"""

from __future__ import annotations

import re

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import classify_name

__all__ = ["parse_melos", "parse_pubspec"]

_NAME = re.compile(r"^name:\s*['\"]?([\w-]+)", re.MULTILINE)
_FLUTTER_SDK = re.compile(r"^\s+sdk:\s*['\"]?flutter\b", re.MULTILINE)
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*):", re.MULTILINE)


def parse_pubspec(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    is_flutter = _FLUTTER_SDK.search(text) is not None
    tool = "flutter" if is_flutter else "dart"
    collector.tools.update(("dart", tool))
    collector.programs.update(("dart", tool))
    name = _NAME.search(text)
    keys = set(_TOP_KEY.findall(text))
    facts = [f"runs through `{tool}`"]
    if "workspace" in keys:
        facts.append("pub workspace")
    kind = "Flutter package" if is_flutter else "Dart package"
    collector.project(kind, name.group(1) if name else None, facts, source)
    collector.add_default(tool, "test", f"{tool} test", source, directory)
    collector.add_default(tool, "lint", f"{tool} analyze", source, directory)
    collector.add_default("dart", "format", "dart format .", source, directory)
    if "melos" in keys:
        _melos_scripts(collector, source, directory, _section(text, "melos"))


def parse_melos(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """melos.yaml: the workspace's scripts, run as `melos run <script>`."""
    _melos_scripts(collector, source, directory, text)


def _melos_scripts(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    collector.tools.add("melos")
    collector.programs.add("melos")
    scripts = _section(text, "scripts")
    indent: int | None = None
    for line in scripts.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        column = len(line) - len(line.lstrip())
        if indent is None:
            indent = column
        if column != indent:
            continue
        found = re.match(r"\s*['\"]?([\w:.-]+)['\"]?\s*:\s*(.*)$", line)
        if found is None:
            continue
        script, body = found.groups()
        detail = body.strip().strip("'\"") or None
        if detail in ("|", ">", "|-", ">-"):
            detail = None
        collector.add(
            classify_name(script), f"melos run {script}", source, detail, directory=directory
        )


def _section(text: str, key: str) -> str:
    """The lines nested under `key:` (at any indentation), without the key's own line."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        found = re.match(rf"(\s*){re.escape(key)}:\s*$", line)
        if found is None:
            continue
        column = len(found.group(1))
        body: list[str] = []
        for following in lines[index + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= column:
                break
            body.append(following)
        return "\n".join(body)
    return ""
