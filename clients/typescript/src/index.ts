// The hookstream admin API from TypeScript: src/schema.ts is generated from admin/openapi.json
// by openapi-typescript (npm run generate, or make clients); openapi-fetch turns it into a
// client whose every route, parameter, body and answer is typed.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** The API's schemas by name: Schemas["Endpoint"], Schemas["DeliveryDetail"], … */
export type Schemas = components["schemas"];

/** The admin API's client: client.GET("/v1/partners/{pid}/endpoints", { params: … }), … */
export type AdminClient = Client<paths>;

/**
 * A client of the admin API at baseUrl (e.g. http://127.0.0.1:8080) that sends token, the
 * operator token or a partner API key (hsk_…), on every request.
 */
export function createAdminClient(baseUrl: string, token: string): AdminClient {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
}

/** A refusal of the API: its HTTP status and its RFC 9457 problem (code, detail, request_id, …). */
export class APIError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Schemas["Problem"]>,
  ) {
    super(`hookstream admin API: ${status} ${problem.code ?? ""}: ${problem.detail ?? problem.title ?? ""}`);
    this.name = "APIError";
  }
}

/** check returns an answer's data, or throws an APIError for a refusal. */
export function check<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.error !== undefined || !answer.response.ok) {
    throw new APIError(answer.response.status, (answer.error ?? {}) as Partial<Schemas["Problem"]>);
  }
  return answer.data as T;
}
