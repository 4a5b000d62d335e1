import { createHash } from 'node:crypto';
import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { RedeemedToken, WebCallTokensPort } from '../../application/calls/call-commands.js';
import type { CallLeasesPort } from '../../application/calls/call-host.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

export interface CallLeasesTable {
  call_id: string;
  account_id: string;
  host_id: string;
  lease_until: Date | string;
}
export interface WebCallTokensTable {
  token_hash: string;
  call_id: string;
  account_id: string;
  expires_at: Date | string;
  redeemed_at: Date | string | null;
}

declare module '../../projections/shared/read-db.js' {
  interface ReadDb {
    call_leases: CallLeasesTable;
    web_call_tokens: WebCallTokensTable;
  }
}

/** Leases on live calls (migration 089): held and renewed by the process on the line. */
export class KyselyCallLeases implements CallLeasesPort {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async hold(rows: readonly { callId: string; accountId: string }[], hostId: string, until: Date): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insertInto('call_leases')
      .values(rows.map((r) => ({ call_id: r.callId, account_id: r.accountId, host_id: hostId, lease_until: until })))
      .onConflict((oc) => oc.column('call_id').doUpdateSet({ host_id: hostId, lease_until: until }))
      .execute();
  }

  async claim(row: { callId: string; accountId: string }, hostId: string, until: Date): Promise<boolean> {
    const r = await this.db
      .insertInto('call_leases')
      .values({ call_id: row.callId, account_id: row.accountId, host_id: hostId, lease_until: until })
      .onConflict((oc) => oc.column('call_id').doNothing())
      .returning('call_id')
      .execute();
    return r.length === 1;
  }

  /** outbound calls placed and never dialled: what the dialler of a process holding the lines takes */
  undialled(limit: number): Promise<{ callId: string; accountId: string }[]> {
    return this.withoutLease(limit, (eb) => eb.and([eb('calls.direction', '=', 'outbound'), eb('calls.phase', '=', 'placed')]));
  }

  unheld(placedBefore: Date, limit: number): Promise<{ callId: string; accountId: string }[]> {
    // a call being recorded has ended: its recording step, not a host, finishes it (docs/calls.md#recordings)
    return this.withoutLease(limit, (eb) => eb.and([eb('calls.phase', '!=', 'recording'), eb('calls.created_at', '<', placedBefore)]));
  }

  /** live calls that no process leases, narrowed by `where`, oldest first */
  private async withoutLease(
    limit: number,
    where: (eb: ExpressionBuilder<ReadDb, 'calls'>) => Expression<SqlBool>,
  ): Promise<{ callId: string; accountId: string }[]> {
    const rows = await this.db
      .selectFrom('calls')
      .select(['calls.call_id', 'calls.account_id'])
      .where('calls.status', '=', 'in-progress')
      .where(where)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('call_leases').select('call_leases.call_id').whereRef('call_leases.call_id', '=', 'calls.call_id'))),
      )
      .orderBy('calls.created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ callId: r.call_id, accountId: r.account_id }));
  }

  async drop(callId: string): Promise<void> {
    await this.db.deleteFrom('call_leases').where('call_id', '=', callId).execute();
  }

  async expired(now: Date, limit: number): Promise<{ callId: string; accountId: string; hostId: string }[]> {
    const rows = await this.db
      .selectFrom('call_leases')
      .select(['call_id', 'account_id', 'host_id'])
      .where('lease_until', '<', now)
      .orderBy('lease_until')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ callId: r.call_id, accountId: r.account_id, hostId: r.host_id }));
  }
}

const hash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** Web calls' access tokens (migration 089), stored hashed; redeeming one is single use and only before it expires. */
export class KyselyWebCallTokens implements WebCallTokensPort {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async issue(o: { callId: string; accountId: string; token: string; expiresAt: Date }): Promise<void> {
    await this.db
      .insertInto('web_call_tokens')
      .values({ token_hash: hash(o.token), call_id: o.callId, account_id: o.accountId, expires_at: o.expiresAt, redeemed_at: null })
      .execute();
  }

  /** The call the token opens, once and only before it expires; otherwise why not (docs/calls.md#joining-a-web-call). */
  async redeem(token: string, now: Date): Promise<RedeemedToken> {
    const row = await this.db
      .updateTable('web_call_tokens')
      .set({ redeemed_at: now })
      .where('token_hash', '=', hash(token))
      .where('redeemed_at', 'is', null)
      .where('expires_at', '>', now)
      .returning(['call_id', 'account_id'])
      .executeTakeFirst();
    if (row) return { callId: row.call_id, accountId: row.account_id };
    // refused: say why (the hash alone is looked up, so this tells nothing about other tokens)
    const seen = await this.db
      .selectFrom('web_call_tokens')
      .select(['redeemed_at'])
      .where('token_hash', '=', hash(token))
      .executeTakeFirst();
    return { refused: !seen ? 'unknown' : seen.redeemed_at !== null ? 'used' : 'expired' };
  }

  /** forgets tokens that can no longer be used */
  async purge(now: Date): Promise<void> {
    await this.db.deleteFrom('web_call_tokens').where('expires_at', '<', sql<Date>`${now}::timestamptz - interval '1 day'`).execute();
  }
}
