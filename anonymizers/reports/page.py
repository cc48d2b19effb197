"""The report's HTML page: sections of paragraphs, definitions, tables and figures.

The page is ``page.html`` (a :class:`string.Template`) filled with fragments built here;
every value that reaches the page goes through :func:`escape`, here and nowhere else, so a
release name, a metric description or an operator's reason cannot inject markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from string import Template
from typing import Any

__all__ = ["Definitions", "FigureRef", "Paragraph", "Part", "Section", "Table", "escape",
           "format_value", "render_page"]


def format_value(value: Any) -> str:
    """A value as the page shows it: None (suppressed or undefined) as an em dash, NaN as
    "undefined", floats to 4 significant digits, integers with thousands separators."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "undefined"
        return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def escape(value: Any) -> str:
    """``value`` formatted and HTML-escaped (quotes too: it may sit in an attribute)."""
    return html.escape(format_value(value), quote=True)


@dataclass(frozen=True)
class Paragraph:
    text: str

    def html(self) -> str:
        return f"<p>{escape(self.text)}</p>"


@dataclass(frozen=True)
class Definitions:
    """Topic: sentence pairs (the manifest in words)."""

    items: Sequence[tuple[str, str]]

    def html(self) -> str:
        rows = "".join(f"<dt>{escape(term)}</dt><dd>{escape(text)}</dd>"
                       for term, text in self.items)
        return f"<dl>{rows}</dl>"


@dataclass(frozen=True)
class Table:
    headers: Sequence[str]
    rows: Sequence[Sequence[Any]]

    def html(self) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h in self.headers)
        body = "".join("<tr>" + "".join(_cell(value) for value in row) + "</tr>"
                       for row in self.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: Any) -> str:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    return f'<td class="number">{escape(value)}</td>' if numeric else f"<td>{escape(value)}</td>"


@dataclass(frozen=True)
class FigureRef:
    """A PNG of the report folder (``src`` relative to the page) with its caption."""

    src: str
    alt: str
    caption: str

    def html(self) -> str:
        return (f'<figure><img src="{escape(self.src)}" alt="{escape(self.alt)}">'
                f"<figcaption>{escape(self.caption)}</figcaption></figure>")


Part = Paragraph | Definitions | Table | FigureRef


@dataclass
class Section:
    title: str
    parts: list[Part] = field(default_factory=list)

    def html(self) -> str:
        inner = "\n".join(part.html() for part in self.parts)
        return f"<section>\n<h2>{escape(self.title)}</h2>\n{inner}\n</section>"


def render_page(title: str, subtitle: str, sections: Sequence[Section]) -> str:
    """The whole HTML page (offline: it refers to nothing outside its folder)."""
    template = Template(resources.files("anonymizers.reports").joinpath("page.html")
                        .read_text(encoding="utf-8"))
    return template.substitute(title=escape(title), subtitle=escape(subtitle),
                               body="\n".join(section.html() for section in sections))
