"""The latency chart: an inline SVG with one point per measured size, readable in any scheme."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from arms_doc_testing import LATENCY_FIXTURE

from arms_doc.chart import Goal, Series, latency_chart, size_label, value_ticks
from arms_doc.measured import chart_svg
from arms_doc.results import load_latency

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def svg() -> str:
    return chart_svg(load_latency(LATENCY_FIXTURE, "latency.json"))


def points(svg: str, series: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [
        element
        for element in root.iter(f"{SVG}circle")
        if element.get("class") == "point" and element.get("data-series") == series
    ]


@pytest.mark.parametrize("series", ["fused", "vector", "floor"])
def test_each_series_has_one_point_per_measured_size(svg: str, series: str):
    # The fixture has 384-d stores at 2k, 10k and 50k files, and one 1024-d store.
    assert sorted(int(point.get("data-files", "")) for point in points(svg, series)) == [
        2000,
        10000,
        50000,
    ]


def test_a_point_carries_its_figure(svg: str):
    (fused_50k,) = [point for point in points(svg, "fused") if point.get("data-files") == "50000"]

    assert fused_50k.get("data-ms") == "41"
    assert fused_50k.findtext(f"{SVG}title") == "fused search: 41 ms at 50,000 files"


def test_the_fused_targets_are_drawn(svg: str):
    goals = [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == "goal"]

    assert [(g.get("data-files"), g.get("data-ms")) for g in goals] == [
        ("2000", "5"),
        ("50000", "50"),
    ]


def test_the_chart_is_one_html_block_without_script(svg: str):
    assert svg.startswith("<svg ") and svg.endswith("</svg>")
    assert "\n\n" not in svg
    assert "<script" not in svg
    assert not re.search(r"\son\w+=", svg)  # no event handler attributes either


def test_colours_follow_the_theme(svg: str):
    # Fixed colours appear only as fallbacks of the theme's CSS variables.
    assert 'fill="currentColor"' in svg
    without_fallbacks = re.sub(r"var\(--[a-z-]+, #[0-9a-f]{3,6}\)", "var()", svg)
    assert not re.search(r"#[0-9a-fA-F]{3,6}\b", without_fallbacks)


def test_points_a_log_axis_cannot_place_are_left_out():
    svg = latency_chart(
        [Series("s", "s", "primary", [(1000, 0.0), (2000, 2.0), (4000, 4.0)])],
        title="t",
        description="d",
    )

    assert [p.get("data-files") for p in points(svg, "s")] == ["2000", "4000"]


def test_a_single_size_still_makes_a_chart():
    svg = latency_chart(
        [Series("s", "s", "text", [(2000, 3.0)])], [Goal(2000, 5.0)], title="t", description="d"
    )

    assert len(points(svg, "s")) == 1


def test_no_figures_make_a_chart_that_says_so():
    svg = latency_chart([], title="t", description="d")

    assert "No latency measured" in svg
    ET.fromstring(svg)


def test_text_is_escaped():
    svg = latency_chart(
        [Series("s", "a <b> & c", "primary", [(10, 1.0)])], title="x & y", description="<d>"
    )

    root = ET.fromstring(svg)
    assert root.findtext(f"{SVG}title") == "x & y"


@pytest.mark.parametrize(
    ("files", "label"),
    [(500, "500"), (1500, "1.5k"), (2000, "2k"), (50000, "50k"), (1_000_000, "1M")],
)
def test_size_labels_are_short(files: int, label: str):
    assert size_label(files) == label


def test_value_ticks_fill_in_when_the_range_is_narrow():
    assert value_ticks(1, 100) == [1, 2, 5, 10, 20, 50, 100]
    assert value_ticks(0.01, 1000) == [0.01, 0.1, 1, 10, 100, 1000]
