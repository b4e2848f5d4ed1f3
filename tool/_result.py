"""``ExecutionResult`` and its content blocks, as upstream MassGen's tool files import them.

A custom tool (``backend.custom_tools``, see ``actors/agent/custom_tools.py``) may return one;
the text of its blocks becomes the tool result the model sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class TextContent:
    data: str
    type: str = "text"


@dataclass
class ExecutionResult:
    output_blocks: list[Any] = field(default_factory=list)
    meta_info: dict[str, Any] | None = None
    is_final: bool = True
    is_log: bool = False
