"""receiver.py: a webhook receiver that verifies hookstream's signatures with the Standard
Webhooks library (PyPI standardwebhooks). WEBHOOK_SECRET is the endpoint's whsec_… secret; PORT
(9000) where it listens. A verified delivery answers 204, anything else 400 and is not processed."""

import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

secret = os.environ.get("WEBHOOK_SECRET")
if not secret:
    sys.exit("set WEBHOOK_SECRET to the endpoint's secret (whsec_…)")
webhook = Webhook(secret)
port = int(os.environ.get("PORT") or 9000)


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        # Verify the raw body as it came: parsed and serialized again, it would not match.
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            event = webhook.verify(body, headers)
        except WebhookVerificationError as err:
            print(f"refused {headers.get('webhook-id', '(no webhook-id)')}: {err}", flush=True)
            self.send_response(400)
            self.end_headers()
            return
        print(f"verified {headers['webhook-id']} {event.get('type')}", flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format, *args):
        pass  # one line per delivery, above, is enough


server = ThreadingHTTPServer(("127.0.0.1", port), Receiver)
print(f"listening on http://127.0.0.1:{port}", flush=True)
server.serve_forever()
