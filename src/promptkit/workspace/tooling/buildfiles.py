"""Build systems recognised by their file alone: Maven, Gradle, CMake and TypeScript."""

from __future__ import annotations

from promptkit.workspace.tooling.collector import ToolingCollector

__all__ = ["parse_build_file"]


def parse_build_file(collector: ToolingCollector, name: str, source: str, directory: str) -> None:
    if name == "pom.xml":
        collector.add_default("maven", "test", "mvn test", source, directory)
        collector.add_default("maven", "build", "mvn package", source, directory)
    elif name in ("build.gradle", "build.gradle.kts"):
        gradle = "./gradlew" if collector.has(directory, "gradlew") else "gradle"
        collector.add_default("gradle", "test", f"{gradle} test", source, directory)
        collector.add_default("gradle", "build", f"{gradle} build", source, directory)
    elif name == "CMakeLists.txt":
        build = "cmake -S . -B build && cmake --build build"
        collector.add_default("cmake", "build", build, source, directory)
        collector.add_default("cmake", "test", "ctest --test-dir build", source, directory)
    elif name == "tsconfig.json":
        collector.tools.add("typescript")
