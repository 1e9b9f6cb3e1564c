"""Nix flakes: a flake's checks run with `nix flake check`, its packages build with
`nix build`, and a flake that declares a `formatter`, or takes `treefmt-nix` as an input
(which exists to provide one), formats with `nix fmt`."""

from __future__ import annotations

import re

from promptkit.repofacts._tooling.collector import ToolingCollector

__all__ = ["parse_flake"]

_DESCRIPTION = re.compile(r"""^\s*description\s*=\s*"([^"]*)"\s*;""", re.MULTILINE)
_FORMATTER = re.compile(r"\bformatter\b|\btreefmt-nix\b")


def parse_flake(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    collector.tools.add("nix")
    collector.programs.update(("nix", "nix-build", "nix-shell"))
    description = _DESCRIPTION.search(text)
    collector.project("Nix flake", description.group(1) if description else None, [], source)
    collector.add_default("nix", "test", "nix flake check", source, directory)
    collector.add_default("nix", "build", "nix build", source, directory)
    if _FORMATTER.search(text):
        collector.add_default("nix", "format", "nix fmt", source, directory)
