"""Look at a build report as a person does: a headless Chromium screenshot of ``report.html`` (issue 36).

    apt-get install chromium            # Debian's package; nothing is fetched at run time
    .venv/bin/python -m tools.screenshot_report build/example/report/report.html --out /tmp/report.png \
        [--section task-flow-pictures] [--width 1280] [--height 2400]

``--section`` shows one section, named by its heading's anchor (``report.html#task-flow-pictures``; every h2 and h3
of the page has one). docs/img/build-report-*.png were taken this way from the example build (docs/build.md).
The browser runs with no network (``--proxy-server`` to a closed port: the report is one local file and its PNGs).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str | None:
    """The first headless-capable browser on PATH, or None."""
    return next((b for b in BROWSERS if shutil.which(b)), None)


def screenshot(report: Path, out: Path, *, section: str = "", width: int = 1280, height: int = 2400) -> Path:
    """Write a PNG of ``report`` (scrolled to ``section``) as Chromium renders it; returns ``out``."""
    exe = browser()
    if exe is None:
        raise SystemExit("no Chromium on PATH: apt-get install chromium")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(section_page(report, section), encoding="utf-8")
        subprocess.run([exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--proxy-server=127.0.0.1:9", "--no-first-run", f"--user-data-dir={tmp}/profile",
                        f"--window-size={width},{height}", f"--screenshot={out.resolve()}", page.as_uri()],
                       check=True, capture_output=True, timeout=180)
    return out


def section_page(report: Path, section: str = "") -> str:
    """The report's page, cut to one section (from its heading to the next heading of the same level) when
    ``section`` is given, with its pictures still found beside the report (a ``<base>``): headless Chromium
    renders a page opened at an anchor blank."""
    text = report.read_text(encoding="utf-8")
    base = f'<base href="{report.resolve().parent.as_uri()}/">'
    text = text.replace("<head>", "<head>" + base, 1)
    if not section:
        return text
    m = re.search(rf'<h([23]) id="{re.escape(section)}">', text)
    if m is None:
        raise SystemExit(f"{report}: no heading with the anchor {section!r}")
    end = text.find(f"<h{m.group(1)} ", m.end())
    body_start = text.index("<body>") + len("<body>")
    return text[:body_start] + "\n" + text[m.start(): end if end > 0 else text.index("</body>")] + "</body></html>\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--section", default="", help="a heading's anchor, e.g. task-flow-pictures")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=2400)
    a = ap.parse_args(argv)
    print(screenshot(a.report, a.out, section=a.section, width=a.width, height=a.height))
    return 0


if __name__ == "__main__":
    sys.exit(main())
