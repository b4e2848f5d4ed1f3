"""The Web UI of ``massgen serve --ui``: watch, steer and replay team runs in a browser.

Layout: ``access`` (token, Host and Origin checks), ``runlog`` (one in-memory log per
run, run ids under the log root), ``stream`` (the per-tab SSE stream), ``routes`` (the
``/ui`` routes and controls) and ``static/`` (the page: plain HTML and ES modules,
with Preact + htm vendored; no build step, nothing from a CDN).
"""

from massgen.cli.serve.ui.access import UiAccess
from massgen.cli.serve.ui.routes import WebUI
from massgen.cli.serve.ui.stream import StreamSettings

__all__ = ["StreamSettings", "UiAccess", "WebUI"]
