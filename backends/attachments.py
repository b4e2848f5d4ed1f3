"""The bytes of a message's attachments (``upload_files``), as the providers' wires carry them.

A message names a local file by path, size and sha256 (``messages.stream.Attachment``); the
bytes are read here when a request is built, once per file and process, and refused if the
file changed since the run began (what the trace says was sent must be what was sent).
Each backend module turns them into its own parts; ``wanted`` keeps only those its wire
sends (the config loader already warned about the rest).
"""

from __future__ import annotations

import base64
import functools
import hashlib
from pathlib import Path

from massgen.backends.retry import StreamFailure
from massgen.configs.uploads import Entry
from massgen.configs.wires import refusal
from massgen.messages.stream import Attachment, ChatMessage


def wanted(wire: str, message: ChatMessage) -> tuple[Attachment, ...]:
    """The message's attachments a backend on ``wire`` sends."""
    return tuple(a for a in message.attachments
                 if refusal(wire, "", Entry("", a.kind, a.url or a.path or "")) is None)


@functools.lru_cache(maxsize=8)  # at most 8 files (64 MB each by default) kept
def _read(path: str, sha256: str | None) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise StreamFailure(f"upload_files: {path} cannot be read: {exc}") from None
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise StreamFailure(f"upload_files: {path} changed since the run began; start the run again")
    return data


def payload(attachment: Attachment) -> bytes:
    """A local attachment's bytes (``StreamFailure``, not retried, if it is gone or changed)."""
    assert attachment.path is not None, "a URL attachment has no bytes here"
    return _read(attachment.path, attachment.sha256)


def base64_data(attachment: Attachment) -> str:
    """The bytes as base64, encoded once per file: every call of every turn sends them again."""
    assert attachment.path is not None, "a URL attachment has no bytes here"
    return _base64(attachment.path, attachment.sha256)


@functools.lru_cache(maxsize=8)
def _base64(path: str, sha256: str | None) -> str:
    return base64.b64encode(_read(path, sha256)).decode("ascii")


def data_url(attachment: Attachment) -> str:
    """``data:<type>;base64,...``, or the attachment's own URL."""
    if attachment.url is not None:
        return attachment.url
    return f"data:{attachment.mime_type};base64,{base64_data(attachment)}"


def text(attachment: Attachment) -> str:
    """A text document as text the model reads, headed by its file name."""
    return f"Contents of {Path(attachment.path or '').name}:\n{payload(attachment).decode('utf-8', 'replace')}"


def is_text(attachment: Attachment) -> bool:
    """A document that is sent as text (not a PDF)."""
    return attachment.kind == "file" and attachment.mime_type != "application/pdf"


def file_name(attachment: Attachment) -> str:
    return Path(attachment.url or attachment.path or "file").name.split("?")[0] or "file"
