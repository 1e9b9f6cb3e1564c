"""The application binding: `App` holds what an application would otherwise pass to every call
(adapter, overrides store and tag, session store, settings, prices, default deps), so the code,
the command line (`--app module:attr`, read by `load_app`) and the operator's promoted text
meet in one object.

The user guide is docs/production.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.app._app import App as App, load_app as load_app
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__, {"promptkit.app._app": ("App", "load_app")}
    )
