import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * A platform number bound for sending and receiving, `chatapp_number-<id>` (docs/chatapp.md#numbers). Its id
 * derives from the platform's `phone_number_id` alone, so one platform number is bound by at most one connection
 * of one account at a time: the stream owns that rule. Binding checks the number with the platform and registers it
 * (a process manager), then records which line it is: the account's native number with the same E.164 when there
 * is one (a dual-channel number), else a chat-only line whose id is the binding's own.
 *
 *   BindRequested (binding) -> Bound | BindFailed; Unbound; BindRequested again after BindFailed or Unbound.
 */
export const chatappNumberStream = (bindingId: string) => `chatapp_number-${bindingId}`;

type Ref = { bindingId: string };

export type BoundLine = Readonly<{
  phoneNumber: string;
  verifiedName: string | null;
  /** the line's id in conversations and sends: the native number's id when dual-channel, else the binding's */
  lineId: string;
  nativeNumberId: string | null;
}>;

export type UnbindReason = 'requested' | 'connection_deleted';

export type ChatappNumberCommand =
  | Command<'RequestBind', Ref & { connectionId: string; phoneNumberId: string; agentId: string | null; pin: string | null }>
  | Command<'RecordBound', Ref & { attempt: number } & BoundLine>
  | Command<'RecordBindFailed', Ref & { attempt: number; platformCode: number | null; reason: string }>
  | Command<'Unbind', Ref & { reason: UnbindReason; connectionId?: string }>;

export type ChatappNumberEvent =
  | Event<
      'ChatappNumberBindRequested',
      Ref & {
        accountId: string;
        connectionId: string;
        phoneNumberId: string;
        agentId: string | null;
        pin: string | null;
        attempt: number;
        requestedAt: string;
      }
    >
  | Event<'ChatappNumberBound', Ref & BoundLine & { attempt: number; boundAt: string }>
  | Event<'ChatappNumberBindFailed', Ref & { attempt: number; platformCode: number | null; reason: string; failedAt: string }>
  | Event<'ChatappNumberAgentSet', Ref & { agentId: string | null; setAt: string }>
  | Event<'ChatappNumberUnbound', Ref & { connectionId: string; reason: UnbindReason; unboundAt: string }>;

export const chatappNumberEventTypes = [
  'ChatappNumberBindRequested',
  'ChatappNumberBound',
  'ChatappNumberBindFailed',
  'ChatappNumberAgentSet',
  'ChatappNumberUnbound',
] as const satisfies readonly ChatappNumberEvent['type'][];

export type ChatappNumberStatus = 'binding' | 'bound' | 'failed' | 'unbound';
export type ChatappNumberState =
  | { status: 'none' }
  | {
      status: ChatappNumberStatus;
      bindingId: string;
      accountId: string;
      connectionId: string;
      phoneNumberId: string;
      agentId: string | null;
      pin: string | null;
      attempt: number;
      line: BoundLine | null;
    };

const notFound = () => new DomainError('CHATAPP_NUMBER_NOT_FOUND', 'Chat-app number not found');

export const chatappNumberDecider: Decider<ChatappNumberCommand, ChatappNumberEvent, ChatappNumberState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'RequestBind': {
        const d = cmd.data;
        const held = s.status === 'binding' || s.status === 'bound';
        if (held && (s.accountId !== cmd.metadata.accountId || s.connectionId !== d.connectionId))
          throw new DomainError(
            'CHATAPP_NUMBER_IN_USE',
            `The platform number ${d.phoneNumberId} is bound by another connection; delete that binding (or its connection) first`,
          );
        if (held) {
          // the same connection binding it again: a retry, or a new agent for a bound number
          if (s.agentId === d.agentId) return [];
          return [{ type: 'ChatappNumberAgentSet', data: { bindingId: d.bindingId, agentId: d.agentId, setAt: now } }];
        }
        return [
          {
            type: 'ChatappNumberBindRequested',
            data: {
              bindingId: d.bindingId,
              accountId: cmd.metadata.accountId,
              connectionId: d.connectionId,
              phoneNumberId: d.phoneNumberId,
              agentId: d.agentId,
              pin: d.pin,
              attempt: s.status === 'none' ? 1 : s.attempt + 1,
              requestedAt: now,
            },
          },
        ];
      }
      case 'RecordBound': {
        if (s.status !== 'binding' || s.attempt !== cmd.data.attempt) return [];
        const { attempt, bindingId, phoneNumber, verifiedName, lineId, nativeNumberId } = cmd.data;
        return [
          { type: 'ChatappNumberBound', data: { bindingId, attempt, phoneNumber, verifiedName, lineId, nativeNumberId, boundAt: now } },
        ];
      }
      case 'RecordBindFailed': {
        if (s.status !== 'binding' || s.attempt !== cmd.data.attempt) return [];
        const { attempt, bindingId, platformCode, reason } = cmd.data;
        return [{ type: 'ChatappNumberBindFailed', data: { bindingId, attempt, platformCode, reason, failedAt: now } }];
      }
      case 'Unbind': {
        const d = cmd.data;
        if (s.status === 'none' || s.accountId !== cmd.metadata.accountId) throw notFound();
        if (d.connectionId !== undefined && d.connectionId !== s.connectionId) throw notFound();
        if (s.status === 'unbound' || s.status === 'failed') return [];
        return [
          {
            type: 'ChatappNumberUnbound',
            data: { bindingId: d.bindingId, connectionId: s.connectionId, reason: d.reason, unboundAt: now },
          },
        ];
      }
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'ChatappNumberBindRequested':
        return {
          status: 'binding',
          bindingId: e.data.bindingId,
          accountId: e.data.accountId,
          connectionId: e.data.connectionId,
          phoneNumberId: e.data.phoneNumberId,
          agentId: e.data.agentId,
          pin: e.data.pin,
          attempt: e.data.attempt,
          line: null,
        };
      case 'ChatappNumberBound': {
        if (s.status === 'none') return s;
        const { phoneNumber, verifiedName, lineId, nativeNumberId } = e.data;
        return { ...s, status: 'bound', line: { phoneNumber, verifiedName, lineId, nativeNumberId } };
      }
      case 'ChatappNumberBindFailed':
        return s.status === 'none' ? s : { ...s, status: 'failed' };
      case 'ChatappNumberAgentSet':
        return s.status === 'none' ? s : { ...s, agentId: e.data.agentId };
      case 'ChatappNumberUnbound':
        return s.status === 'none' ? s : { ...s, status: 'unbound' };
      default:
        return assertNever(e);
    }
  },
};
