"""A corpus: the documents a `DataConfig` names, their content hash, and a cheap way to skip reloading them.

A source is one of three kinds, told apart without the network: "default" (the built-in corpus), a hub
dataset name (`owner/name`, as the hub spells them, whose `owner` is not a local directory), and otherwise a
local path: so a mistyped local folder is reported as missing at once instead of being looked up online. Every kind
yields documents: stripped, non-empty strings in source order, capped at `max_chars`. The corpus hash is computed from
that text, so the same text read from .txt, .jsonl or .parquet shares one tokenizer and token cache.

Loading and hashing the text costs seconds; a small manifest keyed by a cheap fingerprint of the source
(file sizes and mtimes, the Python build, the hub dataset's fingerprint) remembers the hash, so a warm
start never reads the text at all.
"""

from __future__ import annotations

import glob
import hashlib
import json
import re
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

from harness.config.data import DEFAULT_SOURCE, DataConfig
from harness.data.cache import build_once
from harness.data.default_corpus import default_documents, default_fingerprint
from harness.data.errors import DataError
from harness.data.hub import load_hub, load_local

LOADERS = {".txt": "text", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}
SourceKind = Literal["default", "local", "hub"]


@dataclass(frozen=True)
class Source:
    """Where a corpus comes from, resolved: its kind, and for local sources the files and their loader."""

    kind: SourceKind
    name: str
    files: tuple[str, ...] = ()
    loader: str | None = None


@dataclass(frozen=True)
class CorpusStats:
    """What the manifest remembers about a corpus: its content hash and size."""

    corpus_hash: str
    documents: int
    chars: int


HUB_NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # the hub's rule for owner and dataset names


def _looks_like_hub_name(source: str) -> bool:
    """`owner/name` that is not a path: nothing by that name on disk, no known extension, and no local
    directory called `owner` (then `owner/name` is a mistyped path inside it)."""
    parts = source.split("/")
    return (
        len(parts) == 2 and all(HUB_NAME_PART.fullmatch(part) for part in parts)
        and Path(parts[1]).suffix.lower() not in LOADERS
        and not Path(source).exists() and not Path(parts[0]).is_dir()
    )


def _local_files(source: str) -> list[Path]:
    """Files a local source names: the file itself, a directory's supported files (recursively), or a glob's matches."""
    path = Path(source).expanduser()
    if path.is_file():
        candidates = [path]
    elif path.is_dir():
        candidates = [p for p in path.rglob("*") if p.is_file()]
    else:
        candidates = [Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file()]
    return sorted(p for p in candidates if p.suffix.lower() in LOADERS)


def resolve_source(cfg: DataConfig) -> Source:
    """Decide which kind of source `cfg.source` is and, for local ones, which files it means."""
    if cfg.source == DEFAULT_SOURCE:
        kind: SourceKind = "default"
    elif _looks_like_hub_name(cfg.source):
        kind = "hub"
    else:
        kind = "local"
    if kind != "hub" and cfg.split != "train":
        raise DataError(f"DataConfig.split={cfg.split!r} is invalid: a {kind} source has only the 'train' split.")
    if kind != "local":
        return Source(kind, cfg.source)

    files = _local_files(cfg.source)
    if not files:
        path = Path(cfg.source).expanduser()
        if path.is_file():
            reason = f"is not a .txt/.jsonl/.json/.parquet file (its extension is {path.suffix or 'none'!r})"
        elif path.exists():
            reason = "holds no .txt/.jsonl/.json/.parquet files"
        else:
            reason = "does not exist (no file, directory or glob match; a hub dataset is named owner/name)"
        raise DataError(f"DataConfig.source={cfg.source!r}: data path {reason}.")
    loaders = {LOADERS[p.suffix.lower()] for p in files}
    if len(loaders) > 1:
        raise DataError(
            f"DataConfig.source={cfg.source!r} mixes file kinds ({', '.join(sorted(loaders))}); "
            f"point it at files of one kind: .txt, .jsonl/.json or .parquet."
        )
    return Source("local", cfg.source, tuple(str(p.resolve()) for p in files), loaders.pop())


def hash_documents(documents: Iterable[str]) -> str:
    """Content hash of a document sequence (length-prefixed, so document boundaries count)."""
    digest = hashlib.sha256()
    for document in documents:
        data = document.encode()
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def cap_chars(documents: Iterable[str], max_chars: int | None) -> Iterator[str]:
    """Stripped, non-empty documents, stopping (and cutting the last one) at `max_chars` characters."""
    remaining = max_chars
    for document in documents:
        document = document.strip()
        if not document:
            continue
        if remaining is not None:
            document = document[:remaining]
            remaining -= len(document)
        yield document
        if remaining == 0:
            return


def _dataset_texts(dataset: Any, field: str, source: str) -> Iterator[str]:
    """The `field` column of a `datasets.Dataset`, batch by batch, checked for being text."""
    if field not in dataset.column_names:
        raise DataError(
            f"DataConfig.text_field={field!r} is not a column of {source!r}; "
            f"valid columns: {', '.join(map(repr, dataset.column_names))}."
        )
    for batch in dataset.select_columns([field]).iter(batch_size=4096):
        for value in batch[field]:
            if value is None:
                continue
            if not isinstance(value, str):
                raise DataError(
                    f"DataConfig.text_field={field!r} of {source!r} holds {type(value).__name__} values, not text; "
                    f"valid columns: {', '.join(map(repr, dataset.column_names))}."
                )
            yield value


class Corpus:
    """The text of a `DataConfig`, loaded lazily: a warm cache needs only `stats`, never `documents`."""

    def __init__(self, cfg: DataConfig, cache_dir: Path) -> None:
        self.cfg = cfg
        self.cache_dir = cache_dir
        self.source = resolve_source(cfg)

    @cached_property
    def _hub_dataset(self) -> Any:
        return load_hub(self.source.name, self.cfg.split)

    def _raw_documents(self) -> Iterable[str]:
        if self.source.kind == "default":
            return default_documents()
        if self.source.kind == "hub":
            return _dataset_texts(self._hub_dataset, self.cfg.text_field, self.source.name)
        if all(Path(path).stat().st_size == 0 for path in self.source.files):
            return []  # datasets cannot even infer a schema from empty files; `documents` reports it
        assert self.source.loader is not None  # resolve_source gives local files their loader
        dataset = load_local(self.source.name, self.source.loader, list(self.source.files),
                             str(self.cache_dir / "hf-datasets"))
        field = "text" if self.source.loader == "text" else self.cfg.text_field  # .txt files have no columns
        return _dataset_texts(dataset, field, self.source.name)

    @cached_property
    def documents(self) -> list[str]:
        """Stripped, non-empty documents in source order, at most `max_chars` characters in all."""
        documents = list(cap_chars(self._raw_documents(), self.cfg.max_chars))
        if not documents:
            raise DataError(f"DataConfig.source={self.cfg.source!r}: the corpus is empty (0 characters of text).")
        return documents

    @cached_property
    def fingerprint(self) -> str:
        """Cheap identity of the source and the settings that shape its text (no text is read)."""
        if self.source.kind == "default":
            identity: Any = default_fingerprint()
        elif self.source.kind == "hub":
            identity = self._hub_dataset._fingerprint  # datasets' own content identity of the cached split
        else:
            identity = [(path, Path(path).stat().st_size, Path(path).stat().st_mtime_ns) for path in self.source.files]
        settings = [self.source.kind, self.source.loader, identity, self.cfg.text_field, self.cfg.split,
                    self.cfg.max_chars]
        return hashlib.sha256(json.dumps(settings).encode()).hexdigest()

    @property
    def manifest_path(self) -> Path:
        """Where the corpus hash of this source is remembered."""
        return self.cache_dir / "corpora" / f"{self.fingerprint[:32]}.json"

    @property
    def text_was_read(self) -> bool:
        """Whether this object had to read the text (a warm cache never does)."""
        return "documents" in vars(self)

    @cached_property
    def stats(self) -> CorpusStats:
        """Content hash and size: computed from the text once per source, then read from the manifest.

        Built under the cache lock, so of many workers starting cold only one reads and hashes the text.
        """
        def counted() -> CorpusStats:
            return CorpusStats(hash_documents(self.documents), len(self.documents), sum(map(len, self.documents)))

        build_once(self.manifest_path, lambda temp: temp.write_text(json.dumps(asdict(counted()))))
        return CorpusStats(**json.loads(self.manifest_path.read_text()))
