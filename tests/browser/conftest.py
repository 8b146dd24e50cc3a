"""Browser tests: real Chromium (Debian's `chromium`, installed by `make test`) driven by
Playwright's Python package against the site on pytest-django's live server, with the
suite's DynamoDB Local behind it.

Playwright never downloads a browser here: it launches the one at $CHROMIUM
(/usr/bin/chromium). A failing test leaves a screenshot of each of its pages under
var/browser/failures/.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import Page, expect, sync_playwright

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Headless, and no calls home: this machine's network is closed (docs/how-to/run-tests.md "Browser tests").
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
ARTIFACTS = Path(settings.BASE_DIR) / "var" / "browser"
AXE = Path(settings.BASE_DIR) / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# Generous: CI is a busy 2-core machine. Live updates are measured by bench/live.py, not here.
WAIT_MS = 20_000
expect.set_options(timeout=WAIT_MS)


@pytest.fixture
def browser(site, monkeypatch):
    """Chromium for one test. Playwright's sync API runs an event loop in this thread while
    it is open; the test's own ORM calls are still synchronous and safe, but Django refuses
    them inside a running loop unless told (only here). It is set up after, so closed
    before, the test database (whose flush must not run inside the loop)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"No Chromium at {CHROMIUM}: `make test` installs Debian's chromium (or set CHROMIUM).")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def site(live_server, transactional_db, settings):
    """The live server's base URL (no trailing slash), its session cookie not HTTPS-only; links
    in mails (SITE_URL) lead to it."""
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    settings.SITE_URL = live_server.url
    return live_server.url


class Pages:
    """Opens pages as someone (or anonymous), each in its own browser context."""

    def __init__(self, browser, site: str, request) -> None:
        self.browser, self.site, self.request = browser, site, request
        self.opened: list[Page] = []
        self.errors: dict[Page, list[str]] = {}

    def open(
        self, path: str = "/", *, user=None, javascript: bool = True, viewport=DESKTOP, timezone_id: str | None = None
    ) -> Page:
        context = self.browser.new_context(
            base_url=self.site,
            java_script_enabled=javascript,
            viewport=viewport,
            locale="en-GB",
            timezone_id=timezone_id,
        )
        context.set_default_timeout(WAIT_MS)
        if user is not None:
            self.log_in(context, user)
        page = context.new_page()
        errors = self.errors[page] = []

        def on_console(message) -> None:
            if message.type == "error":
                errors.append(f"{message.text} ({message.location.get('url')})")

        page.on("console", on_console)
        page.on("pageerror", lambda error: errors.append(str(error)))
        self.opened.append(page)
        if path:
            page.goto(path)
        return page

    @property
    def console_errors(self) -> list[str]:
        """Errors in the console of every page opened (CSP refusals, missing files, script errors)."""
        return [error for errors in self.errors.values() for error in errors]

    def log_in(self, context, user) -> None:
        """Signs in without the form (the log-in journey itself has its own test)."""
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": self.site}])

    def close(self) -> None:
        failed = getattr(self.request.node, "report_call", None)
        if failed is not None and failed.failed:
            folder = ARTIFACTS / "failures"
            folder.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"[^\w.-]+", "_", self.request.node.nodeid)
            for number, page in enumerate(self.opened):
                try:
                    page.screenshot(path=str(folder / f"{name}-{number}.png"), full_page=True)
                except Exception:  # a closed page has nothing to show
                    pass
        for page in self.opened:
            page.context.close()


@pytest.fixture
def pages(browser, site, request):
    opened = Pages(browser, site, request)
    yield opened
    opened.close()


def axe_violations(page: Page, rules: list[str] | None = None) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now; with `rules`, every
    finding of only those rules (they may be off by default, e.g. target-size)."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.evaluate(AXE.read_text() + "\n;undefined")  # evaluated by DevTools: not subject to the CSP
    # No CSSOM preload: axe would re-fetch @import-ed sheets against the page's URL (a 404 of
    # its own making, e.g. admin/css/forms.css's widgets.css); only css-orientation-lock uses it.
    options = {"resultTypes": ["violations"], "preload": False}
    if rules:
        options["runOnly"] = {"type": "rule", "values": rules}
    results = page.evaluate("(options) => axe.run(document, options)", options)
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} at "
        + ", ".join(str(node["target"]) for node in violation["nodes"][:3])
        for violation in results["violations"]
        if rules or violation["impact"] in {"serious", "critical"}
    ]


def horizontal_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the window (0: nothing to scroll sideways)."""
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
