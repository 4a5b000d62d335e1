import { type RecordingAccessState, recordingAccessDecider, recordingAccessStream } from '../../domain/call/recording-access.decider.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';

/**
 * Who may fetch an account's recordings (docs/calls.md#recordings): the signed URL always; the call id alone when
 * the operator allowed it for the account. Read from the account's stream, never stale.
 */
export class RecordingAccess {
  constructor(private readonly exec: CommandExecutor) {}

  async of(accountId: string): Promise<RecordingAccessState> {
    return (await this.exec.state(recordingAccessDecider, recordingAccessStream(accountId))).state;
  }

  async set(ctx: RequestContext, accountId: string, byCallId: boolean): Promise<RecordingAccessState> {
    const r = await this.exec.execute(
      recordingAccessDecider,
      recordingAccessStream(accountId),
      { type: 'SetRecordingAccess', data: { byCallId } },
      ctx,
      {
        accountId,
      },
    );
    return r.state;
  }
}
