"""`anonymizers releases`: the catalog as lines or JSON, of one dataset and/or method."""

from __future__ import annotations

import json

import pytest

from anonymizers import cli


@pytest.fixture
def catalog_db(published_city: dict[str, str], published_city_db: str,
               monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("DATABASE_URL", published_city_db)
    return published_city


def _listed(capsys: pytest.CaptureFixture[str], *options: str) -> list[dict]:
    assert cli.main(["releases", "--json", *options]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_lists_every_published_release_with_its_catalog_columns(catalog_db, capsys):
    rows = _listed(capsys)
    assert {row["release_name"] for row in rows} == set(catalog_db.values())
    assert all({"dataset", "method", "k", "window_start", "published_at"} <= set(row)
               for row in rows)
    assert rows == sorted(rows, key=lambda row: row["published_at"])


def test_filters_by_method_and_dataset(catalog_db, capsys):
    method = next(iter(catalog_db))
    rows = _listed(capsys, "--method", method)
    assert [row["release_name"] for row in rows] == [catalog_db[method]]
    assert len(_listed(capsys, "--dataset", "city")) == len(catalog_db)
    assert _listed(capsys, "--dataset", "nowhere") == []
    assert _listed(capsys, "--dataset", "city", "--method", "nothing_like_it") == []


def test_lines_name_the_filter_when_nothing_matches(catalog_db, capsys):
    assert cli.main(["releases", "--method", "kam_rec", "--dataset", "nowhere"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no release of that dataset and method" in captured.err
    assert cli.main(["releases", "--dataset", "city"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(catalog_db)
