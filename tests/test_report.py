"""The release report (issue 11): a release of every family on the small city, reported with
``anonymizers report`` and opened in a real headless chromium (installed by the project's own
code when missing: this test skips nowhere); the density view's k rule; HTML escaping; what
a data protection officer reads (issue 44): the risk per attack against 1/k, the verifier's
checks in words, counts that agree or say why, resolved parameters, maps of the data."""

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
        assert "risk.png" in images  # the attack.* (and reid.*) series, a panel per attack
        assert "No attack re-identifies anyone with probability above 1/k = 0.333" in text
    else:
        assert "has no risk curve" in text
    if "reid.fraction_zero" in text:  # higher is safer: its own figure, never on risk.png
        assert "risk_safer.png" in images
    # in words: a summary first, no bare None, no paper section numbers
    assert text.index("Summary: is anyone re-identifiable?") < text.index("The release in words")
    assert "<td>None</td>" not in text and ">None<" not in text
    assert "§" not in text and "seed 0" not in text
    assert "EPSG:32632 (WGS 84 / UTM zone 32N)" in text
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


# --------------------------------------------------------------- what the page says, in words

def _verifier_check_ids_in_the_code() -> set[str]:
    """Every literal check id the verifiers write (``checks["x"]``, ``_report(result, "x"``)
    and MOB's per-fault ids; ids built from SQL columns come from the releases."""
    import re

    from anonymizers.families.mob.verifier import REGION_FAULTS

    root = Path(__file__).resolve().parents[1] / "anonymizers"
    found: set[str] = set()
    for source in [*root.glob("verifiers/*.py"), *root.glob("families/*/verifier.py")]:
        text = source.read_text()
        found |= set(re.findall(r'checks\["([a-z0-9_]+)"\]', text))
        found |= set(re.findall(r'_report\(\s*result,\s*"([a-z0-9_]+)"', text))
    return found | {f"positions_{name}" for name, _ in REGION_FAULTS.values()}


def test_every_verifier_check_of_any_family_has_a_sentence(releases, city_db):
    """A check id without a sentence would reach the page as a bare identifier."""
    from anonymizers.reports.checks_words import CHECK_SENTENCES

    ids = _verifier_check_ids_in_the_code()
    with psycopg.connect(city_db) as conn:
        for release in releases.values():
            (result,) = conn.execute(f"SELECT verifier_result FROM {release}.manifest"
                                     ).fetchone()
            ids |= set(result["checks"])
    assert len(ids) > 90  # the scan found the families' checks, not only the shared ones
    assert sorted(ids - set(CHECK_SENTENCES)) == []


def test_the_check_table_shows_sentences_and_the_filter_not_none():
    from anonymizers.reports.checks_words import CHECK_SENTENCES, check_rows

    rows = check_rows({"count_interval": 3, "checks": {
        "count_columns": 2, "flows": 993, "suppressed_persons": None, "fingerprint_keyed": True,
        "window_hours": 18.0253}}, k=3)
    assert rows[0] == (CHECK_SENTENCES["count_columns"], 2, "exact")
    assert rows[1] == (CHECK_SENTENCES["flows"], 993,
                       "interval-filtered: the lower end of an interval of 3")
    assert rows[2][1:] == ("fewer than k",
                           "interval-filtered: the lower end of an interval of 3")
    assert rows[3][1] == "yes" and rows[4][2] == "exact"
    assert all(row[1] is not None for row in rows)


def test_structural_checks_reach_the_manifest_as_the_verifier_counted_them():
    """Columns, parameters and releases are not people: the interval filter that hides a
    small count of people turned them into "fewer than k" (None) in the manifest."""
    from anonymizers.verifiers.base import VerifierResult

    result = VerifierResult("s", k=5, checks={
        "time_columns": 4, "precision_parameters": 2, "count_columns": 4,
        "suppressed_persons": 4, "flows": 12})
    published = result.to_published_json(count_interval=5)["checks"]
    assert published["time_columns"] == 4 and published["precision_parameters"] == 2
    assert published["count_columns"] == 4
    assert published["suppressed_persons"] is None  # a count of people: still filtered
    assert published["flows"] == 10


def test_unset_and_chosen_parameters_show_what_applies():
    from anonymizers.reports.words import parameter_rows

    manifest = {"method": "tg_nonoverlapping", "parameters": {
        "interval_size": None, "places_release": None, "places": "grid", "cell_size": 500.0},
        "verifier_result": {"checks": {"interval_size": 3}}}
    rows = dict(parameter_rows(manifest))
    assert rows["interval_size"] == "3 (not set: the default, as applied and verified)"
    assert rows["places_release"] == "not set (used only with places=voronoi)"
    assert rows["places"] == "grid" and rows["cell_size"] == 500.0
    manifest["verifier_result"] = {}
    assert dict(parameter_rows(manifest))["interval_size"] == "not set: k"
    assert "None" not in str(parameter_rows(manifest))


# ----------------------------------------------------------------------------- risk, in words

def _series(name: str, values: tuple[float, ...], unit: str = "probability"):
    from anonymizers.reports.release_data import Series

    return Series(name, tuple(float(i + 1) for i in range(len(values))), values, unit, name)


def test_no_safer_when_higher_series_is_on_a_risk_axis():
    """The share of trajectories that defeat the attack (0.95: safe) read on a probability
    of re-identification axis says 95 % risk: it goes to a panel of its own."""
    from anonymizers.reports.risk import is_safer_when_higher, risk_panels

    series = [_series("reid.max", (0.2, 0.1)), _series("reid.mean", (0.05, 0.02)),
              _series("reid.fraction_zero", (0.78, 0.95), unit="ratio"),
              _series("attack.location.max", (0.3,)), _series("attack.location.mean", (0.1,)),
              _series("attack.prefix.max", (0.1, 0.2)), _series("utility.x", (1.0,), "m")]
    panels, safer = risk_panels(series)
    assert [p.attack for p in panels] == ["reid", "location", "prefix"]  # one per attack
    on_risk_axes = [s for p in panels for s in p.series]
    assert not any(is_safer_when_higher(s) for s in on_risk_axes)
    assert all(s.unit == "probability" for s in on_risk_axes)
    assert [s.name for s in safer] == ["reid.fraction_zero"]
    # a new safer-when-higher share is kept off the risk axis even if called a probability
    assert is_safer_when_higher(_series("attack.location.fraction_zero", (0.9,)))


def test_the_risk_figure_is_one_panel_per_attack_with_the_bound(tmp_path):
    from PIL import Image

    from anonymizers.reports import figures
    from anonymizers.reports.risk import risk_panels

    panels, safer = risk_panels([_series("reid.max", (0.2, 0.1)),
                                 _series("attack.home_work.max", (0.1,)),
                                 _series("reid.fraction_zero", (0.8, 0.9), unit="ratio")])
    figures.risk_figure(panels, 5, tmp_path / "risk.png")
    figures.safer_figure(safer, tmp_path / "safer.png")
    with Image.open(tmp_path / "risk.png") as image:
        assert image.width > 600  # two panels side by side
    assert not is_blank(tmp_path / "safer.png")


def test_the_summary_names_the_worst_attack_against_one_over_k():
    from anonymizers.reports.release_data import Metric
    from anonymizers.reports.risk import summary_sentences

    metrics = [Metric("attack_location_prosecutor_max", 0.1, "probability", "knows j places"),
               Metric("attack_prefix_prosecutor_max", 0.2, "probability", "knows a prefix"),
               Metric("attack_prefix_marketer", 0.9, "probability", "an average")]
    manifest = {"k": 5, "verifier_result": {"passed": True, "checks": {}}}
    said = dict(summary_sentences(manifest, metrics))
    assert said["Measured risk"].startswith(
        "No attack re-identifies anyone with probability above 1/k = 0.2: the largest "
        "measured is 0.2, by the prefix attack")
    assert said["Accepted risks"].startswith("None")
    metrics.append(Metric("reid_max_probability", 0.5, "probability", "links sequences"))
    manifest["attack_risk"] = "the study needs it"
    said = dict(summary_sentences(manifest, metrics))
    assert said["Measured risk"].startswith("ABOVE THE BOUND: the linking attack on the "
                                            "published cell sequences attack re-identifies")
    assert "the study needs it" in said["Accepted risks"]


# --------------------------------------------------------------------------------- counts

def test_the_pages_counts_agree_or_say_why(releases, city_db, tmp_path):
    """The verifier's checks are interval-filtered (993 flows), the map and the tables count
    rows exactly (994 flows): every pair agrees or is the filter of the other, and the page
    says which figure is which, with both figures."""
    from anonymizers.families.base import load_family
    from anonymizers.reports.build import build_report
    from anonymizers.reports.counts import FILTERED, disagreements, page_counts
    from anonymizers.reports.page import escape
    from anonymizers.reports.release_data import read_release, release_family

    explained = 0
    with psycopg.connect(city_db) as conn:
        for method, release in releases.items():
            data = read_release(conn, release, ())
            family = load_family(release_family(data.manifest))
            data.layers = read_release(conn, release, family.report_layers).layers
            counts = page_counts(data)
            width = int(data.manifest["count_interval"])
            assert disagreements(counts, data.k, width) == [], method
            page = build_report(conn, release, tmp_path / method).page.read_text()
            for one in (c for c in counts if c.how == FILTERED):
                exact = [c for c in counts if c.quantity == one.quantity and c.how != FILTERED]
                differs = [c for c in exact if c.value != one.value]
                for other in differs[:1]:
                    said = f"{one.quantity}: {one.value:,} in the verifier&#x27;s checks, " \
                           f"{other.value:,} on the {other.where}"
                    assert said in page, (method, said)
                    explained += 1
            assert escape("interval-filtered: the lower end of an interval of") in page
    assert explained  # the city has such a pair (e.g. flows), so the rule was exercised


def test_a_count_that_is_not_the_filter_of_the_exact_one_is_caught():
    from anonymizers.reports.counts import EXACT, FILTERED, PageCount, disagreements

    sound = [PageCount("flows", 994, "map", EXACT), PageCount("flows", 993, "checks", FILTERED)]
    assert disagreements(sound, 3, 3) == []
    wrong = [*sound[:1], PageCount("flows", 990, "checks", FILTERED),
             PageCount("flows", 995, "tables", EXACT)]
    assert len(disagreements(wrong, 3, 3)) == 2


# ----------------------------------------------------------------------------------- maps

def test_a_map_shows_where_the_data_is_with_a_scale_bar():
    """Regions of a whole UTM zone (MOB's withheld positions) would shrink the city to a
    dot: the map is drawn over the data's squares, and says that it cuts them."""
    import shapely as shp

    from anonymizers.families.base import ReportLayer
    from anonymizers.reports import build, figures
    from anonymizers.reports.density import DensityView
    from anonymizers.reports.release_data import LayerRows, ReleaseData

    layer = ReportLayer("positions", "geom", "regions")
    city = shp.box(680_000, 4_848_000, 682_000, 4_850_000)
    zone = shp.box(166_000, 0, 834_000, 9_300_000)
    density = DensityView(1000.0, (DensityBin(1000.0, 680, 4848, 5, 50),
                                   DensityBin(1000.0, 681, 4849, 5, 50)), 1.0, 3)
    data = ReleaseData("s", {"k": 3}, layers=[LayerRows(layer, (city,), (None,), (None,),
                                                        (None,))])
    extent, cut = build._map_extent(data, density)
    assert not cut and extent[0] > 679_000 and extent[2] < 683_000  # a small margin
    data.layers = [LayerRows(layer, (city, zone), (None, None), (None, None), (None, None))]
    extent, cut = build._map_extent(data, density)
    assert cut and extent[2] - extent[0] < 3_000
    assert figures.scale_length(2_000) == 200.0
    assert figures.crs_name(32632) == "EPSG:32632 (WGS 84 / UTM zone 32N)"
