"""The application binding: `App` holds what an application would otherwise pass to every call
(adapter, overrides store and tag, session store, settings, prices, default deps), so the code,
the command line (`--app module:attr`) and the operator's promoted text meet in one object.

The user guide is docs/production.md.
"""

from promptkit.app._app import App

__all__ = ["App"]
