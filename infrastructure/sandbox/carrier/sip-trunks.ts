import { inject, injectable } from 'inversify';
import type { Kysely } from 'kysely';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { SipTrunkProviderPort } from '../../../application/sip-trunks/sip-trunk-provider.port.js';
import { DomainError } from '../../../domain/shared/errors.js';
import type { SipTrunkConfig } from '../../../domain/sip-trunk/sip-trunk.decider.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';
import { PLATFORM } from '../../platform/tokens.js';
import { SANDBOX_FAULTS, type SandboxFaults } from '../faults/faults.js';
import type { SandboxDb } from './db.js';

/**
 * The sandbox SIP trunk provider: trunks kept in a table (idempotent create by trunk id, idempotent delete),
 * each with a termination URI of its own under the reserved `.invalid` domain, and failures injected
 * through SandboxFaults (`sip.createTrunk`, `sip.updateTrunk`, `sip.deleteTrunk`).
 */
@injectable()
export class SandboxSipTrunks implements SipTrunkProviderPort {
  private readonly db: Kysely<ReadDb & SandboxDb>;

  constructor(
    @inject(PLATFORM.ReadDb) db: Kysely<ReadDb>,
    @inject(PLATFORM.Clock) private readonly clock: ClockPort,
    @inject(SANDBOX_FAULTS) private readonly faults: SandboxFaults,
  ) {
    this.db = db.withTables<SandboxDb>();
  }

  createTrunk(o: { trunkId: string; accountId: string; config: SipTrunkConfig }) {
    return this.faults.around('sip.createTrunk', async () => {
      const now = this.clock.now().toISOString();
      await this.db
        .insertInto('sandbox_sip_trunks')
        .values({
          provider_ref: `sbxtrk_${o.trunkId}`,
          trunk_id: o.trunkId,
          account_id: o.accountId,
          config: JSON.stringify(o.config),
          termination_uri: `sip:${o.trunkId.replace(/_/g, '-')}.trunks.sandbox.invalid;transport=tls`,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        })
        .onConflict((oc) => oc.column('trunk_id').doNothing())
        .execute();
      const r = await this.db
        .selectFrom('sandbox_sip_trunks')
        .select(['provider_ref', 'termination_uri'])
        .where('trunk_id', '=', o.trunkId)
        .executeTakeFirstOrThrow();
      return { providerRef: r.provider_ref, terminationUri: r.termination_uri };
    });
  }

  updateTrunk(o: { providerRef: string; config: SipTrunkConfig }) {
    return this.faults.around('sip.updateTrunk', async () => {
      const r = await this.db
        .updateTable('sandbox_sip_trunks')
        .set({ config: JSON.stringify(o.config), updated_at: this.clock.now().toISOString() })
        .where('provider_ref', '=', o.providerRef)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (r.numUpdatedRows === 0n)
        throw new DomainError('TELEPHONY_PROVIDER_ERROR', 'Telephony provider error: the trunk does not exist upstream');
    });
  }

  deleteTrunk(o: { providerRef: string }) {
    return this.faults.around('sip.deleteTrunk', async () => {
      await this.db
        .updateTable('sandbox_sip_trunks')
        .set({ deleted_at: this.clock.now().toISOString() })
        .where('provider_ref', '=', o.providerRef)
        .where('deleted_at', 'is', null)
        .execute();
    });
  }

  async list(): Promise<
    { providerRef: string; trunkId: string; accountId: string; config: unknown; terminationUri: string; deletedAt: string | null }[]
  > {
    const rows = await this.db.selectFrom('sandbox_sip_trunks').selectAll().orderBy('created_at').execute();
    return rows.map((r) => ({
      providerRef: r.provider_ref,
      trunkId: r.trunk_id,
      accountId: r.account_id,
      config: typeof r.config === 'string' ? JSON.parse(r.config) : r.config,
      terminationUri: r.termination_uri,
      deletedAt: r.deleted_at ? new Date(r.deleted_at).toISOString() : null,
    }));
  }
}
