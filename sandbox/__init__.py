"""OS confinement and execution, built on `policy`."""

from .api import Sandbox, as_request

__all__ = ["Sandbox", "as_request"]
