"""The surfaces agents and the CLI use, over `sandbox`: the `Sandbox` facade (`api`),
agents' hooks, the JSON-lines protocol (`serve`, `protocol`, `jsonlines`), the MCP server,
the effective settings. Nothing below imports this package."""

from .api import EXIT_DENIED, Answer, Asker, RunResult, Sandbox, as_request

__all__ = ["EXIT_DENIED", "Answer", "Asker", "RunResult", "Sandbox", "as_request"]
