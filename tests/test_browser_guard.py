"""The browser tests' own guard (browser_kit.open_page): every request a page makes to another host is
aborted and recorded, so `check_clean` fails on it -- including hosts that only look like this machine's --
and no request to the app's own server is. The guard routes only what is not plainly local
(browser_kit.NOT_LOCAL, matched in Playwright's driver); this holds it to what it must catch."""

from __future__ import annotations

import pytest

from browser_kit import NOT_LOCAL, is_local, open_page

pytestmark = pytest.mark.browser

OFF = ["http://evil.example/pixel.png", "https://localhost.evil.example/a", "http://127.0.0.1.evil.example/b",
       "http://evil.example:8501/c", "https://[2001:db8::1]/d"]
LOCAL = ["/_stcore/health", "/_stcore/health?x=http://evil.example/"]


@pytest.mark.parametrize("url", OFF)
def test_what_the_driver_lets_through_is_local(url):
    assert NOT_LOCAL.search(url) and not is_local(url)


@pytest.mark.parametrize("url", ["http://localhost:8501/", "http://127.0.0.1:8501/static/x.js?v=1",
                                 "ws://localhost:8501/_stcore/stream", "http://[::1]:8501/", "data:image/png;base64,AA"])
def test_the_app_s_own_requests_are_not_routed(url):
    assert not NOT_LOCAL.search(url) and is_local(url)


def test_every_request_off_the_machine_is_caught_and_none_to_the_app(server, browser):
    base, _log = server
    errors: list[str] = []
    page = open_page(browser, base, errors)
    try:
        page.goto(f"{base}/_stcore/health")
        page.evaluate("""async (urls) => { for (const u of urls) {
                           try { await fetch(u, {mode: 'no-cors'}); } catch (e) {} } }""",
                      OFF + [base + path for path in LOCAL])
        # an image element's request, as a Markdown image in user text would make one
        page.evaluate("""(u) => new Promise(done => { const i = new Image(); i.onload = i.onerror = done; i.src = u; })""",
                      "http://evil.example/tracker.gif")
    finally:
        page.context.close()
    caught = [e for e in errors if e.startswith("request off the machine")]
    for url in [*OFF, "http://evil.example/tracker.gif"]:
        assert any(url in e for e in caught), f"{url} left unrecorded: {caught}"
    assert not [e for e in caught if base in e.split()[-1]], caught
    assert len(caught) == len(OFF) + 1, caught
