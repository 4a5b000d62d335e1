import type { CallEvent } from '../../domain/call/call.decider.js';
import type { AccountQueries } from '../accounts/account-queries.port.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { RequestContext } from '../shared/context.js';
import { ProcessManager } from '../shared/process-manager.js';
import type { CallSlots } from './call-slots.js';

type Final = Extract<CallEvent, { type: 'CallEnded' | 'CallFailed' }>;

/**
 * Frees an ended call's slots (docs/calls.md#limits). The process that held the call frees them at once; this
 * reaction makes sure of it when that process died, or the call was ended by another one (the API, the sweeper).
 * Releasing a slot already free is a no-op.
 */
export class CallSlotRelease extends ProcessManager<Final> {
  readonly name = 'call-slot-release';
  readonly handles = ['CallEnded', 'CallFailed'] as const;

  constructor(
    private readonly slots: CallSlots,
    private readonly accounts: AccountQueries,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Final>): string {
    return e.data.callId;
  }

  protected async react(e: RecordedEvent<Final>, ctx: RequestContext): Promise<void> {
    const d = e.data;
    const parent = d.direction === 'outbound' ? ((await this.accounts.get(d.accountId))?.parentAccountId ?? null) : null;
    const accounts = d.direction === 'outbound' ? [d.accountId, ...(parent ? [parent] : [])] : [];
    await this.slots.release(ctx, d.callId, { accounts, numberId: d.numberId });
  }
}
