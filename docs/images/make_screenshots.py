"""Regenerate the HTML report's screenshots in docs/counterexamples.md (needs Debian's chromium and the
``playwright`` package of the test extra): ``python docs/images/make_screenshots.py``. Each page is the
report of ``movers check --html`` with a step clicked, so that the state panel shows."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
SHOTS = {"html_racy_counter.png": ("racy_counter.py", 3), "html_dining_philosophers.png": ("dining_philosophers.py", 4)}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 720})
        for png, (model, step) in SHOTS.items():
            html = Path(tmp) / (png + ".html")
            subprocess.run([sys.executable, "-m", "movers", "check", f"examples/{model}", "--html", str(html),
                            "--quiet"], check=False, capture_output=True, cwd=ROOT)
            page.goto(html.as_uri())
            page.click(f'button.step[data-step="{step}"]')
            page.evaluate("window.scrollTo(0, 0)")  # the summary and the lanes' header in view
            page.screenshot(path=str(Path(__file__).parent / png), full_page=False)
        browser.close()


if __name__ == "__main__":
    main()
