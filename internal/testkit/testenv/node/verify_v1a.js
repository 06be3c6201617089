// An independent Standard Webhooks v1a verifier, written from the specification
// (https://www.standardwebhooks.com, "Signature scheme" and "Webhook headers") with nothing but
// Node's own crypto: hookstream's Go code is not consulted, so the two can disagree.
//
// stdin: {"now": unix seconds, "tolerance": seconds, "public_keys": ["whpk_…"],
//         "messages": [{"headers": {name: value}, "body": base64 of the raw body}]}
// stdout: one answer per message, in order: "ok" or the reason it was refused.
"use strict";
const crypto = require("node:crypto");

function publicKey(text) {
  if (!text.startsWith("whpk_")) throw new Error("a public key starts with whpk_");
  const raw = Buffer.from(text.slice("whpk_".length), "base64");
  if (raw.length !== 32) throw new Error("an ed25519 public key is 32 bytes");
  return crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
}

function header(headers, name) {
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return v;
  }
  return "";
}

function verify(input, keys, message) {
  const id = header(message.headers, "webhook-id");
  const timestamp = header(message.headers, "webhook-timestamp");
  const signature = header(message.headers, "webhook-signature");
  if (!id || !timestamp || !signature) return "missing header";
  if (!/^[0-9]+$/.test(timestamp)) return "timestamp is not unix seconds";
  if (Math.abs(input.now - Number(timestamp)) > input.tolerance) return "timestamp outside the tolerance";
  // The signed content: {msg_id}.{timestamp}.{payload}, the payload as the raw bytes received.
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, "utf8"), Buffer.from(message.body, "base64")]);
  for (const entry of signature.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1a") continue;
    const sig = Buffer.from(entry.slice(comma + 1), "base64");
    if (sig.length !== 64) continue;
    for (const key of keys) {
      if (crypto.verify(null, content, key, sig)) return "ok";
    }
  }
  return "no v1a signature matches the public keys";
}

let data = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (data += chunk));
process.stdin.on("end", () => {
  const input = JSON.parse(data);
  const keys = input.public_keys.map(publicKey);
  const answers = input.messages.map((m) => verify(input, keys, m));
  process.stdout.write(JSON.stringify(answers));
});
