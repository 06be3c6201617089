// receiver: a webhook receiver that verifies hookstream's signatures with the Standard Webhooks
// library (npm standardwebhooks). WEBHOOK_SECRET is the endpoint's whsec_… secret; PORT (9000)
// where it listens. A verified delivery answers 204, anything else 400 and is not processed.
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error("set WEBHOOK_SECRET to the endpoint's secret (whsec_…)");
  process.exit(2);
}
const webhook = new Webhook(secret);
const port = Number(process.env.PORT || 9000);

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    // Verify the raw body as it came: parsed and serialized again, it would not match.
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value ?? ""]),
    );
    let event: { type?: string };
    try {
      event = webhook.verify(body, headers) as { type?: string };
    } catch (err) {
      console.log(`refused ${headers["webhook-id"] || "(no webhook-id)"}: ${(err as Error).message}`);
      res.writeHead(400).end();
      return;
    }
    console.log(`verified ${headers["webhook-id"]} ${event.type}`);
    res.writeHead(204).end();
  });
}).listen(port, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${port}`));
