import type { Kysely } from 'kysely';
import type { AccountAddressesPort } from '../../application/webhooks/webhook.port.js';
import type { ReadDb } from '../shared/read-db.js';

/** An account's e-mail address: its owner's (set by sign-up), else its parent's; null when neither has one. */
export class KyselyAccountAddresses implements AccountAddressesPort {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async addressOf(accountId: string): Promise<string | null> {
    const me = await this.db
      .selectFrom('accounts')
      .select(['owner_email', 'parent_account_id'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!me) return null;
    if (me.owner_email) return me.owner_email;
    if (!me.parent_account_id) return null;
    const parent = await this.db
      .selectFrom('accounts')
      .select('owner_email')
      .where('account_id', '=', me.parent_account_id)
      .executeTakeFirst();
    return parent?.owner_email ?? null;
  }
}
