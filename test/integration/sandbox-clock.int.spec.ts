import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { SandboxClock } from '../../infrastructure/sandbox/clock/clock.js';
import { TestClock } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { startAppOn } from '../support/numbers.js';
import { eventually, startReceiver } from '../support/webhook-receiver.js';

const DAY_S = 86_400;
const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('sandbox clock', function () {
  this.timeout(30_000);
  // a stopped base clock: every time the platform records is the base plus the offset, exactly
  const base = new TestClock(new Date('2026-03-01T12:00:00.000Z'));
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ WEBHOOK_POLL_INTERVAL_MS: '20' }, { clock: base });
  });
  after(() => app.close());

  const clock = () => app.call('GET', '/sandbox/clock', { key: ADMIN_TOKEN });
  const advance = (body: unknown, key = ADMIN_TOKEN) => app.call('POST', '/sandbox/clock', { key, body });
  const offset = async () => (await clock()).body.offsetSeconds as number;

  it('shows the time and the offset, and moves forward by advanceSeconds', async () => {
    const before = (await clock()).body;
    expect(Date.parse(before.now)).to.equal(base.now().getTime() + before.offsetSeconds * 1000);
    const r = await advance({ advanceSeconds: 90 });
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({
      now: new Date(base.now().getTime() + (before.offsetSeconds + 90) * 1000).toISOString(),
      offsetSeconds: before.offsetSeconds + 90,
    });
    expect((await clock()).body).to.deep.equal(r.body);
  });

  it('stamps what happens after an advance with the moved time (an agent created a day later)', async () => {
    const { apiKey } = await app.newAccount('Clock');
    const first = (await app.call('POST', '/v1/agents', { key: apiKey, body: { name: 'Before' } })).body;
    await advance({ advanceSeconds: DAY_S });
    const second = (await app.call('POST', '/v1/agents', { key: apiKey, body: { name: 'After' } })).body;
    expect(Date.parse(second.createdAt) - Date.parse(first.createdAt)).to.equal(DAY_S * 1000);
    expect(Date.parse(second.createdAt)).to.equal(base.now().getTime() + (await offset()) * 1000);
  });

  for (const [what, body] of [
    ['zero', { advanceSeconds: 0 }],
    ['a negative number', { advanceSeconds: -60 }],
    ['a fraction', { advanceSeconds: 1.5 }],
    ['a string', { advanceSeconds: '60' }],
    ['more than 366 days', { advanceSeconds: 366 * DAY_S + 1 }],
    ['nothing', {}],
  ] as const) {
    it(`answers 422 for ${what}, moving nothing`, async () => {
      const was = await offset();
      const r = await advance(body);
      expect(r.status).to.equal(422);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(r.body.error.details.map((d: { field: string }) => d.field)).to.include('advanceSeconds');
      expect(await offset()).to.equal(was);
    });
  }

  it('accepts exactly 366 days', async () => {
    const was = await offset();
    expect((await advance({ advanceSeconds: 366 * DAY_S })).body.offsetSeconds).to.equal(was + 366 * DAY_S);
  });

  it('needs the admin token', async () => {
    const was = await offset();
    expect((await app.call('POST', '/sandbox/clock', { body: { advanceSeconds: 60 } })).status).to.equal(401);
    expect((await advance({ advanceSeconds: 60 }, 'wrong-token-0123456789')).status).to.equal(403);
    expect((await app.call('GET', '/sandbox/clock')).status).to.equal(401);
    expect(await offset()).to.equal(was);
  });

  it('is followed by another process on the same database once it re-reads the offset', async () => {
    const other = new SandboxClock(base, app.rt.get(PLATFORM.ReadDb), silent, { refreshMs: 0 });
    await other.start();
    expect(other.state()).to.deep.equal((await clock()).body);
    const moved = (await advance({ advanceSeconds: 3600 })).body;
    expect(other.state().offsetSeconds).to.equal(moved.offsetSeconds - 3600); // not yet re-read
    expect(await other.refresh()).to.deep.equal(moved);
    // two processes advancing at once: both advances count
    const [a, b] = await Promise.all([other.advance(10), advance({ advanceSeconds: 20 })]);
    expect(Math.max(a.offsetSeconds, b.body.offsetSeconds)).to.equal(moved.offsetSeconds + 30);
    expect(await offset()).to.equal(moved.offsetSeconds + 30);
    await other.stop();
  });

  it('sends a webhook retry once the clock is moved past its due time', async () => {
    const rx = await startReceiver((_r, n) => (n === 0 ? { status: 500, body: 'not yet' } : { status: 200, body: 'thanks' }));
    try {
      const { apiKey } = await app.newAccount('Retry');
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url, events: ['agent.created'] } });
      await app.call('POST', '/v1/agents', { key: apiKey, body: { name: 'Retried' } });
      await rx.waitFor(1);
      const first = await eventually(async () => {
        const l = (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.items;
        return l[0]?.attemptCount === 1 ? l[0] : null;
      });
      expect(first.status).to.equal('pending');
      expect(Date.parse(first.nextRetryAt) - Date.parse(first.lastAttemptAt)).to.equal(300_000);
      await advance({ advanceSeconds: 300 });
      await rx.waitFor(2);
      const done = await eventually(async () => {
        const l = (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.items;
        return l[0]?.status === 'success' ? l[0] : null;
      });
      expect(done.attemptCount).to.equal(2);
      // the signature's timestamp stays on the base clock, which the receiver's own clock agrees with
      expect(Number(rx.received[1]!.headers['x-webhook-timestamp'])).to.equal(Math.floor(base.now().getTime() / 1000));
    } finally {
      await rx.close();
    }
  });
});

describe('sandbox clock across a restart', function () {
  this.timeout(60_000);
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sandbox-clock-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps its offset when the service restarts on the same database', async () => {
    const first = await startAppOn({ dataDir, reset: true });
    let moved: number;
    try {
      const was = (await first.call('GET', '/sandbox/clock', { key: ADMIN_TOKEN })).body.offsetSeconds as number;
      moved = (await first.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: 7 * DAY_S } })).body.offsetSeconds;
      expect(moved).to.equal(was + 7 * DAY_S);
    } finally {
      await first.close();
    }
    const second = await startAppOn({ dataDir, reset: false });
    try {
      const r = (await second.call('GET', '/sandbox/clock', { key: ADMIN_TOKEN })).body;
      expect(r.offsetSeconds).to.equal(moved);
      expect(Date.parse(r.now) - Date.now()).to.be.greaterThan((moved - 3600) * 1000);
    } finally {
      await second.close();
    }
  });
});
