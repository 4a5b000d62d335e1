import type { Kysely } from 'kysely';
import type { CarrierQueries, CarrierRecord } from '../../application/carriers/carriers.port.js';
import type { CarrierSettings } from '../../domain/carrier/carrier.decider.js';
import type { ReadDb } from '../shared/read-db.js';
import type { SipCarriersTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

const toRecord = (r: SipCarriersTable): CarrierRecord => ({
  carrierId: r.carrier_id,
  settings: json<CarrierSettings>(r.settings),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/** The operator's carriers (docs/sip.md#carriers); deleted ones are gone from every read. */
export class KyselyCarrierQueries implements CarrierQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async list(): Promise<CarrierRecord[]> {
    const rows = await this.db.selectFrom('sip_carriers').selectAll().where('status', '=', 'active').orderBy('carrier_id').execute();
    return rows.map(toRecord);
  }

  async get(carrierId: string): Promise<CarrierRecord | null> {
    const row = await this.db
      .selectFrom('sip_carriers')
      .selectAll()
      .where('carrier_id', '=', carrierId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async numbersOf(carrierId: string): Promise<number> {
    const r = await this.db
      .selectFrom('phone_numbers')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('carrier_id', '=', carrierId)
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
