import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * Who may fetch an account's call recordings (docs/calls.md#recordings): by default only a holder of the signed
 * `recordingUrl`; an operator may let the call's id alone open it, as the public SDK asks for it
 * (docs/compatibility.md#recordings-by-call-id). One stream per account, `recording_access-<accountId>`.
 */
export const recordingAccessStream = (accountId: string) => `recording_access-${accountId}`;

export type RecordingAccessState = Readonly<{ byCallId: boolean }>;
export type RecordingAccessCommand = Command<'SetRecordingAccess', { byCallId: boolean }>;
export type RecordingAccessEvent = Event<'RecordingAccessChanged', { byCallId: boolean; changedAt: string }>;

export const recordingAccessDecider: Decider<RecordingAccessCommand, RecordingAccessEvent, RecordingAccessState> = {
  initialState: () => ({ byCallId: false }),
  decide: (cmd, s) => {
    switch (cmd.type) {
      case 'SetRecordingAccess':
        if (cmd.data.byCallId === s.byCallId) return [];
        return [{ type: 'RecordingAccessChanged', data: { byCallId: cmd.data.byCallId, changedAt: cmd.metadata.now } }];
      default:
        return assertNever(cmd.type);
    }
  },
  evolve: (_s, e) => ({ byCallId: e.data.byCallId }),
};
