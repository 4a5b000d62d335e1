import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../../infrastructure/db/database.js';
import { KyselyConversationQueries } from '../../projections/messaging/conversation.queries.js';
import { freshDatabase } from '../support/stores.js';

// The recent messages a webhook's payload carries (docs/webhooks.md#payload-context), looked up for a whole dispatched
// batch at once: each conversation's newest, by its own index, whatever the batch holds.

describe('Recent histories of a dispatched batch', function () {
  this.timeout(60_000);
  let h: DatabaseHandle;
  let queries: KyselyConversationQueries;

  /** `count` messages of a conversation, a second apart, the newest `msg_<account>_<conversation>_<count>` */
  const messages = async (accountId: string, conversationId: string, count: number) => {
    await sql`
      insert into messages (account_id, message_id, conversation_id, phone_number_id, body, direction, channel, status,
        from_number, to_number, media_urls, created_at, updated_at, revision, kind)
      select ${accountId}, 'msg_' || ${accountId} || '_' || ${conversationId} || '_' || g, ${conversationId}, 'num_1', 'body ' || g,
        case when g % 2 = 0 then 'outbound' else 'inbound' end, 'sms', 'received', '+15550000001', '+15550000002', '[]',
        timestamptz '2026-11-01T00:00:00Z' + make_interval(secs => g), timestamptz '2026-11-01T00:00:00Z', '1', 'message'
      from generate_series(1, ${count}::int) g`.execute(h.db as unknown as Kysely<unknown>);
  };
  const ids = (items: readonly { messageId: string | null }[]) => items.map((i) => i.messageId);

  before(async () => {
    h = await freshDatabase();
    queries = new KyselyConversationQueries(h.readDb);
    await messages('acc_a', 'conv_long', 3_000);
    await messages('acc_a', 'conv_short', 2);
    // the same conversation id in another account is another conversation
    await messages('acc_b', 'conv_short', 5);
  });
  after(async () => {
    await h.close();
  });

  it("answers each query its conversation's newest messages, oldest first, in the queries' order", async () => {
    const [long, short, other, none, empty] = await queries.recentHistories([
      { accountId: 'acc_a', conversationId: 'conv_long', limit: 3, excludeMessageId: null },
      { accountId: 'acc_a', conversationId: 'conv_short', limit: 10, excludeMessageId: null },
      { accountId: 'acc_b', conversationId: 'conv_short', limit: 2, excludeMessageId: 'msg_acc_b_conv_short_5' },
      { accountId: 'acc_a', conversationId: 'conv_absent', limit: 5, excludeMessageId: null },
      { accountId: 'acc_a', conversationId: 'conv_long', limit: 0, excludeMessageId: null },
    ]);
    expect(ids(long!)).to.deep.equal(['msg_acc_a_conv_long_2998', 'msg_acc_a_conv_long_2999', 'msg_acc_a_conv_long_3000']);
    expect(long!.map((i) => i.direction)).to.deep.equal(['outbound', 'inbound', 'outbound']);
    expect(long![2]!.at).to.equal('2026-11-01T00:50:00.000Z');
    expect(ids(short!)).to.deep.equal(['msg_acc_a_conv_short_1', 'msg_acc_a_conv_short_2']);
    // the message the payload is about is left out, and the limit is still filled
    expect(ids(other!)).to.deep.equal(['msg_acc_b_conv_short_3', 'msg_acc_b_conv_short_4']);
    expect(none).to.deep.equal([]);
    expect(empty).to.deep.equal([]);
  });

  it('answers a conversation asked twice in one batch to both queries', async () => {
    const one = await queries.recentHistories([{ accountId: 'acc_a', conversationId: 'conv_short', limit: 1, excludeMessageId: null }]);
    const twice = await queries.recentHistories([
      { accountId: 'acc_a', conversationId: 'conv_short', limit: 1, excludeMessageId: null },
      { accountId: 'acc_a', conversationId: 'conv_short', limit: 1, excludeMessageId: null },
    ]);
    expect(ids(one[0]!)).to.deep.equal(['msg_acc_a_conv_short_2']);
    expect(twice.map(ids)).to.deep.equal([['msg_acc_a_conv_short_2'], ['msg_acc_a_conv_short_2']]);
  });
});
