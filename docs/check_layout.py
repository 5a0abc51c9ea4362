"""Check that pages of the built documentation fit a 1,280 px wide browser window.

Opens each page in headless Chromium at 1,280 px, saves a screenshot, and reports every
table, display equation, code block or image that is wider than the text column (a
table that scrolls sideways or a clipped equation), and any horizontal scrolling of the
whole page. Exits with status 1 if anything overflows.

    sphinx-build -b html docs docs/_build/html
    python docs/check_layout.py docs/_build/html --screenshots /tmp/layout

Needs Chromium (``apt-get install chromium``); not part of CI.
"""

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_PAGES = ("index.html", "user_guide/choosing.html", "user_guide/logdet.html",
                 "benchmarks/suite.html")
WIDTH = 1280
HEIGHT = 3000  # tall enough that one screenshot shows most of a page
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--hide-scrollbars",
                  "--allow-file-access-from-files", "--virtual-time-budget=15000",
                  f"--window-size={WIDTH},{HEIGHT}")

# Runs in the page once MathJax has typeset it; writes its findings into the DOM, which
# Chromium's --dump-dom prints.
PROBE = """
<script>
window.addEventListener("load", () => {
  const report = () => {
    const column = document.querySelector(".bd-article") || document.body;
    const right = column.getBoundingClientRect().right;
    const found = [];
    const selectors = "table, mjx-container[display='true'], div.math, pre, img";
    for (const element of document.querySelectorAll(selectors)) {
      const box = element.getBoundingClientRect();
      if (box.width === 0) continue;
      const excess = Math.max(box.right - right, element.scrollWidth - element.clientWidth);
      if (excess > 1) {
        const heading = element.closest("section")?.querySelector("h1, h2, h3");
        found.push({element: element.tagName.toLowerCase(), excess_px: Math.round(excess),
                    section: heading ? heading.textContent.replace("#", "").trim() : ""});
      }
    }
    const page = document.documentElement.scrollWidth - window.innerWidth;
    const out = document.createElement("pre");
    out.id = "layout-report";
    out.textContent = JSON.stringify({column_px: Math.round(column.clientWidth),
                                      page_overflow_px: Math.max(page, 0), overflowing: found});
    document.body.appendChild(out);
  };
  const typeset = window.MathJax?.startup?.promise;
  (typeset ? typeset.then(report) : Promise.resolve().then(report));
});
</script>
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("check_layout: Chromium not found (apt-get install chromium)")


def measure(browser, page):
    """Overflow report of one page: a copy with the probe is dumped, then removed."""
    probed = page.with_name(f".layout-probe-{page.name}")
    source = page.read_text(encoding="utf-8")
    probed.write_text(source.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    try:
        dom = subprocess.run([browser, *CHROMIUM_FLAGS, "--dump-dom", probed.as_uri()],
                             capture_output=True, text=True, timeout=120, check=True).stdout
    finally:
        probed.unlink()
    match = re.search(r'<pre id="layout-report"[^>]*>(.*?)</pre>', dom, re.S)
    if match is None:
        raise RuntimeError(f"{page}: the layout probe did not report (page did not load?)")
    return json.loads(html.unescape(match[1]))


def screenshot(browser, page, path):
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                        f"--screenshot={path}", page.as_uri()],
                       capture_output=True, timeout=120, check=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the built site, e.g. docs/_build/html")
    parser.add_argument("pages", nargs="*", default=DEFAULT_PAGES,
                        help="pages relative to the site root (default: %(default)s)")
    parser.add_argument("--screenshots", type=Path, default=Path("layout-screenshots"),
                        help="folder for the PNG screenshots (default: %(default)s)")
    args = parser.parse_args(argv)
    browser = chromium()
    args.screenshots.mkdir(parents=True, exist_ok=True)
    failed = False
    for name in args.pages:
        page = (args.html / name).resolve()
        report = measure(browser, page)
        shot = args.screenshots / (name.replace("/", "__").removesuffix(".html") + ".png")
        screenshot(browser, page, shot.resolve())
        problems = report["overflowing"]
        verdict = "fits" if not problems and not report["page_overflow_px"] else "OVERFLOWS"
        failed |= verdict != "fits"
        print(f"{name}: {verdict} (text column {report['column_px']} px, page overflow "
              f"{report['page_overflow_px']} px) — screenshot {shot}")
        for item in problems:
            print(f"    {item['element']} in '{item['section']}': {item['excess_px']} px too wide")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
