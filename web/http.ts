/** Calls to the API the page sits next to; the session cookie (if any) goes along by itself. */

/** An API answer that was not 2xx, with the API's own message. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Sends the browser to the login page when the session is gone. */
export function toLogin(): void {
  location.assign(`/login?next=${encodeURIComponent(location.pathname)}`);
}

/** A JSON request; throws {@link ApiError} with the API's message on failure (a 401 first opens the login page). */
export async function api<T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  opts: { loginOn401?: boolean } = {},
): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status === 401 && opts.loginOn401 !== false) toLogin();
  if (res.status === 204) return undefined as T;
  const data = (await res.json().catch(() => ({}))) as { error?: string; code?: string };
  if (!res.ok) throw new ApiError(res.status, data.error ?? `HTTP ${res.status}`, data.code);
  return data as T;
}
