import { DomainError, type ErrorCode } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * Live-call slots (docs/calls.md#limits): one stream per thing whose live calls are capped — an account's
 * outbound calls, a phone number's calls. Reserving and releasing on one stream makes the cap exact under
 * concurrent requests: the store's optimistic concurrency serialises them.
 */
export const callSlotsStream = (scope: 'account' | 'number', id: string) => `call_slots-${scope}_${id}`;

export type CallSlotsCommand =
  | Command<'ReserveCallSlot', { scope: string; callId: string; limit: number; code: ErrorCode; message: string }>
  | Command<'ReleaseCallSlot', { scope: string; callId: string }>
  /** a parent's own cap for one of its sub-accounts (null: the account-wide default applies) */
  | Command<'SetCallSlotLimit', { scope: string; limit: number | null }>;

export type CallSlotsEvent =
  | Event<'CallSlotReserved', { scope: string; callId: string; at: string }>
  | Event<'CallSlotReleased', { scope: string; callId: string; at: string }>
  | Event<'CallSlotLimitSet', { scope: string; limit: number | null; at: string }>;

export type CallSlotsState = Readonly<{ live: ReadonlySet<string>; limit: number | null }>;

export const callSlotsDecider: Decider<CallSlotsCommand, CallSlotsEvent, CallSlotsState> = {
  initialState: () => ({ live: new Set(), limit: null }),

  decide: (cmd, s) => {
    const { now } = cmd.metadata;
    switch (cmd.type) {
      case 'ReserveCallSlot': {
        if (s.live.has(cmd.data.callId)) return [];
        const limit = s.limit ?? cmd.data.limit;
        if (s.live.size >= limit) throw new DomainError(cmd.data.code, cmd.data.message, undefined, { limit, live: s.live.size });
        return [{ type: 'CallSlotReserved', data: { scope: cmd.data.scope, callId: cmd.data.callId, at: now } }];
      }
      case 'ReleaseCallSlot':
        return s.live.has(cmd.data.callId)
          ? [{ type: 'CallSlotReleased', data: { scope: cmd.data.scope, callId: cmd.data.callId, at: now } }]
          : [];
      case 'SetCallSlotLimit':
        return s.limit === cmd.data.limit
          ? []
          : [{ type: 'CallSlotLimitSet', data: { scope: cmd.data.scope, limit: cmd.data.limit, at: now } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'CallSlotReserved':
        return { ...s, live: new Set([...s.live, e.data.callId]) };
      case 'CallSlotReleased': {
        const live = new Set(s.live);
        live.delete(e.data.callId);
        return { ...s, live };
      }
      case 'CallSlotLimitSet':
        return { ...s, limit: e.data.limit };
      default:
        return s;
    }
  },
};
