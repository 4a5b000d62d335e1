import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/** The stream of a recipient's consent to an account's texts: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const consentStream = (accountId: string, recipient: string) => `consent-${accountId}:${recipient}`;

/**
 * A recipient's consent to texts from an account's numbers (docs/messaging.md#opt-out), one stream per account and
 * recipient (`consent-<accountId>:<E.164>`). STOP records an opt-out from one number, or from every number of the
 * account when the account's opt-out scope says so; START lifts it. Sends to an opted-out recipient are accepted
 * and then fail with the opt-out reason.
 */
type Ref = { recipient: string };
/** `numberId` null: every number of the account */
export type ConsentCommand =
  | Command<'OptOut', Ref & { numberId: string | null; keyword: string; messageId: string }>
  | Command<'OptIn', Ref & { numberId: string | null; keyword: string; messageId: string }>;

export type ConsentEvent =
  | Event<'RecipientOptedOut', Ref & { numberId: string | null; keyword: string; messageId: string; at: string }>
  | Event<'RecipientOptedIn', Ref & { numberId: string | null; keyword: string; messageId: string; at: string }>;

export type ConsentState = Readonly<{
  /** opted out of every number since */
  all: string | null;
  /** numberId → opted out since */
  numbers: ReadonlyMap<string, string>;
  /** message ids already acted on (a redelivered keyword changes nothing) */
  handled: ReadonlySet<string>;
}>;

export const isOptedOut = (s: ConsentState, numberId: string): boolean => s.all !== null || s.numbers.has(numberId);

export const consentDecider: Decider<ConsentCommand, ConsentEvent, ConsentState> = {
  initialState: () => ({ all: null, numbers: new Map(), handled: new Set() }),

  decide: (cmd, s) => {
    const d = cmd.data;
    if (s.handled.has(d.messageId)) return [];
    const at = cmd.metadata.now;
    switch (cmd.type) {
      case 'OptOut':
        if (d.numberId === null ? s.all !== null : isOptedOut(s, d.numberId)) return [];
        return [{ type: 'RecipientOptedOut', data: { ...d, at } }];
      case 'OptIn':
        if (d.numberId === null ? s.all === null && s.numbers.size === 0 : !isOptedOut(s, d.numberId)) return [];
        return [{ type: 'RecipientOptedIn', data: { ...d, at } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    const handled = new Set(s.handled).add(e.data.messageId);
    switch (e.type) {
      case 'RecipientOptedOut': {
        if (e.data.numberId === null) return { ...s, all: e.data.at, handled };
        const numbers = new Map(s.numbers).set(e.data.numberId, e.data.at);
        return { ...s, numbers, handled };
      }
      case 'RecipientOptedIn': {
        // opting in to every number (account scope) lifts every opt-out; opting in to one number lifts that
        // number's, and an account-wide opt-out too (the recipient asked this number to write again)
        if (e.data.numberId === null) return { all: null, numbers: new Map(), handled };
        const numbers = new Map(s.numbers);
        numbers.delete(e.data.numberId);
        return { all: null, numbers, handled };
      }
      default:
        return assertNever(e);
    }
  },
};

export const consentEventTypes = ['RecipientOptedOut', 'RecipientOptedIn'] as const satisfies readonly ConsentEvent['type'][];
