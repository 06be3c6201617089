// Where the examples find the admin API: the variables hookstream's own API commands read.
import { createAdminClient, type AdminClient } from "../src/index.js";

export function adminClient(): AdminClient {
  const token = process.env.HOOKSTREAM_API_KEY || process.env.HOOKSTREAM_ADMIN_TOKEN;
  if (!token) {
    throw new Error("set HOOKSTREAM_ADMIN_TOKEN (the operator token; hookstream dev writes it to .data/dev-admin-token) or HOOKSTREAM_API_KEY");
  }
  return createAdminClient(process.env.HOOKSTREAM_ADMIN_URL || "http://127.0.0.1:8080", token);
}

/** usage prints how to call an example and exits with status 2. */
export function usage(text: string): never {
  console.error(`usage: ${text}`);
  process.exit(2);
}
