import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import pg from 'pg';
import { FAR_END, FAST_VOICE_ENV, voiceLine } from '../support/calls.js';
import { ADMIN_TOKEN, resetServerDatabase, SECRETS_KEY, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, messagingLine } from '../support/messaging.js';
import { startServerProcess, startWorkerProcess } from '../support/server-process.js';
import { eventually } from '../support/webhook-receiver.js';

/**
 * The fault test of CI's PostgreSQL stage (`npm run test:faults`, docs/testing.md#the-fault-test): a short load of
 * texts and calls against an API process and a worker process (`ROLE=api`, `ROLE=worker`) while each is killed
 * with SIGKILL and started again, and the database terminates every connection (`pg_terminate_backend`). Then:
 * no accepted text lost or stuck, no call left in a non-final status, no call without its placing and ending
 * facts, and every balance equal to its ledger. Needs DATABASE_URL (the database is emptied).
 */
const url = process.env.DATABASE_URL;
const LOAD_MS = Number(process.env.FAULT_LOAD_MS ?? 40_000);
const TERMINATE = `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
  where backend_type = 'client backend' and pid <> pg_backend_pid() and datname = $1`;

const FINAL_TEXT = new Set(['delivered', 'failed', 'undelivered']);

describe('faults: kill -9 of the API and the worker, terminated database connections', function () {
  this.timeout(300_000);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...FAST_VOICE_ENV,
    ...FAST_MESSAGING_ENV,
    DATABASE_URL: url,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    SECRETS_KEY,
    DEV_ACCOUNT: 'false',
    LOG_LEVEL: 'fatal',
    REACTOR_LEASE_TTL_MS: '1000',
    CALL_HOST_LEASE_MS: '2000',
    CALL_SWEEP_INTERVAL_MS: '300',
    EVENT_POLL_INTERVAL_MS: '50',
    READ_MODEL_TIMEOUT_MS: '3000',
  };
  let api: { child: ChildProcess; base: string } | null = null;
  let worker: { child: ChildProcess } | null = null;
  let admin: pg.Client;

  const kill = (c: ChildProcess | undefined) => {
    if (!c || c.exitCode !== null) return;
    c.removeAllListeners('exit');
    c.kill('SIGKILL');
  };
  const startApi = async () => {
    api = await startServerProcess({ ...env, ROLE: 'api' }, () => true);
    api.child.removeAllListeners('exit');
  };
  const startWorker = async () => {
    worker = await startWorkerProcess(env);
    worker.child.removeAllListeners('exit');
  };
  /** the API as the test helpers see it; a request while the API is down is a network error */
  const app = {
    call: async (method: string, path: string, o: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.key) headers.authorization = `Bearer ${o.key}`;
      if (o.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${api!.base}${path}`, {
        method,
        headers,
        ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body, headers: res.headers };
    },
    newAccount: async (name = 'Faults') => {
      const r = await app.call('POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name } });
      if (r.status !== 200) throw new Error(`account: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as { accountId: string; apiKey: string };
    },
  };
  const asApp = app as unknown as TestApp;
  /** a call that may meet a dead API: retried until it answers (only for reads and setup) */
  const settled = async <T>(f: () => Promise<T>): Promise<T> => {
    for (let i = 0; ; i++) {
      try {
        return await f();
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };

  before(async function () {
    if (!url || process.env.EVENTSTORE_URL) this.skip();
    await resetServerDatabase(url!);
    const other = new URL(url!);
    other.pathname = '/postgres';
    admin = new pg.Client({ connectionString: other.toString() });
    admin.on('error', () => undefined);
    await admin.connect();
    await Promise.all([startApi(), startWorker()]);
  });
  after(async () => {
    kill(api?.child);
    kill(worker?.child);
    await admin?.end();
  });

  it('loses no text, leaves no call unfinished, loses no call fact, and keeps every balance equal to its ledger', async () => {
    const texter = await messagingLine(asApp, { name: 'Fault texts' });
    const caller = await voiceLine(asApp, { greeting: 'Hello.' }, 'Fault calls');
    const texts: { id: string; conversationId: string }[] = [];
    const calls: string[] = [];
    const refused: number[] = [];
    let running = true;
    const textLoad = async (n: number) => {
      for (let i = 0; running; i++) {
        const r = await app
          .call('POST', '/v1/messages', {
            key: texter.key,
            body: {
              agent_id: texter.agentId,
              to_number: `+1415555${String(2000 + n * 1000 + (i % 1000)).padStart(4, '0')}`,
              body: `fault ${n}.${i}`,
            },
          })
          .catch(() => null);
        if (r?.status === 201) texts.push({ id: r.body.id, conversationId: r.body.conversation_id });
        else if (r) refused.push(r.status);
        else await new Promise((res) => setTimeout(res, 100));
      }
    };
    const callLoad = async () => {
      for (let i = 0; running; i++) {
        const to = i % 2 === 0 ? FAR_END.hangUp : FAR_END.busy;
        const r = await app
          .call('POST', '/v1/calls', { key: caller.key, body: { agentId: caller.agentId, toNumber: to } })
          .catch(() => null);
        if (r?.status === 200) calls.push(r.body.id);
        else if (r) refused.push(r.status);
        await new Promise((res) => setTimeout(res, r ? 150 : 300));
      }
    };
    const lookups = async () => {
      for (let i = 0; running; i++) {
        await app
          .call('GET', `/v1/numbers/lookup?phoneNumbers=${encodeURIComponent(`+1415555${3000 + i}`)}`, { key: texter.key })
          .catch(() => null);
        await new Promise((res) => setTimeout(res, 400));
      }
    };
    const faults: string[] = [];
    const chaos = async () => {
      const db = new URL(url!).pathname.slice(1);
      const started = Date.now();
      for (let round = 0; Date.now() - started < LOAD_MS; round++) {
        await new Promise((res) => setTimeout(res, 2500));
        if (round % 3 === 0) {
          const n = (await admin.query<{ n: number }>(TERMINATE, [db])).rows[0]!.n;
          faults.push(`terminated ${n} connections`);
        } else if (round % 3 === 1) {
          kill(api?.child);
          faults.push('killed the API');
          await startApi();
        } else {
          kill(worker?.child);
          faults.push('killed the worker');
          await startWorker();
        }
      }
    };
    const load = Promise.all([textLoad(0), textLoad(1), callLoad(), lookups()]);
    await chaos();
    running = false;
    await load;
    console.log(`      faults: ${faults.join(', ')}`);
    console.log(`      accepted ${texts.length} texts, ${calls.length} calls; refused: ${JSON.stringify(countBy(refused))}`);
    expect(faults.filter((f) => f.startsWith('killed')).length).to.be.greaterThan(1);
    expect(texts.length).to.be.greaterThan(10);
    expect(calls.length).to.be.greaterThan(3);
    for (const s of refused) expect(s, 'a refusal under faults is a 503, or a cap').to.be.oneOf([503, 429, 409]);

    // every accepted text reaches a final status
    const conversations = [...new Set(texts.map((t) => t.conversationId))];
    await eventually(
      async () => {
        const seen = new Map<string, string>();
        for (const c of conversations) {
          const r = await settled(() => app.call('GET', `/v1/conversations/${c}/messages?limit=200`, { key: texter.key }));
          for (const m of (r.body?.data ?? []) as { id: string; status: string }[]) seen.set(m.id, m.status);
        }
        const open = texts.filter((t) => !FINAL_TEXT.has(seen.get(t.id) ?? 'missing'));
        return open.length === 0;
      },
      120_000,
      'every accepted text final',
    );
    // every call the store holds (accepted or not) reaches a final status, with its placing and ending facts
    const stored = await pgRows<{ stream_name: string; types: string[] }>(
      url!,
      `select stream_name, array_agg(event_type order by global_position) as types from events where stream_category = 'call' group by stream_name`,
    );
    expect(stored.length).to.be.at.least(calls.length);
    for (const id of calls) expect(stored.map((s) => s.stream_name)).to.include(`call-${id}`);
    await eventually(
      async () => {
        for (const s of stored) {
          const r = await settled(() => app.call('GET', `/v1/calls/${s.stream_name.slice('call-'.length)}`, { key: caller.key }));
          if (r.status !== 200 || r.body.status === 'in-progress') return false;
        }
        return true;
      },
      120_000,
      'every stored call final',
    );
    const after = await pgRows<{ stream_name: string; types: string[] }>(
      url!,
      `select stream_name, array_agg(event_type order by global_position) as types from events where stream_category = 'call' group by stream_name`,
    );
    for (const s of after) {
      expect(s.types[0], s.stream_name).to.equal('CallPlaced');
      expect(
        s.types.filter((t) => t === 'CallEnded' || t === 'CallFailed'),
        `${s.stream_name}: ${s.types.join(',')}`,
      ).to.have.length(1);
      const answered = s.types.includes('CallAnswered');
      // an answered call that ended was a hang-up by the far end or the sweeper: its greeting was recorded before
      if (answered && s.types.includes('CallEnded')) expect(s.types.indexOf('CallAnswered')).to.be.lessThan(s.types.indexOf('CallEnded'));
    }

    // every balance equals its ledger
    for (const key of [texter.key, caller.key]) {
      await eventually(
        async () => {
          const usage = await settled(() => app.call('GET', '/v1/usage', { key }));
          let sum = 0;
          for (let offset = 0; ; offset += 100) {
            const page = await settled(() => app.call('GET', `/v1/billing/ledger?limit=100&offset=${offset}`, { key }));
            const items = (page.body?.items ?? page.body?.data ?? []) as { amountMicros: number }[];
            sum += items.reduce((n, e) => n + e.amountMicros, 0);
            if (items.length < 100) break;
          }
          return usage.body.balance.micros === sum;
        },
        60_000,
        'balance equal to the ledger',
      );
    }
  });
});

const countBy = (xs: number[]) => {
  const m: Record<number, number> = {};
  for (const x of xs) m[x] = (m[x] ?? 0) + 1;
  return m;
};

async function pgRows<T>(connectionString: string, query: string): Promise<T[]> {
  const c = new pg.Client({ connectionString });
  await c.connect();
  try {
    return (await c.query(query)).rows as T[];
  } finally {
    await c.end();
  }
}
