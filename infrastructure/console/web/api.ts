import { createParser } from 'eventsource-parser';

/**
 * The console talks to the same public API as any client (docs/console.md). The API key lives in this tab's
 * session storage only: never in a URL, never in local storage, gone when the tab closes.
 */
const KEY = 'avp.console.apiKey';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn: (key: string): void => sessionStorage.setItem(KEY, key),
  signOut: (): void => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
  }
}

/** Listeners told when the key stops working (401), so the app shows the sign-in form again. */
const signedOut = new Set<() => void>();
export const onSignedOut = (f: () => void): (() => void) => {
  signedOut.add(f);
  return () => signedOut.delete(f);
};

function headers(key: string | null, json: boolean): Record<string, string> {
  return { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(json ? { 'content-type': 'application/json' } : {}) };
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text();
  let body: { error?: { code?: string; message?: string }; detail?: unknown } | null = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  const message = body?.error?.message ?? (typeof body?.detail === 'string' ? body.detail : `HTTP ${res.status}`);
  if (res.status === 401) for (const f of signedOut) f();
  return new ApiError(res.status, body?.error?.code ?? null, message);
}

/** A JSON request with the session's key; a non-2xx answer throws ApiError with the server's message. */
export async function api<T>(path: string, o: { method?: string; body?: unknown; key?: string } = {}): Promise<T> {
  const res = await fetch(path, {
    method: o.method ?? 'GET',
    headers: headers(o.key ?? session.key(), o.body !== undefined),
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
  });
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

/**
 * A Server-Sent Events stream read with fetch, because EventSource cannot send the Authorization header (and
 * the key must not go in the URL). Resolves when the server closes the stream or `signal` aborts.
 */
export async function stream(path: string, onEvent: (event: string, data: unknown) => void, signal: AbortSignal): Promise<void> {
  const res = await fetch(path, { headers: { ...headers(session.key(), false), accept: 'text/event-stream' }, signal });
  if (!res.ok || !res.body) throw await failure(res);
  const parser = createParser({
    onEvent: (e) => {
      let data: unknown = e.data;
      try {
        data = JSON.parse(e.data);
      } catch {
        // not JSON: hand over the text
      }
      onEvent(e.event ?? 'message', data);
    },
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(value);
    }
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  }
}
