"""The built-in workspace prompt under the reference the command line first documented.

`--prompt promptkit.discovery.workspace:workspace_prompt` names the same prompt as
`promptkit.discovery:workspace_prompt`, so scripts written against the earlier reference keep
working now that the module holding it is private.
"""

from promptkit.discovery._workspace import workspace_prompt

__all__ = ["workspace_prompt"]
