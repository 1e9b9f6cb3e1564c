"""Rust projects: Cargo.toml (a crate or a workspace and its members), the aliases of
`.cargo/config.toml` (`cargo xtask` and friends), and nextest, rustfmt and clippy configuration.
"""

from __future__ import annotations

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import classify_name, load_toml, table

__all__ = ["parse_cargo_config", "parse_cargo_toml"]


def parse_cargo_toml(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    document = load_toml(text)
    if document is None:
        return
    collector.tools.add("cargo")
    package = table(document, "package").get("name")
    workspace = table(document, "workspace")
    members = workspace.get("members")
    kind = "Rust crate" if isinstance(package, str) else "Rust workspace"
    facts = []
    if isinstance(members, list) and members:
        shown = ", ".join(str(member) for member in members[:4])
        more = f" and {len(members) - 4} more" if len(members) > 4 else ""
        facts.append(f"members {shown}{more}")
    collector.project(kind, package, facts, source)
    scope = " --workspace" if workspace else ""
    if collector.has(directory, ".config/nextest.toml"):
        collector.add_default(
            "cargo-nextest", "test", f"cargo nextest run{scope}", source, directory
        )
    collector.add_default("cargo", "test", f"cargo test{scope}", source, directory)
    collector.add_default("clippy", "lint", f"cargo clippy{scope} --all-targets", source, directory)
    collector.add_default("rustfmt", "format", "cargo fmt --all", source, directory)
    collector.add_default("cargo", "build", f"cargo build{scope}", source, directory)
    dev = table(document, "dev-dependencies") or table(workspace, "dependencies")
    if "insta" in dev:
        collector.tools.add("insta")
    has_xtask = collector.has("", "xtask/Cargo.toml")
    if not directory and has_xtask and not collector.has("", ".cargo/config.toml"):
        collector.add("other", "cargo run -p xtask --", source, directory=directory)


def parse_cargo_config(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """`.cargo/config.toml`: each `[alias]` is a `cargo <alias>` command."""
    document = load_toml(text)
    if document is None:
        return
    root = directory.removesuffix(".cargo").rstrip("/")
    for alias, expansion in sorted(table(document, "alias").items()):
        if isinstance(expansion, list):
            expansion = " ".join(str(part) for part in expansion)
        if isinstance(expansion, str):
            purpose = classify_name(alias)
            if purpose == "other":
                purpose = classify_name(expansion.split()[0]) if expansion.split() else "other"
            collector.add(purpose, f"cargo {alias}", source, f"cargo {expansion}", directory=root)
