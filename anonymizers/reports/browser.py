"""A real headless browser (Debian's chromium) that opens a report offline and checks it.

The report page checks itself (:mod:`anonymizers.reports.page`): on the window's ``load``
event an inline script writes into the element ``#page-check`` whether a script error
happened and how many of its images loaded (``naturalWidth > 0``). The browser dumps the
DOM after loading, and takes a screenshot that must not be blank.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from anonymizers.errors import ReportError

__all__ = ["APT_PACKAGES", "PageCheck", "check_page", "ensure_chromium", "find_chromium",
           "is_blank", "parse_page_check"]

# --no-install-recommends (system_packages.apt_install): fonts-liberation is the one
# recommendation a screenshot needs (text without a font renders as boxes).
APT_PACKAGES = ("chromium", "fonts-liberation")
EXECUTABLES = ("chromium", "chromium-browser")
CHECK_PATTERN = re.compile(
    r'<[^>]*id="page-check"[^>]*data-status="(?P<status>[a-z]+)"[^>]*'
    r'data-images="(?P<images>\d+)"[^>]*data-loaded="(?P<loaded>\d+)"[^>]*>'
    r"(?P<errors>[^<]*)<")


@dataclass(frozen=True)
class PageCheck:
    """What the page reported about itself after loading in the browser."""

    status: str  # "ok", "failed", or "pending" when the load event never came
    images: int
    loaded: int
    errors: str

    @property
    def passed(self) -> bool:
        return self.status == "ok" and self.images == self.loaded and not self.errors


def find_chromium() -> Path | None:
    """The chromium executable on PATH, or None."""
    for name in EXECUTABLES:
        if found := shutil.which(name):
            return Path(found)
    return None


def ensure_chromium(log: Callable[[str], None] | None = None) -> Path:
    """Chromium's executable; on Debian/Ubuntu installed with apt when missing (as root or
    through ``sudo -n``), as ``anonymizers db up`` installs PostgreSQL."""
    if (found := find_chromium()) is not None:
        return found
    if shutil.which("apt-get") is None:
        raise ReportError("chromium is not installed and this is not a Debian/Ubuntu machine: "
                          "install chromium with your package manager")
    from anonymizers.system_packages import apt_install

    (log or _stderr)(f"chromium not found: installing {' '.join(APT_PACKAGES)} with apt")
    apt_install(APT_PACKAGES, ReportError,
                f"install {' '.join(APT_PACKAGES)} yourself.", recommends=False)
    if (found := find_chromium()) is None:
        raise ReportError(f"apt installed {' '.join(APT_PACKAGES)} but no chromium is on PATH")
    return found


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _run_chromium(browser: Path, *args: str, timeout: float) -> str:
    """Run headless chromium with ``args``; its stdout (the dumped DOM, if asked)."""
    command = [str(browser), "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
               "--virtual-time-budget=10000", *args]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                check=False)
    except subprocess.TimeoutExpired as error:
        raise ReportError(f"chromium did not finish within {timeout:.0f} s") from error
    if result.returncode != 0:
        raise ReportError(f"chromium failed (exit {result.returncode}): "
                          f"{result.stderr[-1000:]}")
    return result.stdout


def parse_page_check(dom: str) -> PageCheck:
    """The page's self-check from its dumped DOM (status "missing" when there is none)."""
    match = CHECK_PATTERN.search(dom)
    if match is None:
        return PageCheck("missing", 0, 0, "no #page-check element in the page")
    return PageCheck(match["status"], int(match["images"]), int(match["loaded"]),
                     match["errors"].strip())


def check_page(page: Path, screenshot: Path, browser: Path | None = None,
               width: int = 1280, height: int = 2000, timeout: float = 120.0) -> PageCheck:
    """Open ``page`` (a local HTML file) in headless chromium once: its self-check from the
    dumped DOM, and a screenshot of ``width`` x ``height`` pixels written to ``screenshot``."""
    browser = browser or ensure_chromium()
    dom = _run_chromium(browser, "--dump-dom", f"--screenshot={screenshot.resolve()}",
                        f"--window-size={width},{height}", page.resolve().as_uri(),
                        timeout=timeout)
    if not screenshot.is_file():
        raise ReportError(f"chromium wrote no screenshot to {screenshot}")
    return parse_page_check(dom)


def is_blank(png: Path, min_std: float = 2.0) -> bool:
    """True when the image is (nearly) one flat colour: pixel standard deviation below
    ``min_std`` (on a 0-255 scale)."""
    from PIL import Image

    with Image.open(png) as image:
        pixels = np.asarray(image.convert("L"), dtype=float)
    return bool(pixels.size == 0 or pixels.std() < min_std)
