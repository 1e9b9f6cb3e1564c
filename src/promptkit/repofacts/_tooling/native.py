"""Native builds: CMake and CTest (with presets), Meson, Bazel and Zig's `build.zig` steps.

A test command is offered only where the build declares tests: `ctest` for a CMakeLists.txt that
enables testing or adds a test, `zig build test` for a `build.zig` with a `test` step. A
CMakeLists.txt whose build nothing runs beside another root build system is not this project's
build; the ranking drops inferred commands of a tool nothing else runs (see `ranking`).
"""

from __future__ import annotations

import json
import re

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import classify_name

__all__ = ["parse_bazel", "parse_cmake", "parse_meson", "parse_zig"]

_CMAKE_TESTS = re.compile(
    r"^\s*(?:enable_testing\s*\(|include\s*\(\s*CTest\b|add_test\s*\(|\w+_discover_tests\s*\()",
    re.MULTILINE | re.IGNORECASE,
)
_CMAKE_PROJECT = re.compile(r"^\s*project\s*\(\s*([\w.+-]+)", re.MULTILINE | re.IGNORECASE)
_PRESETS_LIMIT = 256 * 1024
_MESON_PROJECT = re.compile(r"""^\s*project\s*\(\s*'([^']+)'""", re.MULTILINE)
_MESON_TESTS = re.compile(r"^\s*(?:test|benchmark)\s*\(", re.MULTILINE)
_ZIG_STEP = re.compile(r"""\.step\(\s*"([\w.:-]+)"\s*,""")
_ZIG_NAME = re.compile(r"""^\s*\.name\s*=\s*\.?"?([\w-]+)"?""", re.MULTILINE)


def parse_cmake(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """CMakeLists.txt: the project, the build (through a preset when CMakePresets.json names
    one) and `ctest` when the build declares tests."""
    collector.tools.add("cmake")
    collector.programs.update(("cmake", "ctest"))
    name = _CMAKE_PROJECT.search(text)
    has_tests = _CMAKE_TESTS.search(text) is not None
    facts = ["declares tests"] if has_tests else []
    preset = _first_preset(collector, directory)
    if preset is not None:
        facts.append(f"preset {preset}")
    collector.project("CMake project", name.group(1) if name else None, facts, source)
    if preset is not None:
        build = f"cmake --preset {preset} && cmake --build --preset {preset}"
        test = f"ctest --preset {preset}"
    else:
        build = "cmake -S . -B build && cmake --build build"
        test = "ctest --test-dir build"
    collector.add_default("cmake", "build", build, source, directory)
    if has_tests:
        collector.add_default("ctest", "test", test, source, directory)


def _first_preset(collector: ToolingCollector, directory: str) -> str | None:
    """The first visible configure preset of CMakePresets.json, when it also builds and tests
    under the same name (the usual `default`/`dev` layout)."""
    if not collector.has(directory, "CMakePresets.json"):
        return None
    text = collector.read(f"{directory}/CMakePresets.json" if directory else "CMakePresets.json")
    try:
        document = json.loads(text or "")
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    names: dict[str, list[str]] = {}
    for kind in ("configurePresets", "buildPresets", "testPresets"):
        presets = document.get(kind)
        if isinstance(presets, list):
            names[kind] = [
                preset["name"]
                for preset in presets
                if isinstance(preset, dict)
                and isinstance(preset.get("name"), str)
                and not preset.get("hidden")
            ]
    for name in names.get("configurePresets", []):
        if all(name in names.get(kind, []) for kind in ("buildPresets", "testPresets")):
            return name
    return None


def parse_meson(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """meson.build: configure once into `build/`, then compile and test there."""
    collector.tools.update(("meson", "ninja"))
    collector.programs.update(("meson", "ninja"))
    name = _MESON_PROJECT.search(text)
    collector.project("Meson project", name.group(1) if name else None, [], source)
    collector.add_default(
        "meson", "build", "meson setup build && meson compile -C build", source, directory
    )
    collector.add_default("meson", "test", "meson test -C build", source, directory)


def parse_bazel(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """A Bazel workspace (MODULE.bazel, WORKSPACE): build and test every target; `bazelisk`
    reads `.bazelversion`, so the version CI uses is the one a contributor gets."""
    if directory:
        return  # a nested workspace is a fixture or an example, not this build
    collector.tools.add("bazel")
    collector.programs.update(("bazel", "bazelisk"))
    # A Bazel workspace builds and tests every language in it through its rules.
    collector.build_owner = "bazel"
    facts = []
    if collector.has(directory, ".bazelversion"):
        version = (collector.read(".bazelversion", 64) or "").strip()
        if version:
            facts.append(f"bazel {version}")
    name = re.search(r"""module\s*\(\s*name\s*=\s*"([^"]+)\"""", text)
    collector.project("Bazel workspace", name.group(1) if name else None, facts, source)
    collector.add_default("bazel", "build", "bazel build //...", source, directory)
    collector.add_default("bazel", "test", "bazel test //...", source, directory)


def parse_zig(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """build.zig: `zig build` and each step it declares (`zig build test`); build.zig.zon
    names the package."""
    collector.tools.add("zig")
    collector.programs.add("zig")
    name = None
    if collector.has(directory, "build.zig.zon"):
        zon = collector.read(f"{directory}/build.zig.zon" if directory else "build.zig.zon")
        found = _ZIG_NAME.search(zon or "")
        name = found.group(1) if found else None
    collector.project("Zig package", name, [], source)
    collector.add_default("zig", "build", "zig build", source, directory)
    steps = list(dict.fromkeys(_ZIG_STEP.findall(text)))
    for step in steps:
        collector.add(classify_name(step), f"zig build {step}", source, directory=directory)
    if not any(classify_name(step) == "format" for step in steps):
        collector.add_default("zig", "format", "zig fmt --check .", source, directory)
