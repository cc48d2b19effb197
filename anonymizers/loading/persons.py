"""Read and check the optional persons file: one row per person with demographic columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.errors import InputError

__all__ = ["KNOWN_COLUMNS", "check_referenced", "read_persons"]

# Typed columns of raw.persons; any other column is kept in its jsonb `attributes`.
KNOWN_COLUMNS = {"age": "integer", "sex": "text", "education": "text", "income": "number"}


def read_persons(path: Path) -> pd.DataFrame:
    """The persons file as a frame with user_id first; rejects what cannot be loaded."""
    if not path.is_file():
        raise InputError(f"{path}: no such persons file. Check the path.")
    try:
        # Arrow-backed text: 160k persons take 29 MB instead of 135 MB as Python strings.
        frame = pd.read_csv(path, dtype="string[pyarrow]", keep_default_na=False)
    except pd.errors.EmptyDataError as error:
        raise InputError(f"{path}: the persons file is empty; expected a header with "
                         "user_id and demographic columns.") from error
    if "user_id" not in frame.columns:
        raise InputError(f"{path}: the persons file needs a user_id column "
                         f"(found {', '.join(frame.columns)}).")
    duplicated = frame["user_id"].duplicated()
    if duplicated.any():
        first = frame["user_id"][duplicated].iloc[0]
        raise InputError(f"{path}: user_id {first!r} appears more than once "
                         f"(line {int(np.flatnonzero(duplicated)[0]) + 2}); one row per person.")
    for column, kind in KNOWN_COLUMNS.items():
        if column in frame.columns and kind != "text":
            frame[column] = _numeric(frame[column], column, kind, path)
    return frame


def _numeric(values: pd.Series, column: str, kind: str, path: Path) -> pd.Series:
    parsed = pd.to_numeric(values.replace("", np.nan), errors="coerce")
    bad = parsed.isna() & (values != "")
    if kind == "integer":
        bad |= parsed.notna() & (parsed % 1 != 0)
    if bad.any():
        line = int(np.flatnonzero(bad.to_numpy())[0]) + 2
        raise InputError(f"{path}: column {column} must be {kind}; line {line} has "
                         f"{values[bad].iloc[0]!r}. Fix it or leave the cell empty.")
    return parsed.astype("Int64") if kind == "integer" else parsed


def check_referenced(persons: pd.DataFrame, user_ids: pa.Array, path: Path) -> np.ndarray:
    """Every user_id of the points (distinct) must have a row in the persons file; returns
    which rows of the file the points reference. Arrow's hash sets, not Python strings:
    800k persons would take hundreds of MB as pandas objects."""
    listed = pa.array(persons["user_id"], pa.string())
    missing = user_ids.filter(pc.invert(pc.is_in(user_ids, value_set=listed)))
    if len(missing):
        shown = ", ".join(map(repr, sorted(missing.to_pylist())[:5]))
        raise InputError(f"{path}: {len(missing)} person(s) referenced by the points have no "
                         f"row here ({shown}{', ...' if len(missing) > 5 else ''}). "
                         "Add them, or load without --persons.")
    return pc.is_in(listed, value_set=user_ids).to_numpy(zero_copy_only=False)
