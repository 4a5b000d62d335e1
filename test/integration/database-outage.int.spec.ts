import { expect } from 'chai';
import pg from 'pg';
import { FAR_END, FAST_VOICE_ENV, voiceLine } from '../support/calls.js';
import { type EsdbTestServer, startEsdbTestServer } from '../support/esdb-test-server/server.js';
import { TestClock } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually, type Receiver, startReceiver } from '../support/webhook-receiver.js';

const TERMINATE = `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
  where backend_type = 'client backend' and pid <> pg_backend_pid() and datname = $1`;

/**
 * The database going away under load (a restart, a failover, a pooler's idle timeout): the process lives on,
 * requests meanwhile answer 503 in the envelope shape, and every write it acknowledged is readable afterwards,
 * in the read models and as a webhook delivery. Needs a PostgreSQL server (DATABASE_URL); skipped otherwise.
 */
describe('the database going away', function () {
  this.timeout(120_000);
  const url = process.env.DATABASE_URL;
  const clock = new TestClock(new Date());
  let app: TestApp;
  let rx: Receiver;
  let admin: pg.Client;
  let key = '';

  before(async function () {
    if (!url || process.env.EVENTSTORE_URL) this.skip();
    app = await startTestApp({ WEBHOOK_POLL_INTERVAL_MS: '20', REACTOR_LEASE_TTL_MS: '1000', DATABASE_POOL_SIZE: '8' }, { clock });
    rx = await startReceiver();
    // a connection to another database of the server: it survives the terminations and can lock ours
    const other = new URL(url!);
    other.pathname = '/postgres';
    admin = new pg.Client({ connectionString: other.toString() });
    admin.on('error', () => undefined);
    await admin.connect();
    key = (await app.newAccount('Outage')).apiKey;
    expect((await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url, events: ['agent.created'] } })).status).to.equal(200);
  });
  after(async () => {
    if (admin) {
      await admin.query(`alter database "${new URL(url!).pathname.slice(1)}" allow_connections true`).catch(() => undefined);
      await admin.end();
    }
    await rx?.close();
    await app?.close();
  });

  const terminate = async (): Promise<number> =>
    (await admin.query<{ n: number }>(TERMINATE, [new URL(url!).pathname.slice(1)])).rows[0]!.n;

  it('keeps serving through terminated connections; every acknowledged write is read back and delivered', async () => {
    const acknowledged: string[] = [];
    const refused: { status: number; body: any }[] = [];
    let running = true;
    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        const r = await app.call('POST', '/v1/agents', { key, body: { name: `load ${n}.${i}` } });
        if (r.status === 200) acknowledged.push(r.body.id as string);
        else refused.push(r);
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));
    let terminated = 0;
    for (let round = 0; round < 5; round++) {
      await eventually(() => acknowledged.length >= (round + 1) * 5, 30_000, 'progress between terminations');
      terminated += await terminate();
    }
    running = false;
    await load;

    expect(terminated, 'connections terminated').to.be.greaterThan(0);
    expect(acknowledged.length).to.be.greaterThan(20);
    for (const r of refused) {
      expect(r.status, JSON.stringify(r.body)).to.equal(503);
      expect(r.body.error.code).to.be.oneOf(['SERVICE_UNAVAILABLE', 'READ_MODEL_TIMEOUT']);
      expect(r.body.request_id).to.be.a('string');
    }

    // projections catch up: every acknowledged agent is in the read model
    await eventually(
      async () => {
        const list = await app.call('GET', '/v1/agents?limit=100&offset=0', { key });
        const total = list.body.total ?? list.body.pagination?.total;
        return list.status === 200 && (total === undefined || total >= acknowledged.length);
      },
      30_000,
      'the agents projection to catch up',
    );
    for (const id of acknowledged) expect((await app.call('GET', `/v1/agents/${id}`, { key })).status, id).to.equal(200);

    // reactors and the delivery worker resume: each acknowledged agent reaches the receiver (attempts whose
    // outcome could not be recorded are sent again once their lease ends, on the test clock)
    const delivered = () => new Set(rx.received.map((r) => (JSON.parse(r.body) as { agentId: string }).agentId));
    await eventually(
      () => {
        clock.advance(200_000);
        return acknowledged.every((id) => delivered().has(id));
      },
      60_000,
      'a delivery of every acknowledged agent',
    );
  });

  it('answers /readyz and requests with 503 while the database refuses connections, and recovers after', async function () {
    const db = new URL(url!).pathname.slice(1);
    try {
      await admin.query(`alter database "${db}" allow_connections false`);
    } catch {
      this.skip(); // not the owner of the test database
    }
    try {
      await terminate();
      await eventually(async () => (await app.call('GET', '/readyz')).status === 503, 20_000, '/readyz 503');
      const r = await app.call('POST', '/v1/agents', { key, body: { name: 'while away' } });
      expect(r.status).to.equal(503);
      expect(r.body.error).to.include({ code: 'SERVICE_UNAVAILABLE', type: 'api_error' });
      expect(r.headers.get('retry-after')).to.equal('2');
    } finally {
      await admin.query(`alter database "${db}" allow_connections true`);
    }
    await eventually(async () => (await app.call('GET', '/readyz')).status === 200, 30_000, '/readyz 200 again');
    const after = await app.call('POST', '/v1/agents', { key, body: { name: 'back' } });
    expect(after.status).to.equal(200);
    expect((await app.call('GET', `/v1/agents/${after.body.id}`, { key })).status).to.equal(200);
  });
});

/**
 * A live call's facts during an outage (docs/calls.md#the-live-session): what the call saw while the database was
 * away is written once it is back, in order, never logged and dropped. Needs a PostgreSQL server (DATABASE_URL).
 */
describe('the database going away during a live call', function () {
  this.timeout(120_000);
  const url = process.env.DATABASE_URL;
  let app: TestApp;
  let admin: pg.Client;
  let db = '';

  before(async function () {
    if (!url || process.env.EVENTSTORE_URL) this.skip();
    app = await startTestApp({ ...FAST_VOICE_ENV, CALL_HOST_LEASE_MS: '1500', CALL_SWEEP_INTERVAL_MS: '200', DATABASE_POOL_SIZE: '8' });
    const other = new URL(url!);
    other.pathname = '/postgres';
    db = new URL(url!).pathname.slice(1);
    admin = new pg.Client({ connectionString: other.toString() });
    admin.on('error', () => undefined);
    await admin.connect();
  });
  after(async () => {
    if (admin) {
      await admin.query(`alter database "${db}" allow_connections true`).catch(() => undefined);
      await admin.end();
    }
    await app?.close();
  });

  it('writes the end of a call that came while the database was away once it is back (user_hangup, not host_lost)', async function () {
    const line = await voiceLine(app, { greeting: 'Hello there.' }, 'Outage call');
    const placed = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: FAR_END.silent } });
    expect(placed.status, JSON.stringify(placed.body)).to.equal(200);
    const callId = placed.body.id as string;
    await eventually(async () => (await app.call('GET', `/v1/calls/${callId}`, { key: line.key })).body.answeredAt, 30_000, 'answered');
    try {
      await admin.query(`alter database "${db}" allow_connections false`);
    } catch {
      this.skip(); // not the owner of the test database
    }
    try {
      await admin.query(TERMINATE, [db]);
      await eventually(async () => (await app.call('GET', '/readyz')).status === 503, 20_000, '/readyz 503');
      // the far end hangs up while the database is away: the session's EndCall cannot be written now
      const hung = await app.call('POST', `/sandbox/calls/${callId}/hangup`, { key: ADMIN_TOKEN });
      expect(hung.status, JSON.stringify(hung.body)).to.equal(200);
      // long enough for the call's lease to lapse (1.5 s) while its end is still unwritten
      await eventually(
        async () => (await app.call('GET', `/sandbox/calls/${callId}`, { key: ADMIN_TOKEN })).body.status === 'ended',
        10_000,
        'leg ended',
      );
      await eventually(async () => (await app.call('GET', '/readyz')).status === 503, 20_000, 'still away');
    } finally {
      await admin.query(`alter database "${db}" allow_connections true`);
    }
    const call = await eventually(
      async () => {
        const c = await app.call('GET', `/v1/calls/${callId}`, { key: line.key });
        return c.status === 200 && c.body.status !== 'in-progress' ? c.body : undefined;
      },
      60_000,
      'the call ended',
    );
    expect(call!.disconnectionReason).to.equal('user_hangup');
    expect(call!.status).to.equal('completed');
    const events = (await app.rt.store.readStream(`call-${callId}`)).map((e) => e.type);
    expect(events.filter((t) => t === 'CallEnded' || t === 'CallFailed')).to.have.length(1);
  });
});

/**
 * The same for EventStoreDB: subscriptions dropped under load (what a lost gRPC connection does) resume from
 * their checkpoints, so every acknowledged write reaches the read models and the webhooks. Uses the in-repo
 * gRPC test server, so it runs when EVENTSTORE_URL is not set.
 */
describe('the EventStoreDB connection dropping', function () {
  this.timeout(120_000);
  const clock = new TestClock(new Date());
  let server: EsdbTestServer;
  let app: TestApp;
  let rx: Receiver;
  let key = '';

  before(async function () {
    if (process.env.EVENTSTORE_URL) this.skip();
    server = await startEsdbTestServer();
    app = await startTestApp({ EVENTSTORE_URL: server.url, WEBHOOK_POLL_INTERVAL_MS: '20', REACTOR_LEASE_TTL_MS: '1000' }, { clock });
    rx = await startReceiver();
    key = (await app.newAccount('ESDB outage')).apiKey;
    expect((await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url, events: ['agent.created'] } })).status).to.equal(200);
  });
  after(async () => {
    await rx?.close();
    await app?.close();
    await server?.stop();
  });

  it('resumes every subscription after drops under load; every acknowledged write is read back and delivered', async () => {
    const acknowledged: string[] = [];
    const refused: { status: number; body: any }[] = [];
    let running = true;
    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        const r = await app.call('POST', '/v1/agents', { key, body: { name: `esdb ${n}.${i}` } });
        if (r.status === 200) acknowledged.push(r.body.id as string);
        else refused.push(r);
      }
    };
    const opened = server.subscriptionsOpened();
    const load = Promise.all([0, 1, 2].map(client));
    for (let round = 0; round < 5; round++) {
      await eventually(() => acknowledged.length >= (round + 1) * 5, 30_000, 'progress between drops');
      server.dropSubscriptions();
    }
    running = false;
    await load;

    expect(server.subscriptionsOpened(), 'resubscribed').to.be.greaterThan(opened);
    for (const r of refused) {
      expect(r.status, JSON.stringify(r.body)).to.equal(503);
      expect(r.body.request_id).to.be.a('string');
    }
    for (const id of acknowledged) {
      await eventually(async () => (await app.call('GET', `/v1/agents/${id}`, { key })).status === 200, 30_000, `agent ${id} projected`);
    }
    const delivered = () => new Set(rx.received.map((r) => (JSON.parse(r.body) as { agentId: string }).agentId));
    await eventually(
      () => {
        clock.advance(200_000);
        return acknowledged.every((id) => delivered().has(id));
      },
      60_000,
      'a delivery of every acknowledged agent',
    );
  });
});
