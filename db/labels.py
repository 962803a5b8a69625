"""A sweep's labels: its tags and whether it is archived, one small file per sweep.

    <results>/sweeps/<sweep>/labels.json    {"tags": ["paper", "qk"], "archived": false}

Labels are the reader's, not the plan's: no launch writes them, `--replace` keeps them (only the plan moves to the
history), and archiving hides a sweep from the default index and listing without touching a file of it. The file is
replaced atomically (temp file + rename); a change reads, edits and writes it under an exclusive lock of
`.labels.lock` beside it, so a tag added from the dashboard and one from the command line at once are both kept.
A sweep without the file has no tags and is not archived.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from db.errors import DbError
from db.sweeps import SWEEPS_DIR, check_sweep_name, sweep_dir

LABELS_FILE = "labels.json"
LOCK_FILE = ".labels.lock"
TAG_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+:/-]{0,39}$")


@dataclass(frozen=True)
class Labels:
    """A sweep's tags (sorted, each once) and archive state."""

    tags: tuple[str, ...] = ()
    archived: bool = False

    def to_json(self) -> str:
        return json.dumps({"tags": list(self.tags), "archived": self.archived}, indent=1)


def check_tag(tag: str) -> None:
    """Tags become URL parameters and table cells: 1-40 letters, digits and `._+:/-`, starting with a letter or
    digit."""
    if not isinstance(tag, str) or not TAG_PATTERN.match(tag):
        raise DbError(f"tag {tag!r} is invalid: use 1-40 characters from letters, digits and '._+:/-', starting with "
                      "a letter or digit.")


def labels_path(results_dir: str | os.PathLike, sweep: str) -> Path:
    """`<results>/sweeps/<sweep>/labels.json`."""
    return sweep_dir(results_dir, sweep) / LABELS_FILE


def _parsed(path: Path) -> Labels:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        tags, archived = record["tags"], record["archived"]
        if not isinstance(tags, list) or not isinstance(archived, bool):
            raise ValueError("tags must be a list and archived true or false")
        for tag in tags:
            check_tag(tag)
    except FileNotFoundError:
        return Labels()
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:  # DbError is a ValueError too
        raise DbError(f"{path} is damaged ({err}); fix or remove it: it holds only the sweep's tags and archive "
                      "state") from None
    return Labels(tuple(sorted(set(tags))), archived)


def read_labels(results_dir: str | os.PathLike, sweep: str) -> Labels:
    """The sweep's labels (none when it has no labels file); DbError naming the file when it is damaged."""
    check_sweep_name(sweep)
    return _parsed(labels_path(results_dir, sweep))


def every_label(results_dir: str | os.PathLike) -> tuple[dict[str, Labels], list[str]]:
    """The labels of every sweep that has a labels file, by sweep, and a line per damaged labels file (whose sweep
    is then shown unlabelled: a listing never fails for a label)."""
    root = Path(results_dir) / SWEEPS_DIR
    found, damaged = {}, []
    for entry in sorted(os.scandir(root), key=lambda e: e.name) if root.is_dir() else []:
        path = Path(entry.path) / LABELS_FILE
        if not path.is_file():
            continue
        try:
            found[entry.name] = _parsed(path)
        except DbError as err:
            damaged.append(str(err))
    return found, damaged


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released with the file, also when its holder dies
        yield


def relabel(results_dir: str | os.PathLike, sweep: str, *, add: Iterable[str] = (), remove: Iterable[str] = (),
            archived: bool | None = None) -> Labels:
    """Add and remove tags and set the archive state (None: keep it) of `sweep`; returns its labels as written.
    DbError for an invalid tag or sweep name, or a damaged labels file (which is left as it is)."""
    check_sweep_name(sweep)
    add, remove = list(add), list(remove)
    for tag in add + remove:
        check_tag(tag)
    path = labels_path(results_dir, sweep)
    with _locked(path.parent):
        current = _parsed(path)
        labels = Labels(tuple(sorted((set(current.tags) | set(add)) - set(remove))),
                        current.archived if archived is None else archived)
        temp = path.with_name(f".{LABELS_FILE}.tmp-{os.getpid()}")
        temp.write_text(labels.to_json(), encoding="utf-8")
        os.replace(temp, path)
    return labels
