import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * A connection to a business account of the chat platform, `chatapp_connection-<id>` (docs/chatapp.md#connections).
 * Its id derives from the account and the business account, so connecting the same business account again meets
 * the same stream: it replaces the access token and verifies it again. The token is only ever held sealed
 * (`accessTokenSealed`, opened by the processes that call the platform); no event or read model holds it plain.
 *
 *   Requested (verifying) -> Activated | Failed; Deleted from any state; Requested again after Failed or Deleted.
 */
export const connectionStream = (connectionId: string) => `chatapp_connection-${connectionId}`;

type Ref = { connectionId: string };

export type ConnectionCommand =
  | Command<'RequestConnection', Ref & { businessAccountId: string; accessTokenSealed: string }>
  | Command<'RecordConnectionVerified', Ref & { attempt: number; businessName: string | null }>
  | Command<'RecordConnectionRefused', Ref & { attempt: number; platformCode: number | null; reason: string }>
  | Command<'DeleteConnection', Ref>;

export type ConnectionEvent =
  | Event<
      'ChatappConnectionRequested',
      Ref & { accountId: string; businessAccountId: string; accessTokenSealed: string; attempt: number; requestedAt: string }
    >
  | Event<'ChatappConnectionActivated', Ref & { attempt: number; businessName: string | null; activatedAt: string }>
  | Event<'ChatappConnectionFailed', Ref & { attempt: number; platformCode: number | null; reason: string; failedAt: string }>
  | Event<'ChatappConnectionDeleted', Ref & { businessAccountId: string; deletedAt: string }>;

export const connectionEventTypes = [
  'ChatappConnectionRequested',
  'ChatappConnectionActivated',
  'ChatappConnectionFailed',
  'ChatappConnectionDeleted',
] as const satisfies readonly ConnectionEvent['type'][];

export type ConnectionStatus = 'verifying' | 'active' | 'failed' | 'deleted';
export type ConnectionState =
  | { status: 'none' }
  | {
      status: ConnectionStatus;
      connectionId: string;
      accountId: string;
      businessAccountId: string;
      accessTokenSealed: string;
      attempt: number;
      businessName: string | null;
      failure: { platformCode: number | null; reason: string } | null;
      createdAt: string;
    };

const notFound = () => new DomainError('CHATAPP_CONNECTION_NOT_FOUND', 'Chat-app connection not found');

export const connectionDecider: Decider<ConnectionCommand, ConnectionEvent, ConnectionState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    const d = cmd.data;
    switch (cmd.type) {
      case 'RequestConnection': {
        if (s.status !== 'none' && s.accountId !== cmd.metadata.accountId)
          throw new DomainError('CONCURRENCY_CONFLICT', 'Chat-app connection id already taken');
        const attempt = s.status === 'none' ? 1 : s.attempt + 1;
        return [
          {
            type: 'ChatappConnectionRequested',
            data: {
              connectionId: d.connectionId,
              accountId: cmd.metadata.accountId,
              businessAccountId: cmd.data.businessAccountId,
              accessTokenSealed: cmd.data.accessTokenSealed,
              attempt,
              requestedAt: now,
            },
          },
        ];
      }
      case 'RecordConnectionVerified':
        if (s.status !== 'verifying' || s.attempt !== cmd.data.attempt) return [];
        return [
          {
            type: 'ChatappConnectionActivated',
            data: { connectionId: d.connectionId, attempt: cmd.data.attempt, businessName: cmd.data.businessName, activatedAt: now },
          },
        ];
      case 'RecordConnectionRefused':
        if (s.status !== 'verifying' || s.attempt !== cmd.data.attempt) return [];
        return [
          {
            type: 'ChatappConnectionFailed',
            data: {
              connectionId: d.connectionId,
              attempt: cmd.data.attempt,
              platformCode: cmd.data.platformCode,
              reason: cmd.data.reason,
              failedAt: now,
            },
          },
        ];
      case 'DeleteConnection':
        if (s.status === 'none' || s.status === 'deleted' || s.accountId !== cmd.metadata.accountId) throw notFound();
        return [
          {
            type: 'ChatappConnectionDeleted',
            data: { connectionId: d.connectionId, businessAccountId: s.businessAccountId, deletedAt: now },
          },
        ];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'ChatappConnectionRequested':
        return {
          status: 'verifying',
          connectionId: e.data.connectionId,
          accountId: e.data.accountId,
          businessAccountId: e.data.businessAccountId,
          accessTokenSealed: e.data.accessTokenSealed,
          attempt: e.data.attempt,
          businessName: s.status === 'none' ? null : s.businessName,
          failure: null,
          createdAt: s.status === 'none' || s.status === 'deleted' ? e.data.requestedAt : s.createdAt,
        };
      case 'ChatappConnectionActivated':
        return s.status === 'none' ? s : { ...s, status: 'active', businessName: e.data.businessName };
      case 'ChatappConnectionFailed':
        return s.status === 'none' ? s : { ...s, status: 'failed', failure: { platformCode: e.data.platformCode, reason: e.data.reason } };
      case 'ChatappConnectionDeleted':
        return s.status === 'none' ? s : { ...s, status: 'deleted' };
      default:
        return assertNever(e);
    }
  },
};
