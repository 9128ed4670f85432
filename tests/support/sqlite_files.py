"""SQLite files the store and its reader must refuse or migrate: one statement run on a file, outside the store."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def run_sql(path: Path, statement: str) -> Path:
    """Run ``statement`` on the SQLite file at ``path`` (created when missing), commit and close; return ``path``."""
    raw = sqlite3.connect(path)
    try:
        raw.execute(statement)
        raw.commit()
    finally:
        raw.close()
    return path
