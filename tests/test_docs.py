"""The documentation: the site builds in strict mode, the README stays short, and no
user-facing text (README, documentation pages, every subcommand's --help) cites the tracker."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from anonymizers.cli import _parser, main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README_LIMIT = 25 * 1024  # bytes: a README read in five minutes; the rest is the site's

# "issue 44", "finding 3", "stops 38-41", "session 2", "#44": the tracker's numbers mean
# nothing to a reader of the docs or the help.
TRACKER = re.compile(r"\b(?:issues?|findings?|stops?|sessions?)\s*#?\s*\d+|(?<![\w/&#])#\d+\b",
                     re.IGNORECASE)
# A commit hash (7-40 hex digits with at least one letter and one digit): history, not docs.
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")


def tracker_references(text: str) -> list[str]:
    return [m.group(0) for m in TRACKER.finditer(text)]


def commit_hashes(text: str) -> list[str]:
    return [m.group(0) for m in COMMIT.finditer(text)]


def build_site(config: Path, out: Path) -> subprocess.CompletedProcess[str]:
    # Not --quiet: it drops warnings before strict mode counts them, and the build passes.
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "-f", str(config), "-d", str(out)],
                          capture_output=True, text=True, check=False)


def documentation_pages() -> list[Path]:
    return sorted((DOCS / "pages").rglob("*.md"))


# ----------------------------------------------------------------------------- the site


def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    result = build_site(DOCS / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    built = {p.relative_to(tmp_path / "site").as_posix()
             for p in (tmp_path / "site").rglob("index.html")}
    for page in ("index.html", "user-guide/privacy/index.html", "operator/scheduling/index.html",
                 "reference/mob/index.html", "benchmarks/index.html", "changelog/index.html"):
        assert page in built, sorted(built)
    benchmarks = (tmp_path / "site" / "benchmarks" / "index.html").read_text()
    assert "render:" not in benchmarks, "a rendering marker was left in the page"
    assert "items overcounted" in benchmarks, "the committed results were not rendered"


PLANTS = {
    "broken link": ("user-guide/loading.md", "\nSee [a page](no-such-page.md).\n"),
    "broken anchor": ("user-guide/loading.md", "\nSee [rules](privacy.md#no-such-rule).\n"),
    "unknown rendering": ("benchmarks/index.md", "\n<!-- render: no_such_table -->\n"),
    "page outside the nav": ("stray.md", "# A page nobody links to\n"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_site_build_fails_on_a_planted_fault(tmp_path: Path, plant: str) -> None:
    """What the strict build is for: each of these faults must stop it."""
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    page, text = PLANTS[plant]
    with (docs / "pages" / page).open("a") as f:
        f.write(text)
    result = build_site(docs / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0, f"the build passed with a {plant}"


# ----------------------------------------------------------------------------- README


def test_readme_is_short() -> None:
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_LIMIT, (
        f"README.md is {size} bytes, above {README_LIMIT}: move details to docs/pages")


def test_readme_keeps_the_ci_command() -> None:
    """The README's second command is the one CI runs (.ci/run)."""
    ci = (ROOT / ".ci" / "run").read_text()
    command = next(line for line in ci.splitlines() if line.startswith("python3.11 -m venv"))
    assert command in (ROOT / "README.md").read_text()


# ----------------------------------------------------------------------------- the tracker


@pytest.mark.parametrize("path", [ROOT / "README.md", DOCS / "mkdocs.yml",
                                  DOCS / "hooks" / "benchmarks.py", *documentation_pages()],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_tracker_reference_or_commit_hash(path: Path) -> None:
    text = path.read_text()
    assert not tracker_references(text), tracker_references(text)
    assert not commit_hashes(text), commit_hashes(text)


def test_no_tracker_reference_in_rendered_benchmarks() -> None:
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import benchmarks  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS / "hooks"))
    for page in (DOCS / "pages" / "benchmarks").glob("*.md"):
        rendered = benchmarks.render_markers(page.read_text())
        assert not tracker_references(rendered), (page.name, tracker_references(rendered))


def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                ) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from subcommands(sub, (*path, name))


def help_text(path: tuple[str, ...]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        main([*path, "--help"])
    assert exit_.value.code == 0
    return out.getvalue()


COMMANDS = list(subcommands(_parser()))


def test_every_subcommand_is_checked() -> None:
    names = {path[0] for path in COMMANDS if path}
    assert {"db", "load", "release", "verify", "report", "attack", "compare", "releases",
            "airflow", "demo"} <= names, names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(("anonymizers", *p)))
def test_no_tracker_reference_in_help(path: tuple[str, ...]) -> None:
    text = help_text(path)
    assert text.startswith("usage: anonymizers")
    assert not tracker_references(text), tracker_references(text)


def _parser_at(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = _parser()
    for name in path:
        parser = next(action.choices[name] for action in parser._actions
                      if isinstance(action, argparse._SubParsersAction))
    return parser


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(("anonymizers", *p)))
def test_every_option_and_subcommand_has_help(path: tuple[str, ...]) -> None:
    parser = _parser_at(path)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            described = {choice.dest for choice in action._choices_actions if choice.help}
            assert described == set(action.choices), (path, set(action.choices) - described)
        else:
            assert action.help and action.help != argparse.SUPPRESS, (path, action.dest)


@pytest.mark.parametrize("text", ["see issue 7", "Finding 11", "stops 38-41", "session 2",
                                  "(#44)", "ISSUE #12"])
def test_tracker_pattern_catches(text: str) -> None:
    assert tracker_references(text)


@pytest.mark.parametrize("text", ["seed 003 §6.2", "k = 5", "the 50 m floor", "stop the release",
                                  "#the-rules", "a session of Airflow", "release_x_1729b3992a",
                                  "2008-02-03"])
def test_tracker_pattern_spares(text: str) -> None:
    assert not tracker_references(text)
    assert not commit_hashes(text)
