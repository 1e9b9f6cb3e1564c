"""Prompts named on the command line: what a reference names, and the prompt a command binds.

A reference is `package.module:attr`, or the name of an entry point in the `promptkit.prompts`
group (installed packages list their prompts there, with a reference as the value). It names a
`Prompt` or a factory: a function `(session, workspace) -> Prompt`, or one of no arguments.
Every `promptkit` command resolves `--prompt` in two steps: `load_prompt_source` imports what
the reference names without calling it (so the module registers its session slice types before
a stored session is loaded), then `bind_prompt` makes the prompt the command works on.

Binding needs both prompts and sessions; the overrides check, the REPL and every workspace
command find their prompts here.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.machinery
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptkit.config import ProjectConfig
from promptkit.errors import PromptkitError, PromptValidationError
from promptkit.prompt import Prompt, Section
from promptkit.session import Session

if TYPE_CHECKING:
    from importlib.metadata import EntryPoints

ENTRY_POINT_GROUP = "promptkit.prompts"

PromptFactory = Callable[..., Prompt[Any]]
"""`(session, workspace) -> Prompt`, or a function of no arguments that returns a Prompt."""

PromptSource = Prompt[Any] | PromptFactory
"""What a reference names: a ready Prompt, or a factory not called yet."""


@dataclass(frozen=True)
class EntryPointPrompts:
    """The prompts the `promptkit.prompts` entry points gave, and the ones that failed."""

    prompts: tuple[tuple[str, Prompt[Any]], ...]
    failures: tuple[PromptkitError, ...]


def load_prompt_source(selector: str) -> PromptSource:
    """What `selector` names, imported but not called: `package.module:attr`, or the name of a
    `promptkit.prompts` entry point. PromptValidationError says what did not resolve.

    The current folder is importable, as with `python -m`, so a project's own prompts are
    found when the command runs from the project's root.
    """
    if ":" in selector:
        return _import_reference(selector)
    points = _prompt_entry_points()
    for point in points:
        if point.name == selector:
            try:
                return _import_reference(point.value)
            except PromptValidationError as error:
                raise PromptValidationError(f"entry point {point.name!r}: {error}") from error
    known = ", ".join(sorted(point.name for point in points)) or "none"
    raise PromptValidationError(
        f"no prompt {selector!r} among the {ENTRY_POINT_GROUP} entry points (found: {known});"
        " pass --prompt package.module:attr instead"
    )


def bind_prompt(
    source: PromptSource, *, session: Session | None = None, workspace: Path | None = None
) -> Prompt[Any]:
    """The prompt a command works on, made from what a reference names.

    A factory that takes `(session, workspace)` is called with them (a new Session and the
    current folder when not given); one that takes no arguments is called without. A Prompt,
    given or returned by a no-argument factory, is used as is without `session`; with one, its
    session-bound sections are re-bound to it (mounts stay as written), so what the command
    stores in the session is what the prompt reads. PromptValidationError when a factory fails
    with a non-promptkit error or returns something else; its promptkit errors propagate.
    """
    if isinstance(source, Prompt):
        return source if session is None else _rebound_prompt(source, session)
    name = _factory_name(source)
    arguments = _factory_arguments(
        source,
        session if session is not None else Session(),
        workspace if workspace is not None else Path.cwd(),
    )
    try:
        prompt = source(*arguments)
    except PromptkitError:
        raise
    except Exception as error:  # the factory's own code failed; say so with its error
        raise PromptValidationError(
            f"prompt factory {name} failed: {type(error).__name__}: {error}"
        ) from error
    if not isinstance(prompt, Prompt):
        raise PromptValidationError(
            f"prompt factory {name} is not a Prompt or a function that returns one: it returned"
            f" a {type(prompt).__name__}"
        )
    if arguments or session is None:
        return prompt
    return _rebound_prompt(prompt, session)


def entry_point_prompts() -> EntryPointPrompts:
    """Every prompt of the `promptkit.prompts` entry points, by entry-point name, bound without
    a session (`bind_prompt`)."""
    prompts: list[tuple[str, Prompt[Any]]] = []
    failures: list[PromptkitError] = []
    for point in _prompt_entry_points():
        try:
            prompts.append((point.name, bind_prompt(_import_reference(point.value))))
        except PromptkitError as error:
            failures.append(PromptValidationError(f"entry point {point.name!r}: {error}"))
    return EntryPointPrompts(tuple(prompts), tuple(failures))


def _prompt_entry_points() -> EntryPoints | tuple[()]:
    # Imported when an entry point is asked for: a command given `module:attr` (or the default
    # prompt) never reads the installed packages' metadata.
    if not _may_declare_prompts():
        return ()
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


def _may_declare_prompts() -> bool:
    """False only when no distribution on `sys.path` can declare a `promptkit.prompts` entry
    point: every path entry is a folder whose `*.dist-info` and `*.egg-info` metadata never
    names the group, and no other finder lists distributions.

    Importing `importlib.metadata` (its email parser) costs about as much as the rest of an
    `overrides list`, and most environments declare no prompts; anything this check cannot read
    plainly (a zip or egg on the path, an unreadable folder, another finder) is left to
    `importlib.metadata`.
    """
    if any(
        hasattr(finder, "find_distributions") and finder is not importlib.machinery.PathFinder
        for finder in sys.meta_path
    ):
        return True
    for entry in sys.path:
        try:
            found = list(Path(entry or ".").iterdir())
        except FileNotFoundError:
            continue
        except OSError:  # a zip archive, or a folder this process may not list
            return True
        for path in found:
            if path.name.endswith(".egg"):
                return True
            if path.name.endswith((".dist-info", ".egg-info")) and _names_the_group(path):
                return True
    return False


def _names_the_group(metadata: Path) -> bool:
    try:
        text = (metadata / "entry_points.txt").read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return ENTRY_POINT_GROUP.encode() in text


def find_prompt(selector: str) -> Prompt[Any]:
    """A prompt bound without a session (`bind_prompt`), by `package.module:attr`, or by the
    name or `ns/key` of a `promptkit.prompts` entry point; for commands with no workspace."""
    if ":" in selector:
        return bind_prompt(_import_reference(selector))
    found = entry_point_prompts()
    for name, prompt in found.prompts:
        if selector in (name, f"{prompt.ns}/{prompt.key}"):
            return prompt
    known = ", ".join(f"{name} ({p.ns}/{p.key})" for name, p in found.prompts) or "none"
    problems = "".join(f"; {failure}" for failure in found.failures)
    raise PromptValidationError(
        f"no prompt {selector!r} among the {ENTRY_POINT_GROUP} entry points (found: {known})"
        f"{problems}; pass --prompt package.module:attr instead"
    )


def project_prompts(config: ProjectConfig) -> tuple[str, ...]:
    """The prompt references `config` lists (`[tool.promptkit] prompts`), with the project
    folder made importable (`use_project`)."""
    use_project(config)
    return config.prompts


def use_project(config: ProjectConfig) -> None:
    """Make the project folder of `config` importable, so a prompt or app reference resolves
    from the project's root wherever in it a command runs (the current folder is too)."""
    _importable(config.root)


def _importable(folder: Path) -> None:
    path = str(folder.resolve())
    if path not in sys.path:
        sys.path.insert(0, path)


def _import_reference(reference: str) -> PromptSource:
    value = import_reference(reference, what="prompt", error=PromptValidationError)
    if isinstance(value, Prompt) or callable(value):
        source: PromptSource = value
        return source
    raise PromptValidationError(
        f"prompt reference {reference!r} is a {type(value).__name__}, not a Prompt or a"
        " function that returns one"
    )


def import_reference(
    reference: str, *, what: str, error: type[PromptkitError] = PromptValidationError
) -> Any:
    """What `package.module:attr` names (a dotted attr reaches into it), imported with the
    current folder importable; `error` (naming it a `what` reference) says what did not
    resolve."""
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise error(
            f"invalid {what} reference {reference!r}: expected package.module:attr, for example"
            f" myapp.{what}s:name"
        )
    _importable(Path.cwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as failure:
        raise error(
            f"{what} reference {reference!r}: cannot import {module_name!r} ({failure}); run"
            " from the folder that contains the package, or install it"
        ) from failure
    except Exception as failure:  # the module's own code failed; say so with its error
        raise error(
            f"{what} reference {reference!r}: importing {module_name!r} failed:"
            f" {type(failure).__name__}: {failure}"
        ) from failure
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise error(
                f"{what} reference {reference!r}: {module_name} has no attribute {attribute!r}"
            )
        value = getattr(value, part)
    return value


def _factory_arguments(
    factory: PromptFactory, session: Session, workspace: Path
) -> tuple[Session, Path] | tuple[()]:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: try it without arguments
        return ()
    full: tuple[Session, Path] = (session, workspace)
    for arguments in (full, ()):
        try:
            signature.bind(*arguments)
        except TypeError:
            continue
        return arguments
    raise PromptValidationError(
        f"prompt factory {_factory_name(factory)} takes {signature}: a factory takes"
        " (session, workspace) or no arguments"
    )


def _factory_name(factory: PromptFactory) -> str:
    qualname = getattr(factory, "__qualname__", type(factory).__qualname__)
    return f"{getattr(factory, '__module__', '?')}:{qualname}"


def _rebound_prompt(prompt: Prompt[Any], session: Session) -> Prompt[Any]:
    sections = tuple(_rebound(section, session) for section in prompt.sections)
    if all(new is old for new, old in zip(sections, prompt.sections, strict=True)):
        return prompt
    return dataclasses.replace(prompt, sections=sections)


def _rebound(section: Section, session: Session) -> Section:
    children = tuple(_rebound(child, session) for child in section.children)
    changes: dict[str, Any] = {}
    if any(new is not old for new, old in zip(children, section.children, strict=True)):
        changes["children"] = children
    if any(field.name == "session" for field in dataclasses.fields(section)):
        changes["session"] = session
    return section.clone(**changes) if changes else section
