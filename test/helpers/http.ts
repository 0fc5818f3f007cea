import { SELF } from "cloudflare:test";

export const BASE = "http://localhost:8787";

/** A request to the Worker through its real fetch handler, with a bearer credential when one is given. */
export function call(
  path: string,
  options: { key?: string; method?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers = new Headers(options.headers);
  if (options.key) headers.set("Authorization", `Bearer ${options.key}`);
  let body: BodyInit | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  }
  return SELF.fetch(`${BASE}${path}`, { method: options.method ?? "GET", headers, body });
}

export async function json<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}
