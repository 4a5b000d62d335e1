import { createHash, createHmac } from 'node:crypto';
import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually, startReceiver } from '../support/webhook-receiver.js';

/** What a dump of one store would show: a read-model table, or every stored event (wherever events are kept). */
const dump = async (app: TestApp, table: 'events' | 'webhooks' | 'signups'): Promise<string> => {
  if (table === 'events' && app.rt.store.kind === 'eventstoredb') {
    return JSON.stringify(await app.rt.store.readAll({ maxCount: 1_000_000 }), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  }
  return JSON.stringify((await sql`select * from ${sql.table(table)}`.execute(app.rt.database.db as unknown as Kysely<unknown>)).rows);
};

const verifies = (secret: string, r: { headers: Record<string, unknown>; rawBody: Buffer }): boolean => {
  const ts = String(r.headers['x-webhook-timestamp']);
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${ts}.`, 'utf8'), r.rawBody]))
    .digest('hex');
  return r.headers['x-webhook-signature'] === `sha256=${mac}`;
};

describe('safe defaults', function () {
  this.timeout(60_000);

  describe('without an admin token (a server database and no ADMIN_TOKEN)', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ ADMIN_TOKEN: '' });
    });
    after(() => app.close());

    it('refuses every /admin and /sandbox request with 403, whatever the client address or header', async () => {
      for (const [method, path] of [
        ['POST', '/admin/accounts'],
        ['GET', '/sandbox/faults'],
        ['GET', '/sandbox/outbox?email=a@b.co'],
        ['GET', '/sandbox/carrier/purchases'],
        ['GET', '/sandbox/anything'],
      ] as const) {
        for (const key of [undefined, ADMIN_TOKEN]) {
          const r = await app.call(method, path, { ...(key ? { key } : {}), body: method === 'POST' ? { name: 'x' } : undefined });
          expect(r.status, `${method} ${path}`).to.equal(403);
          expect(r.body.detail).to.match(/set ADMIN_TOKEN/);
          expect(r.body.request_id).to.be.a('string');
        }
      }
    });
  });

  describe('with an admin token', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({
        SIGNUP_MAX_PER_CLIENT_PER_HOUR: '2',
        SIGNUP_MAX_PER_EMAIL_PER_HOUR: '50',
        AUTH_FAILURES_PER_CLIENT: '5',
        THROTTLE_WINDOW_SECONDS: '3600',
      });
    });
    after(() => app.close());

    it('asks every sandbox route for the token, loopback clients included', async () => {
      for (const path of ['/sandbox/faults', '/sandbox/outbox?email=a@b.co', '/sandbox/carrier/purchases', '/sandbox/sip-trunks']) {
        expect((await app.call('GET', path)).status, path).to.equal(401);
        expect((await app.call('GET', path, { key: 'not-the-admin-token-at-all' })).status, path).to.equal(403);
        expect((await app.call('GET', path, { key: ADMIN_TOKEN })).status, path).to.equal(200);
      }
    });

    it('ignores X-Forwarded-For while TRUST_PROXY is off: one client cannot pass the per-client sign-up limit', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await app.call('POST', '/v0/agent/sign-up', {
          body: { human_email: `xff${i}@example.com` },
          headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
        });
        statuses.push(r.status);
      }
      // trusted, each forwarded address would be a new client and all four would pass; ignored, the socket's
      // address is the one client (on EventStoreDB, sign-ups of earlier tests from it may already count)
      expect(statuses.filter((s) => s === 200).length).to.be.at.most(2);
      expect(statuses.slice(2)).to.deep.equal([429, 429]);
      const rows = (await app.rt.database.db.selectFrom('signups').select('client_address').where('email', 'like', 'xff%').execute()).map(
        (r) => r.client_address,
      );
      // the sign-ups taken (none when earlier ones from this address already used the limit) carry the socket's address
      expect(rows.filter((a) => a !== '127.0.0.1')).to.deep.equal([]);
    });

    it('throttles failed authentication per client address: 429 with Retry-After and the plain body, even for a good key', async () => {
      const { apiKey } = await app.newAccount('Throttled');
      expect((await app.call('GET', '/v1/agents', { key: apiKey })).status).to.equal(200);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await app.call('GET', '/v1/agents', { key: `avp_wrong_${i}` })).status);
      expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 429, 429]);
      const r = await app.call('GET', '/v1/agents', { key: apiKey });
      expect(r.status).to.equal(429);
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 3600);
      expect(r.body).to.have.keys(['detail', 'request_id']);
      expect((await app.call('GET', '/v1/agents')).status, 'no key at all').to.equal(429);
    });
  });

  describe('secrets at rest, behind a trusted proxy', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ TRUST_PROXY: 'loopback', SIGNUP_MAX_PER_CLIENT_PER_HOUR: '1' });
    });
    after(() => app.close());

    it('takes the client address from X-Forwarded-For when the peer is a trusted proxy', async () => {
      const statuses: number[] = [];
      for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.2']) {
        statuses.push(
          (
            await app.call('POST', '/v0/agent/sign-up', {
              body: { human_email: `proxied-${statuses.length}@example.com` },
              headers: { 'x-forwarded-for': ip },
            })
          ).status,
        );
      }
      expect(statuses).to.deep.equal([200, 200, 429]);
    });

    it('keeps sign-up codes as a keyed hash: the unkeyed SHA-256 of the code is not in the events', async () => {
      // a client address of its own: the per-client limit is 1 here
      const r = await app.call('POST', '/v0/agent/sign-up', {
        body: { human_email: 'hmac@example.com' },
        headers: { 'x-forwarded-for': '203.0.113.77' },
      });
      expect(r.status).to.equal(200);
      const code = (await app.call('GET', '/sandbox/outbox?email=hmac%40example.com', { key: ADMIN_TOKEN })).body.data[0].code as string;
      const plainHash = createHash('sha256').update(`${r.body.verification_id}:${code}`, 'utf8').digest('hex');
      const events = await dump(app, 'events');
      expect(events).to.contain(r.body.verification_id);
      expect(events).to.not.contain(plainHash);
    });

    it('stores only the sealed secret in events and the webhooks table; the API shows it and deliveries verify with it', async () => {
      const rx = await startReceiver();
      try {
        const { apiKey } = await app.newAccount('Sealed');
        const hook = (await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url, events: ['agent.created'] } })).body as {
          id: string;
          secret: string;
        };
        expect(hook.secret).to.match(/^whsec_/);
        expect((await app.call('GET', '/v1/webhooks', { key: apiKey })).body.secret).to.equal(hook.secret);
        await app.call('POST', '/v1/agents', { key: apiKey, body: { name: 'Signed' } });
        const test = await app.call('POST', '/v1/webhooks/test', { key: apiKey });
        expect(test.body.success).to.equal(true);
        await rx.waitFor(2);
        await eventually(async () =>
          (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.items.every(
            (d: { status: string }) => d.status === 'success',
          ),
        );
        expect(rx.received.map((r) => verifies(hook.secret, r as never))).to.deep.equal([true, true]);
        const secretPart = hook.secret.slice('whsec_'.length);
        for (const table of ['events', 'webhooks'] as const) {
          const text = await dump(app, table);
          expect(text, table).to.contain(hook.id);
          expect(text, table).to.contain('enc:v1:');
          expect(text, table).to.not.contain(secretPart);
        }
      } finally {
        await rx.close();
      }
    });
  });
});
