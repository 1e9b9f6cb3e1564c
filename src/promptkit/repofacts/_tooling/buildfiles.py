"""Build systems recognised by their file alone: Maven, Gradle, CMake, TypeScript, Docker."""

from __future__ import annotations

from promptkit.repofacts._tooling.collector import ToolingCollector

__all__ = ["DOCKER_FILES", "parse_build_file"]

DOCKER_FILES = ("Dockerfile", "docker-compose.yml", "docker-compose.yaml", "compose.yaml")


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
    elif name in DOCKER_FILES:
        collector.tools.add("docker")
