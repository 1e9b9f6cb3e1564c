"""The error hierarchy: every error is a caller's mistake or a run-time failure, never both,
and each also subclasses the builtin it stands for so existing `except` clauses keep working.

"Every error" is every exception class with a public name in any promptkit module, private
modules included (a caller meets their errors too), not only those of `promptkit.errors`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import promptkit
from promptkit import errors
from promptkit.errors import PromptkitError, RunError, UsageError

BUILTINS = (ValueError, TypeError, OSError, TimeoutError, RuntimeError)


def _modules() -> list[str]:
    return [
        module.name
        for module in pkgutil.walk_packages(promptkit.__path__, "promptkit.")
        if module.name != "promptkit.__main__"
    ]


def _public_error_classes() -> list[type[BaseException]]:
    """Exception classes of promptkit under a public name, in any of its modules."""
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for attribute in dir(module):
            value = None if attribute.startswith("_") else getattr(module, attribute)
            if (
                inspect.isclass(value)
                and issubclass(value, Exception)
                and value.__module__.startswith("promptkit.")
                and value not in {PromptkitError, UsageError, RunError}
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[key] for key in sorted(found)]


def _name(error: type[BaseException]) -> str:
    return f"{error.__module__.removeprefix('promptkit.')}.{error.__qualname__}"


def test_the_error_classes_are_found_beyond_promptkit_errors() -> None:
    modules = {error.__module__ for error in _public_error_classes()}

    assert {
        "promptkit.errors",
        "promptkit.testing._script",
        "promptkit.overrides._files",
    } <= modules


@pytest.mark.parametrize("error", _public_error_classes(), ids=_name)
def test_every_error_is_either_a_usage_error_or_a_run_error(error: type[Exception]) -> None:
    assert issubclass(error, UsageError) != issubclass(error, RunError)


@pytest.mark.parametrize("error", _public_error_classes(), ids=_name)
def test_every_error_also_subclasses_a_builtin(error: type[Exception]) -> None:
    assert issubclass(error, BUILTINS)


def test_a_usage_error_is_caught_by_an_existing_except_value_error() -> None:
    with pytest.raises(ValueError, match="bad key"):
        raise errors.PromptValidationError("bad key")


def test_a_provider_timeout_is_caught_by_except_timeout_error() -> None:
    with pytest.raises(TimeoutError) as raised:
        raise errors.ProviderTimeoutError("deadline passed", status=408, request_id="req_1")

    assert isinstance(raised.value, errors.ProviderTimeoutError)
    assert (raised.value.status, raised.value.request_id) == (408, "req_1")


def test_an_unreachable_provider_is_caught_by_except_connection_error() -> None:
    with pytest.raises(ConnectionError, match="no route"):
        raise errors.ProviderConnectionError("no route")


def test_a_workspace_error_keeps_its_message_as_an_os_error() -> None:
    error = errors.WorkspaceError("src/a.py escapes the workspace /w: use a relative path")

    assert isinstance(error, OSError)
    assert str(error) == "src/a.py escapes the workspace /w: use a relative path"
