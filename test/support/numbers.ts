import type { TestClock } from './fixtures.js';
import { ADMIN_TOKEN, type TestApp } from './http.js';

/** An account through the admin API with a number limit and extra credit (micro-dollars, on top of the $5.00 start). */
export async function account(app: TestApp, o: { name?: string; numberLimit?: number; creditMicros?: number } = {}) {
  const r = await app.call('POST', '/admin/accounts', {
    key: ADMIN_TOKEN,
    body: { name: o.name ?? 'Numbers test', ...(o.numberLimit !== undefined ? { numberLimit: o.numberLimit } : {}) },
  });
  if (r.status !== 200) throw new Error(`admin create account: ${r.status} ${JSON.stringify(r.body)}`);
  const acc = r.body as { accountId: string; apiKey: string };
  if (o.creditMicros) await credit(app, acc.accountId, o.creditMicros);
  return acc;
}

export async function credit(app: TestApp, accountId: string, amountMicros: number) {
  const r = await app.call('POST', `/admin/accounts/${accountId}/credit`, { key: ADMIN_TOKEN, body: { amountMicros } });
  if (r.status !== 200) throw new Error(`credit: ${r.status} ${JSON.stringify(r.body)}`);
}

/** The account's balance and used number slots, as /v1/usage reports them. */
export async function usage(app: TestApp, key: string): Promise<{ balanceMicros: number; used: number; limit: number }> {
  const r = await app.call('GET', '/v1/usage', { key });
  return { balanceMicros: r.body.balance.micros, used: r.body.numbers.used, limit: r.body.numbers.limit };
}

/** Sandbox control API calls (admin token). */
export const sandbox = (app: TestApp) => ({
  fault: async (body: Record<string, unknown>) => {
    const r = await app.call('POST', '/sandbox/faults', { key: ADMIN_TOKEN, body });
    if (r.status !== 200) throw new Error(`fault: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  },
  clearFaults: () => app.call('DELETE', '/sandbox/faults', { key: ADMIN_TOKEN }),
  inventory: async (areaCode: string) =>
    (await app.call('GET', `/sandbox/carrier/inventory/${areaCode}`, { key: ADMIN_TOKEN })).body.numbers as {
      phoneNumber: string;
      status: string;
      purchaseKey: string | null;
    }[],
  purchases: async () =>
    (await app.call('GET', '/sandbox/carrier/purchases', { key: ADMIN_TOKEN })).body.data as { phoneNumber: string; purchaseKey: string }[],
});

/**
 * Polls until `check` returns a value (not undefined/false); for effects a process manager applies in the background.
 * `everyMs`: the pause between looks; a check that calls the API and is known to wait seconds looks less often, or its
 * looks alone would use up the key's request budget (THROTTLE_MAX_REQUESTS a minute) and the next test would get 429s.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Like startTestApp, but on a database that outlives the app: a PGlite data directory, or the DATABASE_URL
 * server emptied only when `reset` is true. Two of these in a row are one service restarted on the same data.
 */
export async function startAppOn(o: {
  dataDir: string;
  reset: boolean;
  env?: Record<string, string>;
  clock?: TestClock;
}): Promise<TestApp> {
  const { loadConfig } = await import('../../infrastructure/config/config.js');
  const { createLogger } = await import('../../infrastructure/logger.js');
  const { createRuntime, listen } = await import('../../infrastructure/runtime.js');
  const { resetServerDatabase } = await import('./http.js');
  const cfg = loadConfig({
    DATA_DIR: o.dataDir,
    LOG_LEVEL: 'silent',
    ADMIN_TOKEN,
    DEV_ACCOUNT: 'false',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(process.env.EVENTSTORE_URL ? { EVENTSTORE_URL: process.env.EVENTSTORE_URL } : {}),
    ...(o.env ?? {}),
  });
  if (cfg.DATABASE_URL && o.reset) await resetServerDatabase(cfg.DATABASE_URL);
  const rt = await createRuntime(cfg, createLogger(cfg.LOG_LEVEL), o.clock ? { clock: o.clock } : {});
  const server = await listen(rt.app, 0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const call: TestApp['call'] = async (method, path, c = {}) => {
    const headers: Record<string, string> = { ...(c.headers ?? {}) };
    if (c.key) headers.authorization = `Bearer ${c.key}`;
    const body = c.body === undefined ? undefined : JSON.stringify(c.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
  return {
    url,
    rt,
    call,
    newAccount: async (name = 'Test account') => (await call('POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name } })).body,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rt.close();
    },
  };
}
