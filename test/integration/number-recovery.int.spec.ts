import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { EventMetadata } from '../../application/ports/event-store.port.js';
import type { PhoneNumberEvent } from '../../domain/phone-number/phone-number.decider.js';
import { monthlyChargeId } from '../../domain/phone-number/pricing.js';
import { ACCOUNTS } from '../../infrastructure/accounts/tokens.js';
import { NUMBERS } from '../../infrastructure/numbers/tokens.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { ADMIN_TOKEN, type TestApp } from '../support/http.js';
import { credit, eventually, startAppOn, usage } from '../support/numbers.js';
import { startServerProcess } from '../support/server-process.js';

/**
 * Provisioning survives a crash at any step. The first half plays a process that died at a given step (it
 * leaves exactly the events and upstream effects a dead process leaves: the process manager is stopped, the
 * steps it had done are done with the same application services and the same keys), restarts the service on
 * the same database and checks that each provisioning is completed or cleanly rolled back. The second half
 * kills a real server with SIGKILL after the carrier sold it a number and before the purchase was recorded.
 */
describe('provisioning crash recovery', function () {
  this.timeout(90_000);
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'numbers-recovery-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  describe('restart on the same database after a crash at each step', () => {
    let app: TestApp;
    let acc: { accountId: string; apiKey: string };
    const ids = {
      beforeAnything: '',
      afterPurchase: 'pn_crash_after_purchase',
      afterCharge: 'pn_crash_after_charge',
      midRollback: 'pn_crash_mid_rollback',
    };
    let boughtAfterPurchase = '';
    let boughtMidRollback = '';

    before(async () => {
      app = await startAppOn({ dataDir, reset: true, env: { NUMBER_PROVISIONING_TIMEOUT_MS: '300' } });
      acc = await app.newAccount('Crash');
      await credit(app, acc.accountId, 20_000_000);
      // the process manager "dies": nothing drives provisioning from here on in this process
      await app.rt.workers.get('reactor:number_process')!.stop();

      // 1. crash before any step: the request is recorded, the client gets 503 and the id
      const pending = await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '415' } });
      expect(pending.status).to.equal(503);
      expect(pending.body.error.code).to.equal('NUMBER_PROVISIONING_PENDING');
      ids.beforeAnything = /number (pn_\S+)/.exec(pending.body.error.message)![1]!;

      const accounts = app.rt.get(ACCOUNTS.Billing);
      const carrier = app.rt.get(NUMBERS.Carrier);
      const ctx = { accountId: acc.accountId, requestId: null, correlationId: 'crash-test', actor: 'system:numbers' };
      const meta: EventMetadata = {
        accountId: acc.accountId,
        correlationId: 'crash-test',
        causationId: null,
        requestId: null,
        actor: 'system:numbers',
      };
      const now = new Date().toISOString();
      const append = async (numberId: string, events: PhoneNumberEvent[]) => {
        const stream = `phone_number-${numberId}`;
        const existing = await app.rt.store.readStream(stream);
        await app.rt.store.appendToStream(
          stream,
          events.map((e) => ({ ...e, id: randomUUID(), metadata: meta })),
          { expectedRevision: existing.length ? existing.at(-1)!.streamRevision : 'no_stream' },
        );
      };
      const requested = (numberId: string): PhoneNumberEvent => ({
        type: 'NumberProvisioningRequested',
        data: { numberId, accountId: acc.accountId, country: 'US', areaCode: '415', agentId: null, attempt: 1, requestedAt: now },
      });
      const buy = async (numberId: string) => {
        const [first] = await carrier.searchAvailable({ country: 'US', areaCode: '415', limit: 1 });
        return carrier.purchase({ phoneNumber: first!.phoneNumber, idempotencyKey: `${numberId}:1`, accountId: acc.accountId });
      };

      // 2. crash after the carrier sold the number, before NumberPurchased was recorded
      await append(ids.afterPurchase, [requested(ids.afterPurchase)]);
      await accounts.reserveNumberSlot(ctx, acc.accountId, ids.afterPurchase, 3_000_000);
      await append(ids.afterPurchase, [{ type: 'NumberSlotHeld', data: { numberId: ids.afterPurchase, heldAt: now } }]);
      boughtAfterPurchase = (await buy(ids.afterPurchase)).phoneNumber;

      // 3. crash after the first month was charged, before NumberProvisioned was recorded
      await append(ids.afterCharge, [requested(ids.afterCharge)]);
      await accounts.reserveNumberSlot(ctx, acc.accountId, ids.afterCharge, 3_000_000);
      const b3 = await buy(ids.afterCharge);
      await carrier.configureRouting({ idempotencyKey: `${ids.afterCharge}:1`, phoneNumber: b3.phoneNumber });
      await append(ids.afterCharge, [
        { type: 'NumberSlotHeld', data: { numberId: ids.afterCharge, heldAt: now } },
        {
          type: 'NumberPurchased',
          data: { numberId: ids.afterCharge, phoneNumber: b3.phoneNumber, carrierRef: b3.carrierRef, purchasedAt: now },
        },
        { type: 'NumberRoutingConfigured', data: { numberId: ids.afterCharge, phoneNumber: b3.phoneNumber, configuredAt: now } },
      ]);
      await accounts.charge(ctx, acc.accountId, {
        chargeId: monthlyChargeId(ids.afterCharge, 0),
        amountMicros: 3_000_000,
        kind: 'number_monthly',
        description: 'first month',
        reference: ids.afterCharge,
      });

      // 4. crash in the middle of a rollback: the abort is decided, the purchase and the slot not yet undone
      await append(ids.midRollback, [requested(ids.midRollback)]);
      await accounts.reserveNumberSlot(ctx, acc.accountId, ids.midRollback, 3_000_000);
      const b4 = await buy(ids.midRollback);
      boughtMidRollback = b4.phoneNumber;
      await append(ids.midRollback, [
        { type: 'NumberSlotHeld', data: { numberId: ids.midRollback, heldAt: now } },
        {
          type: 'NumberPurchased',
          data: { numberId: ids.midRollback, phoneNumber: b4.phoneNumber, carrierRef: b4.carrierRef, purchasedAt: now },
        },
        {
          type: 'NumberProvisioningAborted',
          data: {
            numberId: ids.midRollback,
            reached: 'purchased',
            code: 'TELEPHONY_PROVIDER_ERROR',
            message: 'voice routing failed',
            abortedAt: now,
          },
        },
      ]);
      await app.close();

      // the service starts again on the same data
      app = await startAppOn({ dataDir, reset: false });
    });
    after(() => app.close());

    const number = (id: string) => app.call('GET', `/v1/numbers/${id}`, { key: acc.apiKey });
    /** The number's provisioning has an outcome on its stream, and the read models show it and the account as they are then. */
    const settled = async (id: string) => {
      const events = await eventually(async () => {
        const all = await app.rt.store.readStream(`phone_number-${id}`);
        const types = all.map((e) => e.type);
        return types.includes('NumberProvisioned') || types.includes('NumberProvisioningFailed') ? all : undefined;
      }, `${id} settled`);
      const readModels = app.rt.get(PLATFORM.ReadModels);
      const last = events.at(-1)!;
      await readModels.waitFor(last.checkpoint, [...new Set(events.map((e) => e.type))]);
      // the ledger and slots the process wrote on the account stream before the number's outcome
      const ledger = (await app.rt.store.readStream(`account-${acc.accountId}`)).at(-1);
      if (ledger) await readModels.waitFor(ledger.checkpoint, [ledger.type]);
      return events.map((e) => e.type);
    };
    const purchasesUnder = async (id: string) =>
      (
        (await app.call('GET', '/sandbox/carrier/purchases', { key: ADMIN_TOKEN })).body.data as {
          purchaseKey: string;
          phoneNumber: string;
        }[]
      ).filter((p) => p.purchaseKey === `${id}:1`);
    const charges = async (id: string) =>
      (await app.rt.database.db.selectFrom('account_ledger').select(['amount_micros']).where('reference', '=', id).execute()).length;

    it('completes a provisioning that crashed before any step', async () => {
      await settled(ids.beforeAnything);
      expect((await number(ids.beforeAnything)).body.status).to.equal('active');
      expect(await charges(ids.beforeAnything)).to.equal(1);
    });

    it('records the number the carrier had already sold under the key, instead of buying a second one', async () => {
      await settled(ids.afterPurchase);
      const n = (await number(ids.afterPurchase)).body;
      expect(n).to.include({ status: 'active', phoneNumber: boughtAfterPurchase });
      expect(await purchasesUnder(ids.afterPurchase)).to.have.length(1);
      expect(await charges(ids.afterPurchase)).to.equal(1);
    });

    it('activates a number whose first month was charged, without charging it again', async () => {
      await settled(ids.afterCharge);
      expect((await number(ids.afterCharge)).body.status).to.equal('active');
      expect(await charges(ids.afterCharge)).to.equal(1);
    });

    it('finishes a rollback: the number goes back to the carrier, the slot back to the account, nothing charged', async () => {
      const types = await settled(ids.midRollback);
      expect(types.slice(-2)).to.deep.equal(['NumberProvisioningAborted', 'NumberProvisioningFailed']);
      expect((await number(ids.midRollback)).status).to.equal(404);
      expect(await purchasesUnder(ids.midRollback)).to.deep.equal([]);
      const inv = (await app.call('GET', '/sandbox/carrier/inventory/415', { key: ADMIN_TOKEN })).body.numbers as {
        phoneNumber: string;
        status: string;
      }[];
      expect(inv.find((x) => x.phoneNumber === boughtMidRollback)?.status).to.equal('quarantined');
      expect(await charges(ids.midRollback)).to.equal(0);
    });

    it('leaves the account with exactly the slots and charges of the three numbers it holds', async () => {
      for (const id of [ids.beforeAnything, ids.afterPurchase, ids.afterCharge, ids.midRollback]) await settled(id);
      expect(await usage(app, acc.apiKey)).to.include({ used: 3, balanceMicros: 25_000_000 - 9_000_000 });
      expect((await app.call('GET', '/v1/numbers', { key: acc.apiKey })).body.total).to.equal(3);
    });
  });

  describe('a server killed with SIGKILL mid-provisioning', () => {
    // the same data directory (or server database) as above: a second life of the same service, and a PGlite
    // start without the cost of creating a new cluster

    /** `npm start`'s entry point in a child process, on the data above */
    const server = () =>
      startServerProcess(
        {
          ...process.env,
          DATA_DIR: dataDir,
          PORT: '0',
          HOST: '127.0.0.1',
          ADMIN_TOKEN,
          DEV_ACCOUNT: 'false',
          LOG_LEVEL: 'warn',
          REACTOR_LEASE_TTL_MS: '1000',
          EVENT_POLL_INTERVAL_MS: '20',
        },
        () => true,
      );
    const call = async (base: string, method: string, path: string, o: { key?: string; body?: unknown } = {}) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...(o.key ? { authorization: `Bearer ${o.key}` } : {}), ...(o.body ? { 'content-type': 'application/json' } : {}) },
        ...(o.body ? { body: JSON.stringify(o.body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    it('records and completes the number the carrier sold before the kill; one number, one charge', async () => {
      const first = await server();
      first.child.removeAllListeners('exit');
      let key = '';
      let numberId = '';
      try {
        key = (await call(first.base, 'POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name: 'Killed' } })).body.apiKey;
        // the carrier takes the purchase at once but answers only after a minute: the kill comes in between
        await call(first.base, 'POST', '/sandbox/faults', {
          key: ADMIN_TOKEN,
          body: { operation: 'carrier.purchase', delayMs: 60_000, afterEffect: true },
        });
        const purchases = async (base: string) =>
          (await call(base, 'GET', '/sandbox/carrier/purchases', { key: ADMIN_TOKEN })).body.data as {
            purchaseKey: string;
            phoneNumber: string;
          }[];
        const known = new Set((await purchases(first.base)).map((p) => p.purchaseKey));
        void call(first.base, 'POST', '/v1/numbers', { key, body: { areaCode: '212' } }).catch(() => undefined);
        const sold = await eventually(
          async () => (await purchases(first.base)).find((p) => !known.has(p.purchaseKey)),
          'the carrier sold a number',
        );
        numberId = sold.purchaseKey.split(':')[0]!;
      } finally {
        first.child.kill('SIGKILL');
        await new Promise((r) => first.child.on('exit', r));
      }

      // the service's second life, in this process, on the same data
      const second = await startAppOn({ dataDir, reset: false, env: { REACTOR_LEASE_TTL_MS: '1000' } });
      try {
        const n = await eventually(
          async () => {
            const r = await second.call('GET', `/v1/numbers/${numberId}`, { key });
            return r.status === 200 ? r.body : undefined;
          },
          'the number active after the restart',
          20_000,
        );
        expect(n).to.include({ status: 'active', areaCode: '212' });
        const mine = (
          (await second.call('GET', '/sandbox/carrier/purchases', { key: ADMIN_TOKEN })).body.data as {
            purchaseKey: string;
            phoneNumber: string;
          }[]
        ).filter((p) => p.purchaseKey.startsWith(`${numberId}:`) || p.phoneNumber.startsWith('+1212'));
        expect(mine.map((p) => p.phoneNumber)).to.deep.equal([n.phoneNumber]);
        // the number's row and the account's ledger are two read models: the ledger may show the charge a moment later
        // (a request that provisions waits for both; this number was finished by the process after the restart)
        const u = await eventually(async () => {
          const body = (await second.call('GET', '/v1/usage', { key })).body;
          return body.balance.micros !== 5_000_000 ? body : undefined;
        }, 'the first month charged in the ledger');
        expect(u.numbers.used).to.equal(1);
        expect(u.balance.micros).to.equal(2_000_000);
        const types = (await second.rt.store.readStream(`phone_number-${numberId}`)).map((e) => e.type);
        expect(types).to.deep.equal([
          'NumberProvisioningRequested',
          'NumberSlotHeld',
          'NumberPurchased',
          'NumberRoutingConfigured',
          'NumberProvisioned',
        ]);
      } finally {
        await second.close();
      }
    });
  });
});
