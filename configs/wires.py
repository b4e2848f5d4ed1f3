"""Each wire a backend type speaks, described once: how messages name it, which files it carries,
and what its client loads.

A backend type (``backend_types.py``) names its wire; what follows from the wire is read from here,
never from a table of wire names kept beside the code that uses it: the files the config loader
keeps (``refusal``, ``mapping``) and the backends send (``backends/attachments.py``), and what
``backends/preload.py`` imports ahead of the first call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from massgen.configs.uploads import Entry, Form, form, mime_type

Wire = Literal["chat", "responses", "anthropic", "gemini", "cli", "local", "scripted"]

_FORM_NAMES: dict[Form, str] = {"image": "image", "audio": "audio", "video": "video", "pdf": "PDF",
                                "text": "text document", "office": "office document"}


@dataclass(frozen=True)
class WireType:
    """One wire: what it is called, the files it carries, and what its SDK client needs."""

    name: Wire
    what: str  # as messages name it: "the OpenAI Responses API"
    # The files it sends, by form and by source: (a local file, a URL). A pair not here is not applied;
    # None: it takes no files at all, for the reason ``no_files`` gives.
    sends: Mapping[Form, tuple[bool, bool]] | None = None
    no_files: str = "it reads text only"
    image_types: tuple[str, ...] = ()  # the image types its provider documents; () = not checked
    # SDK modules its client imports only on the first call, which that call would pay for.
    first_use_modules: tuple[str, ...] = ()
    shared_tls: bool = False  # its HTTP client uses the process's shared SSL context (http_base)


_WEB_IMAGES = ("image/png", "image/jpeg", "image/webp", "image/gif")

WIRES: dict[str, WireType] = {w.name: w for w in (
    WireType("responses", "the OpenAI Responses API",
             {"image": (True, True), "pdf": (True, True), "text": (True, False)}, image_types=_WEB_IMAGES,
             first_use_modules=("openai.resources.responses",), shared_tls=True),
    WireType("chat", "Chat Completions", {"image": (True, True), "audio": (True, False), "video": (True, True)},
             shared_tls=True),
    WireType("anthropic", "Anthropic's Messages API",
             {"image": (True, True), "pdf": (True, True), "text": (True, False)}, image_types=_WEB_IMAGES,
             first_use_modules=("anthropic.resources.messages",), shared_tls=True),
    WireType("gemini", "Gemini", {"image": (True, False), "audio": (True, False), "video": (True, False),
                                  "pdf": (True, False), "text": (True, False)},
             image_types=("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"), shared_tls=True),
    WireType("cli", "an agent CLI", no_files="an agent CLI is given its task as text"),
    WireType("local", "the local model server", no_files="the local model reads text only"),
    WireType("scripted", "a script", no_files="a scripted backend plays its script"),
)}


def refusal(wire: str, type_name: str, entry: Entry) -> str | None:
    """Why a backend of ``type_name`` (speaking ``wire``) cannot send this entry, else None."""
    described = WIRES.get(wire)
    if described is None or described.sends is None:
        how = described.no_files if described is not None else "it reads text only"
        return f"backend type {type_name!r} takes no files ({how})"
    shape = form(entry)
    local, url = described.sends.get(shape, (False, False))
    if (shape == "image" and described.image_types
            and mime_type("image", entry.value.split("?")[0]) not in described.image_types):
        listed = ", ".join(t.removeprefix("image/").upper() for t in described.image_types)
        return f"{described.what} takes {listed} images"
    if (url if entry.url else local):
        return None
    if shape == "office":
        return ("office documents reach only upstream's OpenAI file search (a vector store), which is "
                + "not available in this version; send a PDF or text file")
    if entry.url and local:
        return (f"{described.what} is sent {_FORM_NAMES[shape]} input inline here, not by URL; "
                + "download the file and name it instead")
    return f"{described.what} takes no {_FORM_NAMES[shape]} input here"


def mapping(wire: str, entry: Entry) -> str | None:
    """How a sent entry differs from upstream's way of sending it, where it does."""
    if wire == "responses" and entry.kind == "file":
        how = "its text, as input_text" if form(entry) == "text" else "an input_file"
        return (f"sent with the task as {how}; upstream uploads it to an OpenAI vector store for file_search, "
                + "which is not available in this version")
    return None
