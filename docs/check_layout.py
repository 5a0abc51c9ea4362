"""Check that every page of the built documentation reads in a 1,280 and an 800 px window.

Opens each page in headless Chromium (Debian's ``chromium`` package) at each width and
reports what a reader would find cut off:

- a table or display equation that runs past the text column (under the sidebar or off
  the window) without sitting in a box that scrolls sideways inside the column;
- a code block that does not wrap (its lines run past its box or scroll sideways);
- a figure wider than the column, or shrunk to less than two-thirds of its width
  without a link to the full-size file;
- the whole page scrolling sideways.

Tables that scroll inside the column are listed but pass. Exits with status 1 if any
page at any width has a finding.

    sphinx-build -b html docs docs/_build/html
    python docs/check_layout.py docs/_build/html                  # every page
    python docs/check_layout.py docs/_build/html index.html --screenshots /tmp/layout
"""

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

WIDTHS = (1280, 800)
HEIGHT = 3000  # tall enough that one screenshot shows most of a page
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--allow-file-access-from-files", "--virtual-time-budget=10000")

# Runs in the page once MathJax has typeset it; writes its findings into the DOM, which
# Chromium's --dump-dom prints.
PROBE = """
<script>
window.addEventListener("load", () => {
  const report = () => {
    const column = document.querySelector(".bd-article") || document.body;
    const right = column.getBoundingClientRect().right + 1;
    const sideways = (element) =>
      ["auto", "scroll"].includes(getComputedStyle(element).overflowX);
    const scroller = (element) => {
      for (let box = element.parentElement; box && box !== column; box = box.parentElement) {
        if (sideways(box)) return box;
      }
      return null;
    };
    const found = [], scrolling = [];
    const selectors = "table, pre, img, mjx-container[display='true'], div.math";
    for (const element of column.querySelectorAll(selectors)) {
      const box = element.getBoundingClientRect();
      if (box.width === 0) continue;
      const kind = element.tagName.toLowerCase();
      const heading = element.closest("section")?.querySelector("h1, h2, h3");
      const where = heading ? heading.textContent.replace("#", "").trim() : "";
      const add = (problem) => found.push({element: kind, section: where, problem: problem});
      const outer = scroller(element);
      if (kind === "pre") {
        const wide = Math.max(element.scrollWidth - element.clientWidth,
                              outer ? outer.scrollWidth - outer.clientWidth : 0);
        if (wide > 1) add(`code runs ${Math.round(wide)} px past its box`);
        else if (box.right > right) {
          add(`code ends ${Math.round(box.right - right)} px past the column`);
        }
      } else if (kind === "img") {
        if (box.right > right) {
          add(`figure ends ${Math.round(box.right - right)} px past the column`);
        }
        else if (element.naturalWidth > 1.5 * box.width && !element.closest("a")) {
          add(`figure shown at ${Math.round(100 * box.width / element.naturalWidth)} % `
              + "of its width, not linked to its full size");
        }
      } else if (outer && outer.getBoundingClientRect().right <= right) {
        if (outer.scrollWidth - outer.clientWidth > 1) {
          scrolling.push({element: kind, section: where, width_px: Math.round(box.width)});
        }
      } else if (box.right > right) {
        add(`ends ${Math.round(box.right - right)} px past the column`);
      }
    }
    const page = document.documentElement.scrollWidth - window.innerWidth;
    if (page > 0) {
      found.push({element: "page", section: "", problem: `scrolls sideways by ${page} px`});
    }
    const out = document.createElement("pre");
    out.id = "layout-report";
    out.textContent = JSON.stringify({column_px: Math.round(column.clientWidth),
                                      findings: found, scrolling: scrolling});
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


def run_chromium(browser, width, *arguments):
    """One headless Chromium run with a fresh profile."""
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                               f"--window-size={width},{HEIGHT}", *arguments],
                              capture_output=True, text=True, timeout=180, check=True).stdout


def measure(browser, page, width):
    """Layout report of one page at one width: a probed copy is dumped, then removed."""
    probed = page.with_name(f".layout-probe-{width}-{page.name}")
    source = page.read_text(encoding="utf-8")
    probed.write_text(source.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    try:
        dom = run_chromium(browser, width, "--dump-dom", probed.as_uri())
    finally:
        probed.unlink()
    match = re.search(r'<pre id="layout-report"[^>]*>(.*?)</pre>', dom, re.S)
    if match is None:
        raise RuntimeError(f"{page}: the layout probe did not report (page did not load?)")
    return json.loads(html.unescape(match[1]))


def built_pages(site):
    """Every HTML page of the site, outside Sphinx's own folders (``_static``, ...)."""
    pages = (path.relative_to(site) for path in site.rglob("*.html"))
    return sorted(str(page) for page in pages
                  if not any(part.startswith(("_", ".")) for part in page.parts))


def check(browser, site, name, width, screenshots):
    page = (site / name).resolve()
    report = measure(browser, page, width)
    if screenshots is not None:
        shot = screenshots / f"{name.replace('/', '__').removesuffix('.html')}-{width}.png"
        run_chromium(browser, width, f"--screenshot={shot.resolve()}", page.as_uri())
    return name, width, report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the built site, e.g. docs/_build/html")
    parser.add_argument("pages", nargs="*",
                        help="pages relative to the site root (default: every page)")
    parser.add_argument("--widths", type=int, nargs="+", default=WIDTHS,
                        help="window widths in px (default: %(default)s)")
    parser.add_argument("--screenshots", type=Path, default=None,
                        help="save a PNG of each page at each width in this folder")
    parser.add_argument("--jobs", type=int, default=2, help="Chromium runs at once")
    args = parser.parse_args(argv)
    browser = chromium()
    if args.screenshots is not None:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    pages = args.pages or built_pages(args.html)
    jobs = [(name, width) for name in pages for width in args.widths]
    failed = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda job: check(browser, args.html, *job, args.screenshots), jobs)
        for name, width, report in results:
            findings = report["findings"]
            failed += bool(findings)
            scrolls = f", {len(report['scrolling'])} table(s) scroll" if report["scrolling"] else ""
            print(f"{name} at {width} px: {'CUT' if findings else 'fits'} "
                  f"(text column {report['column_px']} px{scrolls})")
            for item in findings:
                print(f"    {item['element']} in '{item['section']}': {item['problem']}")
    print(f"{len(pages)} pages × {len(args.widths)} widths: {failed} with something cut off")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
