import type { Kysely } from 'kysely';
import type { MessageLocatorPort } from '../../application/audit/history.js';
import '../messaging/tables.js';
import type { ReadDb } from '../shared/read-db.js';

/** The conversation a message of the account was recorded on, from the messages read model. */
export class KyselyMessageLocator implements MessageLocatorPort {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async conversationOf(accountId: string, messageId: string): Promise<string | null> {
    const r = await this.db
      .selectFrom('messages')
      .select('conversation_id')
      .where('account_id', '=', accountId)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    return r?.conversation_id ?? null;
  }
}
