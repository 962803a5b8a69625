"""Loading through Hugging Face `datasets`, offline unless a hub download is really needed.

`datasets` and `huggingface_hub` read HF_HUB_OFFLINE once at import; without it even a local-file load
tries a DNS look-up (slowly tolerating its failure). They consult the module attributes at call time, so
switching those is what turns the network off for one load.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

from harness.data.errors import DataError

OFFLINE_ENV = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
# Local files above this size take long enough to convert that `datasets`' progress bar is worth showing.
LARGE_LOCAL_BYTES = 50_000_000


def offline_requested() -> bool:
    """Whether the user forbade network access for Hugging Face libraries."""
    return any(os.environ.get(name, "").strip().upper() in ("1", "ON", "YES", "TRUE") for name in OFFLINE_ENV)


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Make `datasets` and `huggingface_hub` work from local files and caches only, for this block.

    Their warnings are limited to errors meanwhile: "using the cached version, the Hub is unreachable" is
    the expected case here, not news worth printing on every run.
    """
    import datasets.config
    import datasets.utils.logging as datasets_logging
    import huggingface_hub.constants

    saved = (datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE,
             huggingface_hub.constants.HF_HUB_OFFLINE)
    verbosity = datasets_logging.get_verbosity()
    datasets.config.HF_HUB_OFFLINE = datasets.config.HF_DATASETS_OFFLINE = True
    huggingface_hub.constants.HF_HUB_OFFLINE = True
    datasets_logging.set_verbosity_error()
    try:
        yield
    finally:
        (datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE,
         huggingface_hub.constants.HF_HUB_OFFLINE) = saved
        datasets_logging.set_verbosity(verbosity)


@contextlib.contextmanager
def progress_bars(enabled: bool) -> Iterator[None]:
    """Show or hide `datasets`' own progress bars for this block."""
    import datasets

    was_enabled = not datasets.are_progress_bars_disabled()
    (datasets.enable_progress_bars if enabled else datasets.disable_progress_bars)()
    try:
        yield
    finally:
        (datasets.enable_progress_bars if was_enabled else datasets.disable_progress_bars)()


def load_local(source: str, loader: str, files: list[str], cache_dir: str) -> Any:
    """Local text/json/parquet files as one `datasets.Dataset` (never touches the network).

    A .txt file is read as paragraphs (blank-line separated), each one a document.
    """
    import datasets

    options = {"sample_by": "paragraph"} if loader == "text" else {}
    show_progress = sum(os.path.getsize(f) for f in files) > LARGE_LOCAL_BYTES
    with hub_offline(), progress_bars(show_progress):
        try:
            return datasets.load_dataset(loader, data_files=files, split="train", cache_dir=cache_dir, **options)
        except datasets.exceptions.DatasetGenerationError as error:
            cause = error.__cause__ or error
            raise DataError(
                f"DataConfig.source={source!r}: could not read its {loader} files ({len(files)}, the first "
                f"{files[0]!r}): {type(cause).__name__}: {cause}"
            ) from None


def load_hub(name: str, split: str) -> Any:
    """A hub dataset's split: from the local Hugging Face cache, else downloaded unless HF_HUB_OFFLINE=1."""
    import datasets

    try:
        with hub_offline():
            return datasets.load_dataset(name, split=split)
    except Exception as cached_error:  # datasets raises FileNotFoundError, ConnectionError or ValueError here
        if offline_requested():
            raise DataError(
                f"DataConfig.source={name!r}: hub dataset (split {split!r}) is not in the local Hugging Face "
                f"cache and HF_HUB_OFFLINE=1 forbids downloading it ({cached_error}). Download it once on a "
                f"machine with network, or use source='default' or a local path (no file or directory has this name)."
            ) from None
    try:
        return datasets.load_dataset(name, split=split)
    except Exception as download_error:
        raise DataError(
            f"DataConfig.source={name!r}: hub dataset (split {split!r}) is neither in the local Hugging Face "
            f"cache nor downloadable ({type(download_error).__name__}: {download_error}). "
            f"Use source='default', an existing local .txt/.jsonl/.json/.parquet path (none has this name), or a "
            f"dataset already downloaded."
        ) from None
