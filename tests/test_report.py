"""The release report (issue 11): a release of every family on the small city, reported with
``anonymizers report`` and opened in a real headless chromium (installed by the project's own
code when missing: this test skips nowhere); the density view's k rule; HTML escaping."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import psycopg
import pytest
from conftest import PUBLISHED_CITY, PUBLISHED_FIRST, PUBLISHED_K

from anonymizers.cli import main
from anonymizers.families.base import load_family
from anonymizers.families.registry import FAMILIES, METHODS
from anonymizers.reports.browser import check_page, ensure_chromium, is_blank
from anonymizers.reports.density import DensityBin, choose_view, k_supported, read_density
from anonymizers.reports.page import Paragraph, Section, Table, render_page

K = PUBLISHED_K
REPORTED = PUBLISHED_CITY


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium, installed with apt by the package's own code when missing."""
    return ensure_chromium()


@pytest.fixture
def city_db(published_city_db: str) -> str:
    return published_city_db


@pytest.fixture
def releases(published_city: dict[str, str]) -> dict[str, str]:
    return published_city


def test_every_family_has_a_reported_method():
    assert {METHODS[method].family for method in REPORTED} == set(FAMILIES)


@pytest.mark.parametrize("method", list(REPORTED))
def test_report_loads_in_a_real_browser(method, releases, city_db, chromium, tmp_path,
                                        monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", city_db)
    out = tmp_path / "report"
    assert main(["report", releases[method], "--out", str(out)]) == 0
    page = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert page == out / "index.html"
    text = page.read_text()
    assert "http://" not in text and "https://" not in text  # nothing to fetch at view time
    images = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert {"map.png", "before_after.png"} <= set(images)
    assert text.count("<img ") == len(images)
    if any(layer.over_time for layer in load_family(METHODS[method].family).report_layers):
        assert any(name.startswith("over_time_") for name in images)  # small multiples
    if FAMILIES[METHODS[method].family].attack is not None:
        assert "risk.png" in images  # the attack.* (and reid.*) series
    else:
        assert "has no risk curve" in text
    if method == PUBLISHED_FIRST:
        assert "Accepted risks" in text and "None. The window overlaps no" in text
    else:
        assert "ACCEPTED by the operator: publishing although the window overlaps" in text
        assert "&lt;every family&gt; on one window &amp; more" in text

    checked = check_page(page, tmp_path / "screenshot.png", browser=chromium)
    assert checked.passed, checked
    assert checked.images == len(images)
    assert not is_blank(tmp_path / "screenshot.png")


def test_the_page_check_catches_a_broken_image_and_a_script_error(chromium, tmp_path):
    page = tmp_path / "index.html"
    body = render_page("t", "s", [Section("x", [Paragraph("y")])])
    page.write_text(body.replace("</body>", '<img src="missing.png">'
                                 "<script>undefinedFunction();</script></body>"))
    checked = check_page(page, tmp_path / "shot.png", browser=chromium)
    assert checked.status == "failed"
    assert (checked.images, checked.loaded) == (1, 0)
    assert "undefinedFunction" in checked.errors


def test_an_unknown_release_is_one_clear_line(city_db, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", city_db)
    assert main(["report", "release_nothing_here", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: release_nothing_here is not a release")
    assert not (tmp_path / "index.html").exists()


def test_the_density_view_draws_no_square_of_fewer_than_k_persons(releases, city_db):
    """Recounted independently (pyproj in Python): every square of fewer than k distinct
    persons is absent from the view, every shown square holds at least k."""
    from pyproj import Transformer

    with psycopg.connect(city_db) as conn:
        manifest = dict(zip(("dataset", "window_start", "window_end", "srid", "k",
                             "count_interval"), conn.execute(
            f"SELECT dataset, window_start, window_end, srid, k, count_interval "
            f"FROM {releases[PUBLISHED_FIRST]}.manifest").fetchone(), strict=True))
        for k in (K, 40):
            view = read_density(conn, {**manifest, "k": k}, sizes=(250.0, 500.0))
            assert view is not None
            users, lon, lat = zip(*conn.execute(
                "SELECT user_id, lon, lat FROM raw.points WHERE t >= %s AND t < %s",
                (manifest["window_start"], manifest["window_end"])).fetchall(), strict=True)
            x, y = Transformer.from_crs(4326, manifest["srid"], always_xy=True).transform(
                np.array(lon), np.array(lat))
            persons: dict[tuple[int, int], set[str]] = {}
            for user, ix, iy in zip(users, np.floor(x / view.size), np.floor(y / view.size),
                                    strict=True):
                persons.setdefault((int(ix), int(iy)), set()).add(user)
            shown = {(b.ix, b.iy) for b in view.bins}
            assert shown == {key for key, who in persons.items() if len(who) >= k}
            assert any(len(who) < k for who in persons.values())  # the rule had work to do


def test_k_supported_and_the_choice_of_size():
    bins = [DensityBin(250.0, 0, 0, 2, 50), DensityBin(250.0, 1, 0, 3, 10),
            DensityBin(500.0, 0, 0, 5, 60)]
    assert k_supported(bins[:2], 3) == [bins[1]]
    view = choose_view(bins, 60, 3, sizes=(250.0, 500.0))
    assert view is not None and view.size == 500.0 and view.bins == (bins[2],)
    assert choose_view(bins, 60, 6, sizes=(250.0, 500.0)) is None
    # 250 m squares hold too small a share; a fewer-than-k square is dropped even if passed
    fallback = choose_view(bins[:2], 60, 3, sizes=(250.0,))
    assert fallback is not None and fallback.bins == (bins[1],)


def test_every_value_on_the_page_is_escaped():
    evil = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'
    page = render_page(evil, evil, [Section(evil, [
        Paragraph(evil), Table((evil,), [(evil, 1.5, None, float("nan"))])])])
    assert "<script>alert" not in page and "<img src=x" not in page
    # title (twice), subtitle, heading, paragraph, table header and cell
    assert page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; ") == 7
    assert "—" in page and "undefined" in page


def test_many_rectangles_are_drawn_as_the_count_of_those_covering_each_point():
    """A layer of thousands of regions is one image whose pixels count the regions over
    them (a point in three overlapping boxes shows 3; one outside all of them, nothing)."""
    from matplotlib.figure import Figure

    from anonymizers.reports import figures

    boxes = [(0.0, 0.0, 800.0, 800.0)] * (figures.DENSE_POLYGONS // 2)
    boxes += [(400.0, 400.0, 800.0, 800.0)] * (figures.DENSE_POLYGONS // 2 + 1)
    boxes += [(0.0, 0.0, 100.0, 100.0)]
    rings = [np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)])
             for x0, y0, x1, y1 in boxes]
    found = figures._rectangles(rings)
    assert found is not None and found.shape == (len(boxes), 4)
    assert figures._rectangles([*rings, np.array([(0, 0), (1, 0), (0, 1), (0, 0)])]) is None
    ax = Figure().add_subplot()
    figures._draw_coverage(ax, found, figures.COLOURS[0])
    image = ax.get_images()[0].get_array()
    pixel = 800.0 / figures.COVERAGE_PIXELS
    at = lambda x, y: image[int(y / pixel), int(x / pixel)]  # noqa: E731
    assert at(50, 50) == figures.DENSE_POLYGONS // 2 + 1
    assert at(200, 200) == figures.DENSE_POLYGONS // 2
    assert at(600, 600) == len(boxes) - 1
    assert image.mask[int(800.5 / pixel), 0]  # just outside every box: nothing drawn
