"""Upstream MassGen's ``backend.upload_files``: files shown to the model with the task.

An entry names one file by kind, as upstream writes it: ``image_path``, ``audio_path``,
``video_path`` or ``file_path`` (a document), each a local path or an ``http(s)`` URL. A
relative path is taken from the working directory, as upstream takes it when the backend
has no ``cwd`` (its examples name ``massgen/configs/resources/...`` from the repository root).
Local files are checked when the config loads, with upstream's limits: images, audio and
video at most ``media_max_file_size_mb`` (64 MB unless the backend sets it), audio WAV or
MP3 only, documents of the types upstream's file search takes, at most 512 MB.

Which wire carries which form is said once, in each wire's description (``configs/wires.py``:
``refusal``): the config loader warns for an entry a backend type cannot send, and the backends send
the rest in their own format.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from massgen.messages.stream import Attachment
from massgen.outcome.errors import ConfigError

Kind = Literal["image", "audio", "video", "file"]
# Upstream's entry keys and the kind each names.
ENTRY_KEYS: dict[str, Kind] = {"image_path": "image", "audio_path": "audio", "video_path": "video",
                               "file_path": "file"}
MEDIA_MAX_FILE_SIZE_MB = 64  # upstream's default for images, audio and video
FILE_MAX_SIZE_MB = 512  # upstream's limit for documents (OpenAI file search's)
# Upstream's file search extensions: the documents a file_path may name.
FILE_EXTENSIONS = frozenset({
    ".c", ".cpp", ".cs", ".css", ".doc", ".docx", ".html", ".java", ".js", ".json", ".md", ".pdf",
    ".php", ".pptx", ".py", ".rb", ".sh", ".tex", ".ts", ".txt",
})
_AUDIO = {"audio/wav": "audio/wav", "audio/wave": "audio/wav", "audio/x-wav": "audio/wav",
          "audio/mpeg": "audio/mpeg", "audio/mp3": "audio/mpeg"}
_DEFAULT_MIME: dict[Kind, str] = {"image": "image/jpeg", "audio": "audio/wav", "video": "video/mp4",
                                  "file": "application/octet-stream"}
_CHUNK = 1 << 20


def is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


def resolve(value: str) -> Path:
    """A local entry's file: ``~`` expanded, relative paths from the working directory."""
    return Path(os.path.abspath(os.path.expanduser(value)))


@dataclass(frozen=True)
class Entry:
    """One entry: its key (``image_path``, ...), the kind that key names, and the path or URL as written."""

    key: str
    kind: Kind
    value: str

    @property
    def url(self) -> bool:
        return is_url(self.value)


def mime_type(kind: Kind, name: str) -> str:
    guessed = (mimetypes.guess_type(name)[0] or "").lower()
    if kind == "audio":
        return _AUDIO.get(guessed, guessed)
    if kind == "file" and name.lower().endswith(".md"):
        return "text/markdown"
    return guessed or _DEFAULT_MIME[kind]


def problem(entry: Entry, media_limit_mb: float | None) -> str | None:
    """What is wrong with a local entry's file (missing, unreadable, wrong type, too large), else None."""
    if entry.url:
        return None
    path = resolve(entry.value)
    where = f"{entry.key} {entry.value!r}" + (f" ({path})" if str(path) != entry.value else "")
    if not path.is_file():
        return f"{where}: no such file" if not path.exists() else f"{where}: not a file"
    if not os.access(path, os.R_OK):
        return f"{where}: not readable"
    guessed = (mimetypes.guess_type(path.name)[0] or "").lower()
    if entry.kind in ("image", "video") and guessed and not guessed.startswith(f"{entry.kind}/"):
        return f"{where}: a {guessed} file is not {'an image' if entry.kind == 'image' else 'a video'}"
    if entry.kind == "audio" and mime_type("audio", path.name) not in ("audio/wav", "audio/mpeg"):
        return f"{where}: audio must be WAV or MP3 (as upstream takes it)"
    if entry.kind == "file" and path.suffix.lower() not in FILE_EXTENSIONS:
        return (f"{where}: documents of type {path.suffix or '(none)'!r} are not taken; "
                f"one of {', '.join(sorted(FILE_EXTENSIONS))}")
    limit_mb = FILE_MAX_SIZE_MB if entry.kind == "file" else (media_limit_mb or MEDIA_MAX_FILE_SIZE_MB)
    size = path.stat().st_size
    if size > limit_mb * 1024 * 1024:
        setting = "" if entry.kind == "file" else " (backend.media_max_file_size_mb)"
        return f"{where}: {size / (1024 * 1024):.1f} MB is over the {limit_mb:g} MB limit{setting}"
    if form(entry) == "text":
        try:
            path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError) as exc:
            return f"{where}: a text document must be UTF-8 text ({type(exc).__name__})"
    return None


def attachment(entry: Entry) -> Attachment:
    """The entry as a message attachment: a local file is read once for its size and sha256."""
    if entry.url:
        return Attachment(kind=entry.kind, mime_type=mime_type(entry.kind, entry.value.split("?")[0]),
                          url=entry.value)
    path = resolve(entry.value)
    digest = hashlib.sha256()
    size = 0
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        raise ConfigError(f"backend.upload_files: {entry.key} {entry.value!r}: cannot be read: {exc}") from None
    return Attachment(kind=entry.kind, mime_type=mime_type(entry.kind, path.name), path=str(path), size=size,
                      sha256=digest.hexdigest())


# Documents by form: PDFs go as the provider's document input, text files as text; office files
# (.doc, .docx, .pptx) only reach upstream's OpenAI file search (a vector store), which is not here.
_OFFICE = frozenset({".doc", ".docx", ".pptx"})
Form = Literal["image", "audio", "video", "pdf", "text", "office"]


def form(entry: Entry) -> Form:
    """What an entry is on the wire: its kind, or for a document PDF, text or an office file."""
    if entry.kind != "file":
        return entry.kind
    suffix = Path(entry.value.split("?")[0]).suffix.lower()
    return "pdf" if suffix == ".pdf" else "office" if suffix in _OFFICE else "text"
