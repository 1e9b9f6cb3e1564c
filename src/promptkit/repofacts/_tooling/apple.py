"""Apple platforms: Swift packages (Package.swift), Xcode projects and workspaces with their
shared schemes, SwiftLint and SwiftFormat.

An Xcode project is recognised by its `project.pbxproj` (a workspace by its
`contents.xcworkspacedata`); a scheme is one its project shares
(`xcshareddata/xcschemes/<scheme>.xcscheme`), the only kind a fresh checkout has.
"""

from __future__ import annotations

import re

from promptkit.repofacts._tooling.collector import ToolingCollector

__all__ = ["parse_swift_package", "parse_swift_tools", "parse_xcode"]

_PACKAGE_NAME = re.compile(r"""Package\s*\(\s*name\s*:\s*"([^"]+)\"""")
_TEST_TARGET = re.compile(r"\.testTarget\s*\(")
_SCHEME = re.compile(r"xcshareddata/xcschemes/([^/]+)\.xcscheme$")


def parse_swift_package(
    collector: ToolingCollector, source: str, directory: str, text: str
) -> None:
    """Package.swift: `swift build`, and `swift test` when the package declares test targets."""
    collector.tools.add("swift")
    collector.programs.add("swift")
    name = _PACKAGE_NAME.search(text)
    collector.project("Swift package", name.group(1) if name else None, [], source)
    collector.add_default("swift", "build", "swift build", source, directory)
    if _TEST_TARGET.search(text):
        collector.add_default("swift", "test", "swift test", source, directory)


def parse_xcode(collector: ToolingCollector, name: str, source: str, directory: str) -> None:
    """An Xcode project or workspace (found by the file inside its bundle, never read):
    `xcodebuild` with the first scheme it shares."""
    bundle = source.rpartition("/")[0]  # `App.xcodeproj`, `macos/App.xcworkspace`
    folder, _, bundle_name = bundle.rpartition("/")
    collector.tools.add("xcodebuild")
    collector.programs.add("xcodebuild")
    kind = "-workspace" if bundle_name.endswith(".xcworkspace") else "-project"
    collector.project("Xcode project", bundle_name.rpartition(".")[0], [], bundle)
    schemes = sorted(
        found.group(1)
        for path in collector.present
        if path.startswith(bundle + "/") and (found := _SCHEME.search(path)) is not None
    )
    if not schemes:
        return
    command = f"xcodebuild {kind} {bundle_name} -scheme {schemes[0]}"
    collector.add_default("xcodebuild", "build", f"{command} build", source, folder)
    collector.add_default("xcodebuild", "test", f"{command} test", source, folder)


def parse_swift_tools(collector: ToolingCollector, name: str, source: str, directory: str) -> None:
    """`.swiftlint.yml` and `.swiftformat`: the linter and formatter they configure."""
    if name.startswith(".swiftlint"):
        collector.add_default("swiftlint", "lint", "swiftlint lint", source, directory)
    else:
        collector.add_default("swiftformat", "format", "swiftformat --lint .", source, directory)
