import { ADMIN_TOKEN, type TestApp } from './http.js';

/** An account through the admin API with a number limit and extra credit (micro-dollars, on top of the $5.00 start). */
export async function account(app: TestApp, o: { name?: string; numberLimit?: number; creditMicros?: number } = {}) {
  const r = await app.call('POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name: o.name ?? 'Numbers test', ...(o.numberLimit !== undefined ? { numberLimit: o.numberLimit } : {}) } });
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
  inventory: async (areaCode: string) => (await app.call('GET', `/sandbox/carrier/inventory/${areaCode}`, { key: ADMIN_TOKEN })).body.numbers as { phoneNumber: string; status: string; purchaseKey: string | null }[],
  purchases: async () => (await app.call('GET', '/sandbox/carrier/purchases', { key: ADMIN_TOKEN })).body.data as { phoneNumber: string; purchaseKey: string }[],
});

/** Polls until `check` returns a value (not undefined/false); for effects a process manager applies in the background. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
