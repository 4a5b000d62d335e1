import type { Kysely } from 'kysely';
import type { AvailableNumber, CarrierPort, LineInfo, LineType, PurchasedNumber } from '../../../application/numbers/carrier.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import {
  AREA_CODES,
  areaCodeProblem,
  areaCodesOf,
  type NanpCountry,
  PREMIUM_CODES,
  TOLL_FREE_CODES,
} from '../../../domain/phone-number/north-american-area-codes.js';
import { DomainError } from '../../../domain/shared/errors.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';
import type { SandboxFaults } from '../faults/faults.js';
import { SandboxUpstream } from '../shared/upstream.js';
import type { SandboxCarrierNumbersTable, SandboxDb } from './db.js';

/**
 * Inventory: each US/CA area code has INVENTORY_SIZE numbers, NPA-555-0100 upwards (the 555-01XX range is
 * reserved for fictional use, so sandbox numbers never ring a real phone). A few area codes are deliberately
 * scarce so that exhaustion and the release quarantine can be tried out.
 */
export const INVENTORY_SIZE = 20;
export const SCARCE_AREA_CODES: Readonly<Record<string, number>> = { '907': 1, '867': 2 };

export const inventoryOf = (areaCode: string): string[] =>
  Array.from({ length: SCARCE_AREA_CODES[areaCode] ?? INVENTORY_SIZE }, (_, i) => `+1${areaCode}555${String(100 + i).padStart(4, '0')}`);

/** Line-type answers by the last digit of the number (NANP toll-free and premium codes aside). */
export const LOOKUP_RULES: readonly { digits: string; lineType: LineType; carrierName: string | null; rcsSupported: boolean }[] = [
  { digits: '0 1', lineType: 'mobile', carrierName: 'Sandbox Wireless', rcsSupported: true },
  { digits: '2 3 4', lineType: 'mobile', carrierName: 'Sandbox Mobile', rcsSupported: false },
  { digits: '5 6', lineType: 'landline', carrierName: 'Sandbox Telephone Co.', rcsSupported: false },
  { digits: '7 8', lineType: 'voip', carrierName: 'Sandbox VoIP', rcsSupported: false },
  { digits: '9', lineType: 'unknown', carrierName: null, rcsSupported: false },
];

const COUNTRY_CODES: readonly [string, string][] = [
  ['353', 'IE'],
  ['44', 'GB'],
  ['33', 'FR'],
  ['49', 'DE'],
  ['34', 'ES'],
  ['39', 'IT'],
  ['31', 'NL'],
  ['61', 'AU'],
  ['64', 'NZ'],
  ['52', 'MX'],
  ['55', 'BR'],
  ['91', 'IN'],
  ['81', 'JP'],
  ['65', 'SG'],
  ['27', 'ZA'],
];

/** The sandbox's deterministic answer for a number (README: "Sandbox test numbers"). */
export function sandboxLineInfo(phoneNumber: string): LineInfo {
  const invalid: LineInfo = { phoneNumber, valid: false, lineType: 'unknown', country: null, carrierName: null, rcsSupported: false };
  let country: string;
  if (phoneNumber.startsWith('+1')) {
    if (phoneNumber.length !== 12) return invalid;
    const npa = phoneNumber.slice(2, 5);
    if (TOLL_FREE_CODES.has(npa))
      return { phoneNumber, valid: true, lineType: 'toll-free', country: 'US', carrierName: 'Sandbox Toll-Free', rcsSupported: false };
    if (PREMIUM_CODES.has(npa))
      return { phoneNumber, valid: true, lineType: 'premium', country: 'US', carrierName: 'Sandbox Premium', rcsSupported: false };
    const info = AREA_CODES.get(npa);
    if (!info) return invalid;
    country = info.country;
  } else {
    const cc = COUNTRY_CODES.find(([prefix]) => phoneNumber.startsWith(`+${prefix}`));
    if (!cc) return invalid;
    country = cc[1];
  }
  const rule = LOOKUP_RULES.find((r) => r.digits.split(' ').includes(phoneNumber.at(-1)!))!;
  return { phoneNumber, valid: true, lineType: rule.lineType, country, carrierName: rule.carrierName, rcsSupported: rule.rcsSupported };
}

export type InventoryEntry = Readonly<{
  phoneNumber: string;
  status: 'available' | 'purchased' | 'quarantined';
  availableAt: string | null;
  purchaseKey: string | null;
}>;

/**
 * A deterministic carrier simulation, not a stub: a finite inventory per real US/CA area code, purchases that
 * take numbers out of it (idempotent by key, first come first served), routing, releases that return numbers
 * to sale only after a quarantine measured on the Clock, and failures injected through SandboxFaults. Its
 * state is a table, so it survives restarts and is shared by every process on the database.
 */
export class SandboxCarrier extends SandboxUpstream<SandboxDb> implements CarrierPort {
  constructor(
    db: Kysely<ReadDb>,
    clock: ClockPort,
    private readonly faults: SandboxFaults,
    private readonly o: Readonly<{ quarantineMs: number; inboundBase: string }>,
  ) {
    super(db, clock);
  }

  private nowIso(): string {
    return this.now().toISOString();
  }

  /** Numbers not for sale now: held by someone, or released and still in quarantine. */
  private async unavailable(areaCodes: readonly string[] | null, country: NanpCountry): Promise<Set<string>> {
    let q = this.db
      .selectFrom('sandbox_carrier_numbers')
      .select('phone_number')
      .where('country', '=', country)
      .where((eb) => eb.or([eb('status', '=', 'purchased'), eb('available_at', '>', this.nowIso())]));
    if (areaCodes) q = q.where('area_code', 'in', areaCodes);
    return new Set((await q.execute()).map((r) => r.phone_number));
  }

  searchAvailable(q: { country: NanpCountry; areaCode: string | null; limit: number }): Promise<AvailableNumber[]> {
    return this.faults.around('carrier.search', async () => {
      if (q.areaCode !== null) {
        const problem = areaCodeProblem(q.country, q.areaCode);
        if (problem)
          throw new DomainError('VALIDATION_ERROR', `areaCode ${problem}`, [{ field: 'areaCode', message: problem, type: 'value_error' }]);
      }
      const codes = q.areaCode ? [q.areaCode] : areaCodesOf(q.country);
      const taken = await this.unavailable(q.areaCode ? codes : null, q.country);
      const out: AvailableNumber[] = [];
      for (const areaCode of codes) {
        for (const phoneNumber of inventoryOf(areaCode)) {
          if (taken.has(phoneNumber)) continue;
          out.push({ phoneNumber, areaCode, country: q.country });
          if (out.length >= q.limit) return out;
        }
      }
      return out;
    });
  }

  async findPurchase(idempotencyKey: string): Promise<PurchasedNumber | null> {
    const r = await this.db
      .selectFrom('sandbox_carrier_numbers')
      .select(['phone_number', 'carrier_ref'])
      .where('purchase_key', '=', idempotencyKey)
      .where('status', '=', 'purchased')
      .executeTakeFirst();
    return r ? { phoneNumber: r.phone_number, carrierRef: r.carrier_ref } : null;
  }

  purchase(o: { phoneNumber: string; idempotencyKey: string; accountId: string }): Promise<PurchasedNumber> {
    return this.faults.around('carrier.purchase', async () => {
      const held = await this.findPurchase(o.idempotencyKey);
      if (held) return held;
      const areaCode = o.phoneNumber.slice(2, 5);
      const info = AREA_CODES.get(areaCode);
      if (!info || !inventoryOf(areaCode).includes(o.phoneNumber))
        throw new DomainError('NUMBER_UNAVAILABLE', `The requested number ${o.phoneNumber} is unavailable`);
      const now = this.nowIso();
      const row: SandboxCarrierNumbersTable = {
        phone_number: o.phoneNumber,
        area_code: areaCode,
        country: info.country,
        status: 'purchased',
        purchase_key: o.idempotencyKey,
        account_id: o.accountId,
        carrier_ref: `sbx_${o.phoneNumber.slice(1)}`,
        purchased_at: now,
        messaging_url: null,
        voice_url: null,
        routed_at: null,
        released_at: null,
        available_at: null,
      };
      const { phone_number: _pk, ...again } = row;
      try {
        // first come, first served: a number is taken if nobody holds it and any quarantine is over
        const bought = await this.db
          .insertInto('sandbox_carrier_numbers')
          .values(row)
          .onConflict((oc) =>
            oc
              .column('phone_number')
              .doUpdateSet(again)
              .where('sandbox_carrier_numbers.status', '=', 'released')
              .where('sandbox_carrier_numbers.available_at', '<=', now),
          )
          .returning('phone_number')
          .executeTakeFirst();
        if (!bought) throw new DomainError('NUMBER_UNAVAILABLE', `The requested number ${o.phoneNumber} is unavailable`);
      } catch (err) {
        if (err instanceof DomainError) throw err;
        const raced = await this.findPurchase(o.idempotencyKey); // the same key bought concurrently
        if (raced) return raced;
        throw err;
      }
      return { phoneNumber: o.phoneNumber, carrierRef: row.carrier_ref };
    });
  }

  async configureRouting(o: { idempotencyKey: string; phoneNumber: string }): Promise<void> {
    const route = async (set: Partial<SandboxCarrierNumbersTable>, code: 'SMS_PROVIDER_ERROR' | 'TELEPHONY_PROVIDER_ERROR') => {
      const r = await this.db
        .updateTable('sandbox_carrier_numbers')
        .set({ ...set, routed_at: this.nowIso() })
        .where('purchase_key', '=', o.idempotencyKey)
        .where('phone_number', '=', o.phoneNumber)
        .where('status', '=', 'purchased')
        .executeTakeFirst();
      if (r.numUpdatedRows === 0n) throw new DomainError(code, `Carrier error: ${o.phoneNumber} is not held by this account`);
    };
    await this.faults.around('carrier.configureMessaging', () =>
      route({ messaging_url: `${this.o.inboundBase}/carrier/inbound/messages` }, 'SMS_PROVIDER_ERROR'),
    );
    await this.faults.around('carrier.configureVoice', () =>
      route({ voice_url: `${this.o.inboundBase}/carrier/inbound/calls` }, 'TELEPHONY_PROVIDER_ERROR'),
    );
  }

  release(o: { idempotencyKey: string }): Promise<void> {
    return this.faults.around('carrier.release', async () => {
      const now = this.now();
      await this.db
        .updateTable('sandbox_carrier_numbers')
        .set({
          status: 'released',
          released_at: now.toISOString(),
          available_at: new Date(now.getTime() + this.o.quarantineMs).toISOString(),
          purchase_key: null,
        })
        .where('purchase_key', '=', o.idempotencyKey)
        .where('status', '=', 'purchased')
        .execute();
    });
  }

  lookup(phoneNumber: string): Promise<LineInfo> {
    return this.faults.around('carrier.lookup', async () => sandboxLineInfo(phoneNumber));
  }

  // --- the sandbox control API's view -------------------------------------------------------------------

  async inventory(areaCode: string): Promise<InventoryEntry[]> {
    const rows = await this.db.selectFrom('sandbox_carrier_numbers').selectAll().where('area_code', '=', areaCode).execute();
    const now = this.nowIso();
    return inventoryOf(areaCode).map((phoneNumber) => {
      const r = rows.find((x) => x.phone_number === phoneNumber);
      if (!r) return { phoneNumber, status: 'available', availableAt: null, purchaseKey: null };
      if (r.status === 'purchased') return { phoneNumber, status: 'purchased', availableAt: null, purchaseKey: r.purchase_key };
      const at = r.available_at ? new Date(r.available_at).toISOString() : null;
      return { phoneNumber, status: at && at > now ? 'quarantined' : 'available', availableAt: at, purchaseKey: null };
    });
  }

  async purchases(): Promise<
    {
      phoneNumber: string;
      purchaseKey: string | null;
      accountId: string | null;
      purchasedAt: string | null;
      messagingUrl: string | null;
      voiceUrl: string | null;
    }[]
  > {
    const rows = await this.db
      .selectFrom('sandbox_carrier_numbers')
      .selectAll()
      .where('status', '=', 'purchased')
      .orderBy('purchased_at')
      .execute();
    return rows.map((r) => ({
      phoneNumber: r.phone_number,
      purchaseKey: r.purchase_key,
      accountId: r.account_id,
      purchasedAt: r.purchased_at ? new Date(r.purchased_at).toISOString() : null,
      messagingUrl: r.messaging_url,
      voiceUrl: r.voice_url,
    }));
  }
}
