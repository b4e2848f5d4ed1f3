"""``backend.upload_files`` (upstream MassGen's): the files reach each provider's request, in its format.

The team runs against one loopback server that speaks every wire (``tests/wire/team_providers.py``)
through the official clients; the request each provider receives is checked for the file's part,
byte for byte, and the trace for what was attached (path, kind, size, sha256 — never the bytes).
A file that cannot be sent is a config error naming ``agents[i].backend.upload_files[j]``; a kind a
provider cannot take is one warning naming the key.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from support import of_type, records, run_team
from wire.team_providers import ProviderTeamServer

from massgen.configs import ConfigError, validate_data

# A 1x1 PNG: a real image file, small enough to read in a failure message.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
PNG_B64 = base64.b64encode(PNG).decode()
_BASES = {"openai": "/v1", "chatcompletion": "/v1", "claude": "", "gemini": "/"}


def _team(url: str, entries: list[dict[str, str]], types: tuple[str, ...] = tuple(_BASES)) -> dict[str, Any]:
    return {
        "agents": [{"id": f"{t}_agent", "backend": {"type": t, "model": f"{t}-model", "base_url": url + _BASES[t],
                                                     "api_key": "test-key", "upload_files": entries}}
                   for t in types],
        "timeout_settings": {"orchestrator_timeout_seconds": 120},
    }


def _first_user_content(wire: str, body: dict[str, Any]) -> Any:
    if wire == "responses":
        return next(i["content"] for i in body["input"] if i.get("role") == "user")
    if wire == "gemini":
        return next(c["parts"] for c in body["contents"] if c["role"] == "user")
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def test_an_image_reaches_every_provider_in_its_own_format_and_the_trace_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "chart.png").write_bytes(PNG)
    with ProviderTeamServer() as server:
        config = validate_data(_team(server.url, [{"image_path": "pics/chart.png"}]), "team.yaml")
        assert config.notices == ()  # nothing is "not applied": every provider takes an image
        import anthropic  # noqa: F401  (the SDKs imported once here, as the command line preloads them)
        import google.genai  # noqa: F401
        import openai  # noqa: F401

        result = run_team(config, tmp_path)
    assert result.status == "completed" and "4" in (result.final_answer or "")
    data_url = f"data:image/png;base64,{PNG_B64}"
    expected = {
        "responses": {"type": "input_image", "image_url": data_url, "detail": "auto"},
        "chat": {"type": "image_url", "image_url": {"url": data_url}},
        "anthropic": {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
        # google-genai renames the part's key only (proto JSON takes both spellings of the inner ones).
        "gemini": {"inlineData": {"mime_type": "image/png", "data": PNG_B64}},
    }
    for wire, part in expected.items():
        bodies = server.bodies(wire)
        assert bodies, wire
        for body in bodies:  # every call of the turn and the presentation shows the task's image
            content = _first_user_content(wire, body)
            assert part in content, (wire, content)
            text = content[0].get("text", "")
            assert text.startswith("Task:\nWhat is 2+2?"), (wire, content[0])  # beside the task, not instead
    trace = records(result)
    attached = [a for r in of_type(trace, "ModelRequestSent") for m in r["payload"]["messages"]
                for a in m.get("attachments", [])]
    assert len({r["sender"] for r in of_type(trace, "ModelRequestSent") if any(
        m.get("attachments") for m in r["payload"]["messages"])}) == 4  # each agent's first request says it
    assert attached and all(a == {
        "kind": "image", "mime_type": "image/png", "path": str(tmp_path / "pics" / "chart.png"), "url": None,
        "size": len(PNG), "sha256": hashlib.sha256(PNG).hexdigest()} for a in attached)
    assert PNG_B64 not in (result.log_dir / "trace.jsonl").read_text(encoding="utf-8")  # not the bytes


def test_documents_and_audio_are_sent_where_the_provider_takes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
    (tmp_path / "report.pdf").write_bytes(pdf)
    (tmp_path / "notes.md").write_text("# Notes\nThe answer is four.\n", encoding="utf-8")
    wav = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00\x02\x00\x10\x00data"
    (tmp_path / "hello.wav").write_bytes(wav)
    entries = [{"file_path": "report.pdf"}, {"file_path": "notes.md"}, {"audio_path": "hello.wav"}]
    with ProviderTeamServer() as server:
        config = validate_data(_team(server.url, entries), "team.yaml")
        # Audio reaches Chat Completions and Gemini; documents all but Chat Completions: the rest is said.
        assert sorted(config.notices) == sorted([
            "backend.upload_files[0] (agent chatcompletion_agent): not applied: file_path report.pdf: "
            "Chat Completions takes no PDF input here",
            "backend.upload_files[1] (agent chatcompletion_agent): not applied: file_path notes.md: "
            "Chat Completions takes no text document input here",
            "backend.upload_files[2] (agent openai_agent): not applied: audio_path hello.wav: "
            "the OpenAI Responses API takes no audio input here",
            "backend.upload_files[2] (agent claude_agent): not applied: audio_path hello.wav: "
            "Anthropic's Messages API takes no audio input here",
            "backend.upload_files[0] (agent openai_agent): mapped: file_path report.pdf: sent with the task as an "
            "input_file; upstream uploads it to an OpenAI vector store for file_search, which is not available in "
            "this version",
            "backend.upload_files[1] (agent openai_agent): mapped: file_path notes.md: sent with the task as its "
            "text, as input_text; upstream uploads it to an OpenAI vector store for file_search, which is not "
            "available in this version",
        ]), config.notices
        import anthropic  # noqa: F401
        import google.genai  # noqa: F401
        import openai  # noqa: F401

        result = run_team(config, tmp_path)
    assert result.status == "completed"
    pdf_b64, wav_b64 = base64.b64encode(pdf).decode(), base64.b64encode(wav).decode()
    notes = "Contents of notes.md:\n# Notes\nThe answer is four.\n"
    responses = _first_user_content("responses", server.bodies("responses")[0])
    assert {"type": "input_file", "filename": "report.pdf",
            "file_data": f"data:application/pdf;base64,{pdf_b64}"} in responses
    assert {"type": "input_text", "text": notes} in responses
    claude = _first_user_content("anthropic", server.bodies("anthropic")[0])
    assert {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": pdf_b64}} \
        in claude
    assert {"type": "document", "title": "notes.md",
            "source": {"type": "text", "media_type": "text/plain", "data": "# Notes\nThe answer is four.\n"}} in claude
    gemini = _first_user_content("gemini", server.bodies("gemini")[0])
    assert {"inlineData": {"mime_type": "application/pdf", "data": pdf_b64}} in gemini
    assert {"inlineData": {"mime_type": "audio/wav", "data": wav_b64}} in gemini and {"text": notes} in gemini
    chat = _first_user_content("chat", server.bodies("chat")[0])
    assert chat[1:] == [{"type": "input_audio", "input_audio": {"data": wav_b64, "format": "wav"}}]


def test_an_image_url_is_sent_as_a_url(tmp_path: Path) -> None:
    url = "https://example.com/chart.png"
    with ProviderTeamServer() as server:
        config = validate_data(_team(server.url, [{"image_path": url}], ("openai", "claude", "gemini")), "team.yaml")
        assert config.notices == ("backend.upload_files[0] (agent gemini_agent): not applied: image_path "
                                  f"{url}: Gemini is sent image input inline here, not by URL; download the file "
                                  "and name it instead",)
        import anthropic  # noqa: F401
        import google.genai  # noqa: F401
        import openai  # noqa: F401

        result = run_team(config, tmp_path)
    assert result.status == "completed"
    assert {"type": "input_image", "image_url": url, "detail": "auto"} in _first_user_content(
        "responses", server.bodies("responses")[0])
    assert {"type": "image", "source": {"type": "url", "url": url}} in _first_user_content(
        "anthropic", server.bodies("anthropic")[0])
    assert all(isinstance(p, dict) and set(p) == {"text"} for p in _first_user_content(
        "gemini", server.bodies("gemini")[0]))


def _error(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        validate_data(data, "team.yaml")
    return str(caught.value)


def _one_agent(*entries: dict[str, Any], **backend: Any) -> dict[str, Any]:
    return {"agents": [
        {"id": "a", "backend": {"type": "openai", "api_key": "k"}},
        {"id": "b", "backend": {"type": "claude", "api_key": "k", "upload_files": list(entries), **backend}},
    ]}


def test_a_file_that_cannot_be_sent_is_a_config_error_naming_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.png").write_bytes(PNG)
    (tmp_path / "song.ogg").write_bytes(b"OggS")
    (tmp_path / "slides.key").write_bytes(b"x")
    (tmp_path / "big.png").write_bytes(b"\0" * (2 * 1024 * 1024 + 1))
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    missing = _error(_one_agent({"image_path": "ok.png"}, {"image_path": "pics/missing.png"}))
    assert missing == (f"team.yaml: invalid config\n  agents[1].backend.upload_files[1]: image_path "
                       f"'pics/missing.png' ({tmp_path / 'pics' / 'missing.png'}): no such file")
    assert "agents[1].backend.upload_files[0]: audio_path 'song.ogg'" in _error(_one_agent({"audio_path": "song.ogg"}))
    assert "WAV or MP3" in _error(_one_agent({"audio_path": "song.ogg"}))
    assert "documents of type '.key' are not taken" in _error(_one_agent({"file_path": "slides.key"}))
    assert "a text/plain file is not an image" in _error(_one_agent({"image_path": "latin1.txt"}))
    assert "must be UTF-8 text" in _error(_one_agent({"file_path": "latin1.txt"}))
    over = _error(_one_agent({"image_path": "big.png"}, media_max_file_size_mb=2))
    assert "agents[1].backend.upload_files[0]: image_path 'big.png'" in over
    assert "2.0 MB is over the 2 MB limit (backend.media_max_file_size_mb)" in over
    assert "upload_files[0].movie_path: unknown key" in _error(_one_agent({"movie_path": "x.mp4"}))
    assert "exactly one of image_path" in _error(_one_agent({"image_path": "ok.png", "file_path": "a.pdf"}))


def test_validate_warns_of_a_missing_file_strict_exits_1_and_it_warns_once_where_a_backend_takes_no_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from massgen.cli.main import main

    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "missing.yaml"
    missing.write_text(json.dumps(_one_agent({"image_path": "gone.png"})), encoding="utf-8")
    # A file this machine lacks is the machine's, not the config's (issue 38): a warning, an error under --strict
    assert main(["--validate", str(missing)]) == 0
    err = capsys.readouterr().err
    assert "backend.upload_files: image_path 'gone.png'" in err and "no such file" in err and "warning" in err
    assert main(["--validate", str(missing), "--strict"]) == 1
    err = capsys.readouterr().err
    assert "image_path 'gone.png'" in err and "no such file" in err
    assert "Traceback" not in err
    (tmp_path / "ok.png").write_bytes(PNG)
    cli = tmp_path / "cli.yaml"
    cli.write_text(json.dumps({"agents": [{"id": "coder", "backend": {"type": "claude_code",
                                                                      "upload_files": [{"image_path": "ok.png"}]}}]}),
                   encoding="utf-8")
    assert main(["--validate", str(cli)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "upload_files" in line]
    assert warnings == [f"massgen: warning: {cli}: backend.upload_files[0] (agent coder): not applied: "
                        "image_path ok.png: backend type 'claude_code' takes no files (an agent CLI is given its "
                        "task as text)"]


def test_a_file_changed_after_the_run_began_is_refused_not_sent(tmp_path: Path) -> None:
    from wire import protocols as p
    from wire.harness import Recorder, error_of, run_call
    from wire.server import Stream, WireServer

    from massgen.backends.openai_chat import create
    from massgen.configs import uploads
    from massgen.configs.schema import BackendConfig
    from massgen.messages.stream import ChatMessage, ModelRequest

    image = tmp_path / "chart.png"
    image.write_bytes(PNG)
    shown = uploads.attachment(uploads.Entry("image_path", "image", str(image)))  # as the run began
    image.write_bytes(PNG + b"edited")
    with WireServer() as server:
        server.script(Stream(p.chat_text("4")))
        rec = Recorder()
        backend = create(BackendConfig(type="chatcompletion", base_url=server.url + "/v1", model="m"),
                         rec.context(), retrier=rec.retrier())
        events = run_call(backend, ModelRequest(messages=(
            ChatMessage(role="user", content="What is in it?", attachments=(shown,)),)))
        assert server.requests == []  # nothing was sent
    error = error_of(events)
    assert f"upload_files: {image} changed since the run began" in error.message and not error.retryable
