"""Render benchmark: promptkit's renderer against plain jinja2, measured in the same run.

A prompt of 20 MarkdownSections (each a ~4-line template reading 3 params) is rendered N times
after a warm-up; the median microseconds per render is printed next to two baselines: jinja2
rendering the 20 section templates with one call each, and jinja2 rendering one template that
holds all 20 sections. With `--store`, the same prompt is also rendered with a seeded
LocalPromptOverridesStore.

Usage: python benchmarks/render_bench.py [--renders 5000] [--store]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from promptkit import MarkdownSection, Prompt

SECTION_COUNT = 20


def _section_template(index: int) -> str:
    return (
        f"Section {index} addresses {{{{ audience }}}} about {{{{ topic }}}}.\n"
        "Keep answers under {{ limit }} words.\n"
        f"Mention {{{{ topic }}}} at most twice in part {index}.\n"
        "Close by thanking {{ audience }}."
    )


def _prefixed_template(index: int) -> str:
    template = _section_template(index)
    for name in ("audience", "topic", "limit"):
        template = template.replace(f"{{{{ {name} }}}}", f"{{{{ p{index}_{name} }}}}")
    return template


def _params_types() -> list[type]:
    types: list[type] = []
    for index in range(SECTION_COUNT):
        cls: type = dataclass(frozen=True)(
            type(
                f"Params{index}",
                (),
                {"__annotations__": {"audience": str, "topic": str, "limit": int}},
            )
        )
        types.append(cls)
    return types


def _median_us(fn: Callable[[], object], renders: int) -> float:
    for _ in range(min(500, renders)):
        fn()
    samples = []
    for _ in range(renders):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=5000)
    parser.add_argument("--store", action="store_true", help="also render with a seeded store")
    args = parser.parse_args()

    types = _params_types()
    params = [
        t(audience=f"readers {i}", topic=f"topic {i}", limit=100 + i) for i, t in enumerate(types)
    ]
    sections = tuple(
        MarkdownSection(
            title=f"Part {i}", key=f"part-{i}", template=_section_template(i), params_type=types[i]
        )
        for i in range(SECTION_COUNT)
    )
    prompt: Prompt[None] = Prompt(ns="bench", key="render", sections=sections)

    environment = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    separate = [environment.from_string(_section_template(i)) for i in range(SECTION_COUNT)]
    combined_source = "\n\n".join(
        f"## {i + 1}. Part {i}\n\n" + _prefixed_template(i) for i in range(SECTION_COUNT)
    )
    combined = environment.from_string(combined_source)
    combined_values = {
        f"p{i}_{name}": getattr(p, name)
        for i, p in enumerate(params)
        for name in ("audience", "topic", "limit")
    }

    def render_separate() -> str:
        return "\n\n".join(
            t.render(audience=p.audience, topic=p.topic, limit=p.limit)
            for t, p in zip(separate, params, strict=True)
        )

    results = {
        "promptkit Prompt.render": _median_us(lambda: prompt.render(*params), args.renders),
        "jinja2, 20 render() calls": _median_us(render_separate, args.renders),
        "jinja2, one combined template": _median_us(
            lambda: combined.render(combined_values), args.renders
        ),
    }
    if args.store:
        from promptkit import LocalPromptOverridesStore

        with tempfile.TemporaryDirectory() as root:
            store = LocalPromptOverridesStore(root)
            store.seed(prompt)
            results["promptkit Prompt.render + seeded store"] = _median_us(
                lambda: prompt.render(*params, overrides_store=store), args.renders
            )

    baseline = results["jinja2, one combined template"]
    print(f"median of {args.renders} renders after warm-up ({SECTION_COUNT} sections x 3 params)")
    for label, micros in results.items():
        print(f"  {label:<42} {micros:8.1f} us   {micros / baseline:5.2f}x one-template baseline")
    if args.store:
        ratio = (
            results["promptkit Prompt.render + seeded store"] / results["promptkit Prompt.render"]
        )
        print(f"  store / no-store ratio: {ratio:.2f}x")


if __name__ == "__main__":
    main()
