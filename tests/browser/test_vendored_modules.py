"""The vendored ES modules (Preact, hooks, htm) load through the import map
under the page's Content Security Policy, with no build step and no CDN."""

from __future__ import annotations

import pytest


@pytest.mark.django_db(transaction=True)
def test_preact_and_htm_render_through_the_import_map(login, annotator, live_server):
    page = login("ann1", "ann-pass-123")
    page.goto(f"{live_server.url}/work/")
    rendered = page.evaluate(
        """async () => {
            const { h, render } = await import("preact");
            const { useState } = await import("preact/hooks");
            const htm = (await import("htm")).default;
            const html = htm.bind(h);
            const host = document.createElement("div");
            document.body.append(host);
            function Counter() { const [n] = useState(41); return html`<b data-n=${n + 1}>ok</b>`; }
            render(html`<${Counter} />`, host);
            return host.innerHTML;
        }"""
    )
    assert rendered == '<b data-n="42">ok</b>'
    assert page.errors == []
