"""Upstream MassGen's custom-tool result types, so its tool files (``custom_tools``) import unchanged:
``from massgen.tool._result import ExecutionResult, TextContent`` (its tool files) and
``from massgen.tool import ExecutionResult`` (its tool README)."""

from massgen.tool._result import ExecutionResult, TextContent

__all__ = ["ExecutionResult", "TextContent"]
