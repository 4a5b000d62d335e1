import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * One live check of what a phone number can receive, `rich_capability_check-<checkId>`
 * (docs/rich-messaging.md#capabilities): requested, then answered by the provider (the rich channel and SMS, each
 * true or false) or failed. The answer is kept briefly as the account's cache of that number's capabilities.
 */
export const capabilityCheckStream = (checkId: string) => `rich_capability_check-${checkId}`;

type Ref = { checkId: string };
export type CapabilityCheckCommand =
  | Command<'RequestCapabilityCheck', Ref & { phoneNumber: string; lineNumberId: string; linePhoneNumber: string }>
  | Command<'RecordCapabilities', Ref & { imessage: boolean; sms: boolean }>
  | Command<'RecordCapabilityCheckFailure', Ref & { reason: string }>;

export type CapabilityCheckEvent =
  | Event<
      'ContactCapabilityCheckRequested',
      Ref & { accountId: string; phoneNumber: string; lineNumberId: string; linePhoneNumber: string; requestedAt: string }
    >
  | Event<
      'ContactCapabilitiesChecked',
      Ref & { accountId: string; phoneNumber: string; imessage: boolean; sms: boolean; checkedAt: string }
    >
  | Event<'ContactCapabilityCheckFailed', Ref & { phoneNumber: string; reason: string; failedAt: string }>;

export type CapabilityCheckState =
  | { status: 'none' }
  | { status: 'requested'; phoneNumber: string; lineNumberId: string; linePhoneNumber: string }
  | { status: 'checked'; phoneNumber: string; imessage: boolean; sms: boolean; checkedAt: string }
  | { status: 'failed'; phoneNumber: string; reason: string };

export const capabilityCheckDecider: Decider<CapabilityCheckCommand, CapabilityCheckEvent, CapabilityCheckState> = {
  initialState: () => ({ status: 'none' }),
  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'RequestCapabilityCheck':
        if (s.status !== 'none') return [];
        return [{ type: 'ContactCapabilityCheckRequested', data: { ...cmd.data, accountId: cmd.metadata.accountId, requestedAt: now } }];
      case 'RecordCapabilities':
        // only a pending check takes an answer: a repeated or late answer changes nothing
        if (s.status !== 'requested') return [];
        return [
          {
            type: 'ContactCapabilitiesChecked',
            data: {
              checkId: cmd.data.checkId,
              accountId: cmd.metadata.accountId,
              phoneNumber: s.phoneNumber,
              imessage: cmd.data.imessage,
              sms: cmd.data.sms,
              checkedAt: now,
            },
          },
        ];
      case 'RecordCapabilityCheckFailure':
        if (s.status !== 'requested') return [];
        return [
          {
            type: 'ContactCapabilityCheckFailed',
            data: { checkId: cmd.data.checkId, phoneNumber: s.phoneNumber, reason: cmd.data.reason, failedAt: now },
          },
        ];
      default:
        return assertNever(cmd);
    }
  },
  evolve: (_s, e) => {
    switch (e.type) {
      case 'ContactCapabilityCheckRequested':
        return {
          status: 'requested',
          phoneNumber: e.data.phoneNumber,
          lineNumberId: e.data.lineNumberId,
          linePhoneNumber: e.data.linePhoneNumber,
        };
      case 'ContactCapabilitiesChecked':
        return {
          status: 'checked',
          phoneNumber: e.data.phoneNumber,
          imessage: e.data.imessage,
          sms: e.data.sms,
          checkedAt: e.data.checkedAt,
        };
      case 'ContactCapabilityCheckFailed':
        return { status: 'failed', phoneNumber: e.data.phoneNumber, reason: e.data.reason };
      default:
        return assertNever(e);
    }
  },
};
