"""The console's assets as shipped in the api package: every page script is an external module (no inline
script or style, nothing from another origin), and no script builds HTML from strings, so tenant data can only
ever be text. The policy names the signed media links' origin when it differs from the page's."""

from __future__ import annotations

import re

from videogen_api.routes.console import ASSETS, content_security_policy, is_console


def test_the_page_loads_only_its_own_files_and_nothing_inline() -> None:
    page = ASSETS["index.html"].body.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)", page)  # every script has a src
    assert "<style" not in page and " style=" not in page
    assert not re.search(r"\bon[a-z]+=", page)  # no inline handlers
    for url in re.findall(r'(?:src|href)="([^"#]+)"', page):
        assert url.startswith("/console/"), url
        assert url.removeprefix("/console/") in ASSETS, url


def test_no_script_writes_html_or_evaluates_strings() -> None:
    scripts = {name: a.body.decode() for name, a in ASSETS.items() if name.endswith(".js")}
    assert {"js/app.js", "js/api.js", "js/dom.js", "js/generations.js", "js/webhooks.js"} <= set(scripts)
    forbidden = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(\s*[\"'`]"
    )
    for name, text in scripts.items():
        assert not forbidden.search(text), name
        for url in re.findall(r"""from\s+["']([^"']+)["']""", text):
            assert url.startswith("./"), (name, url)  # imports are the console's own modules
    # The key goes in the Authorization header only, never in a query string.
    assert "Bearer ${" in scripts["js/api.js"]
    assert not re.search(r"searchParams\.\w+\([^)]*[kK]ey", scripts["js/api.js"])


def test_the_policy_names_the_media_origin_only_when_it_is_another() -> None:
    same = content_security_policy("http://127.0.0.1:8080")
    assert "media-src 'self' http://127.0.0.1:8080 blob:" in same
    other = content_security_policy("https://api.example.com/")
    assert "img-src 'self' https://api.example.com data: blob:" in other
    assert "media-src 'self' https://api.example.com blob:" in other
    assert "frame-ancestors 'none'" in other and "script-src 'self';" in other
    assert is_console("/console") and is_console("/console/js/app.js")
    assert not is_console("/consoles") and not is_console("/v1/console")
