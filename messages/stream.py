"""The one normalised stream every backend yields, and the request it answers.

Backends translate their provider's wire format into these events; agents never see
a provider type. Tool-call arguments arrive already parsed; when a model produced
JSON that does not parse, the backend yields a ``ToolCall`` with ``parse_error`` set
so the agent can send a correction instead of crashing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolSpec(_Frozen):
    """A tool offered to the model: name, description and JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


class ToolCall(_Frozen):
    """A complete tool call; ``arguments`` is empty and ``parse_error`` set when JSON was broken."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = ""
    parse_error: str | None = None


class Attachment(_Frozen):
    """A file sent with a message (upstream's ``backend.upload_files``): what it is, never its bytes.

    A local file is named by its absolute ``path`` with its ``size`` and ``sha256`` (the backend
    reads the bytes when it builds the request, and refuses them if they changed); a URL is
    sent as a URL. The trace records this, so a run says what each model was shown.
    """

    kind: Literal["image", "audio", "video", "file"]
    mime_type: str
    path: str | None = None
    url: str | None = None
    size: int | None = None
    sha256: str | None = None


class ChatMessage(_Frozen):
    """One message of a provider-neutral conversation."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    # Files shown with a user message (the task's, from upload_files); each backend sends them its way.
    attachments: tuple[Attachment, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


class ModelRequest(_Frozen):
    """Everything a backend needs for one streamed model call."""

    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    kind: Literal["turn", "present"] = "turn"
    temperature: float | None = None
    max_tokens: int | None = None
    # For backends that cannot call tools natively: the labels a vote may name.
    vote_targets: tuple[str, ...] = ()


class TextDelta(_Frozen):
    type: Literal["text"] = "text"
    text: str


class ReasoningDelta(_Frozen):
    type: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallEvent(_Frozen):
    type: Literal["tool_call"] = "tool_call"
    call: ToolCall


class Usage(_Frozen):
    type: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class Finish(_Frozen):
    type: Literal["finish"] = "finish"
    reason: str = "stop"


class StreamError(_Frozen):
    """A failure the backend could not recover from; ``retryable`` says whose fault it was."""

    type: Literal["error"] = "error"
    message: str
    status: int | None = None
    retryable: bool = False
    # Retrying cannot help in this run (nothing ever answered at the endpoint): the agent is failed at once.
    permanent: bool = False


StreamEvent = Annotated[
    TextDelta | ReasoningDelta | ToolCallEvent | Usage | Finish | StreamError,
    Field(discriminator="type"),
]
