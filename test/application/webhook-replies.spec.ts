import { expect } from 'chai';
import { SilentTurn, type TurnInput, WebhookReplies } from '../../application/calls/replies.js';
import type { WebhookQueries } from '../../application/webhooks/webhook.port.js';
import { TestClock } from '../support/fixtures.js';

// A voice call's webhook is looked up when the call is answered (docs/calls.md#webhook-mode). A look-up that fails
// there (the database away a moment) must not end the process as an unhandled rejection, and the next turn looks
// the webhook up again.

describe('WebhookReplies: the webhook looked up ahead of the first turn', () => {
  it('lets a failed look-up go: nothing unhandled, and the next turn looks again', async () => {
    let lookUps = 0;
    const webhooks = {
      ofAgent: async () => {
        lookUps++;
        if (lookUps === 1) throw new Error('terminating connection due to administrator command');
        return null;
      },
      master: async () => null,
    } as unknown as WebhookQueries;
    const replies = new WebhookReplies(
      {
        callId: 'call_1',
        accountId: 'acc_1',
        agentId: 'agt_1',
        numberId: null,
        from: '+14155550100',
        to: '+14155550101',
        direction: 'inbound',
      },
      { webhooks, secrets: { open: (s: string) => s } as never, client: {} as never, clock: new TestClock(), webhookIdOf: (id) => id },
    );
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      replies.prepare();
      // Node reports a rejection nobody handled once the microtasks of that turn are done
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      expect(unhandled).to.deep.equal([]);
      const err = await (async () => {
        for await (const _ of replies.reply({} as TurnInput, new AbortController().signal)) void _;
      })().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(SilentTurn);
      expect((err as Error).message).to.equal('no webhook is configured for this agent or account');
      expect(lookUps).to.equal(2);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
