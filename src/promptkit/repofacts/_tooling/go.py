"""Go modules: go.mod, golangci-lint configuration, and gofumpt where the project uses it."""

from __future__ import annotations

import re

from promptkit.repofacts._tooling.collector import ToolingCollector

__all__ = ["GOLANGCI_FILES", "parse_go_mod", "parse_golangci"]

GOLANGCI_FILES = (".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json")


def parse_go_mod(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    collector.tools.add("go")
    module = re.search(r"^module\s+(\S+)", text, re.MULTILINE)
    version = re.search(r"^go\s+(\S+)", text, re.MULTILINE)
    facts = [f"go {version.group(1)}"] if version else []
    collector.project("Go module", module.group(1) if module else None, facts, source)
    prefix = f"{directory}/" if directory else ""
    if not any(path.startswith(prefix) and path.endswith(".go") for path in collector.present):
        return  # a module of no Go code (a docs site's Hugo modules): nothing to build or vet
    collector.add_default("go", "test", "go test ./...", source, directory)
    collector.add_default("go", "lint", "go vet ./...", source, directory)
    collector.add_default("go", "build", "go build ./...", source, directory)
    if not any(collector.has(directory, name) for name in GOLANGCI_FILES):
        collector.add_default("gofmt", "format", "gofmt -l .", source, directory)


def parse_golangci(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """A golangci-lint configuration: the linter, and gofumpt when it formats with it."""
    collector.add_default("golangci-lint", "lint", "golangci-lint run", source, directory)
    if "gofumpt" in text:
        collector.add_default("gofumpt", "format", "gofumpt -l -w .", source, directory)
    elif "goimports" in text:
        collector.add_default("goimports", "format", "goimports -l -w .", source, directory)
    else:
        collector.add_default("gofmt", "format", "gofmt -l .", source, directory)
    if re.search(r"^\s*formatters\s*:", text, re.MULTILINE):
        collector.add_default("golangci-lint", "format", "golangci-lint fmt", source, directory)
