"""An OpenAI-compatible chat endpoint on loopback (127.0.0.1 only) for the Harbor tests: the HTTP plumbing
once; each test gives ``respond(body, n) -> reply dict`` with its hand-written replies. It records every
request as ``{"body": ..., "auth": <Authorization header>}``. A reply holding ``"_http_status"`` is sent
with that status (an endpoint that fails)."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any, Callable

Respond = Callable[[dict, int], dict[str, Any]]


class LoopbackChat:
    def __init__(self, respond: Respond):
        self.requests: list[dict] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):   # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"body": body, "auth": self.headers.get("Authorization", "")})
                reply = dict(respond(body, len(server.requests)))
                status = int(reply.pop("_http_status", 200))
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()


__all__ = ["LoopbackChat"]
