import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * A native number on the rich-messaging channel, `rich_line-<numberId>` (docs/rich-messaging.md#lines): the provider
 * reports when it starts and stops serving the number; while it serves it, sends from the number may go by the rich
 * channel, and the number's contact card, chat backgrounds and shared locations exist.
 */
export const richLineStream = (numberId: string) => `rich_line-${numberId}`;

type Ref = { numberId: string };
export type RichLineCommand = Command<'ActivateRichLine', Ref & { phoneNumber: string }> | Command<'DeactivateRichLine', Ref>;

export type RichLineEvent =
  | Event<'RichLineActivated', Ref & { accountId: string; phoneNumber: string; activatedAt: string }>
  | Event<'RichLineDeactivated', Ref & { deactivatedAt: string }>;

export type RichLineState = { status: 'none' } | { status: 'active' | 'inactive'; numberId: string; phoneNumber: string };

export const richLineDecider: Decider<RichLineCommand, RichLineEvent, RichLineState> = {
  initialState: () => ({ status: 'none' }),
  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'ActivateRichLine':
        if (s.status === 'active') return [];
        return [
          {
            type: 'RichLineActivated',
            data: { numberId: cmd.data.numberId, accountId: cmd.metadata.accountId, phoneNumber: cmd.data.phoneNumber, activatedAt: now },
          },
        ];
      case 'DeactivateRichLine':
        if (s.status !== 'active') return [];
        return [{ type: 'RichLineDeactivated', data: { numberId: cmd.data.numberId, deactivatedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },
  evolve: (s, e) => {
    switch (e.type) {
      case 'RichLineActivated':
        return { status: 'active', numberId: e.data.numberId, phoneNumber: e.data.phoneNumber };
      case 'RichLineDeactivated':
        return s.status === 'none' ? s : { ...s, status: 'inactive' };
      default:
        return assertNever(e);
    }
  },
};

export const richLineEventTypes = ['RichLineActivated', 'RichLineDeactivated'] as const satisfies readonly RichLineEvent['type'][];
