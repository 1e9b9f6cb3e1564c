"""Tools recognised by their file alone: TypeScript (tsconfig.json) and Docker."""

from __future__ import annotations

from promptkit.repofacts._tooling.collector import ToolingCollector

__all__ = ["DOCKER_FILES", "parse_build_file"]

DOCKER_FILES = ("Dockerfile", "docker-compose.yml", "docker-compose.yaml", "compose.yaml")


def parse_build_file(collector: ToolingCollector, name: str, source: str, directory: str) -> None:
    if name == "tsconfig.json":
        collector.tools.add("typescript")
    elif name in DOCKER_FILES:
        collector.tools.add("docker")
        collector.programs.add("docker")
