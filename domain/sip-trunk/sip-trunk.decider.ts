import { changedFields } from '../shared/changes.js';
import { DomainError, type ErrorCode } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/** The stream of a SIP trunk: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const sipTrunkStream = (id: string) => `sip_trunk-${id}`;

/**
 * A SIP trunk (docs/numbers.md#sip-trunks): where a number's calls are routed in the customer's own SIP infrastructure.
 * The trunk also keeps the set of numbers routed to it, because it owns the rule that couples them: its
 * origination URIs may be cleared only while no number is attached (and a number is attached only to a
 * trunk that has somewhere to send calls). Both decisions are taken on this one stream.
 */
export const TRANSFERS = ['all', 'sip', 'none'] as const;
export const TRANSFER_CALLER_IDS = ['transferee', 'transferor'] as const;
export const DEFAULT_URI_PRIORITY = 10;
export const DEFAULT_URI_WEIGHT = 10;

export type OriginationUri = Readonly<{ sipUri: string; name: string | null; priority: number; weight: number }>;
export type SipTrunkConfig = Readonly<{
  name: string;
  transfers: (typeof TRANSFERS)[number];
  transferCallerId: (typeof TRANSFER_CALLER_IDS)[number];
  uris: readonly OriginationUri[];
}>;
export type SipTrunkChanges = Partial<SipTrunkConfig>;

type Id = { trunkId: string };
type Failure = { code: ErrorCode; message: string };
export type SipTrunkCommand =
  /** a new trunk: the SIP trunk process creates it upstream, then records CreateSipTrunk or FailSipTrunk */
  | Command<'RequestSipTrunk', Id & { config: SipTrunkConfig }>
  | Command<'CreateSipTrunk', Id & { config: SipTrunkConfig; providerRef: string; terminationUri: string }>
  | Command<'FailSipTrunk', Id & Failure>
  | Command<'UpdateSipTrunk', Id & { changes: SipTrunkChanges }>
  /** the provider took the configuration as it stands */
  | Command<'RecordSipTrunkSynced', Id>
  /** the provider refused an update: the fields it changed go back to what they were */
  | Command<'RevertSipTrunkUpdate', Id & Failure & { changes: SipTrunkChanges }>
  | Command<'RequestSipTrunkDeletion', Id>
  | Command<'DeleteSipTrunk', Id>
  | Command<'FailSipTrunkDeletion', Id & Failure>
  | Command<'LinkNumber', Id & { numberId: string }>
  | Command<'UnlinkNumber', Id & { numberId: string }>;

export type SipTrunkEvent =
  | Event<'SipTrunkRequested', Id & { accountId: string; config: SipTrunkConfig; requestedAt: string }>
  | Event<'SipTrunkFailed', Id & Failure & { accountId: string; failedAt: string }>
  | Event<'SipTrunkSynced', Id & { syncedAt: string }>
  | Event<'SipTrunkUpdateReverted', Id & Failure & { changes: SipTrunkChanges; revertedAt: string }>
  | Event<'SipTrunkDeletionRequested', Id & { requestedAt: string }>
  | Event<'SipTrunkDeletionFailed', Id & Failure & { failedAt: string }>
  | Event<
      'SipTrunkCreated',
      Id & { accountId: string; config: SipTrunkConfig; providerRef: string; terminationUri: string; createdAt: string }
    >
  | Event<'SipTrunkUpdated', Id & { changes: SipTrunkChanges; updatedAt: string }>
  | Event<'SipTrunkDeleted', Id & { accountId: string; providerRef: string; numberIds: string[]; deletedAt: string }>
  | Event<'SipTrunkNumberLinked', Id & { numberId: string; linkedAt: string }>
  | Event<'SipTrunkNumberUnlinked', Id & { numberId: string; unlinkedAt: string }>;

export const sipTrunkEventTypes = [
  'SipTrunkRequested',
  'SipTrunkFailed',
  'SipTrunkSynced',
  'SipTrunkUpdateReverted',
  'SipTrunkDeletionRequested',
  'SipTrunkDeletionFailed',
  'SipTrunkCreated',
  'SipTrunkUpdated',
  'SipTrunkDeleted',
  'SipTrunkNumberLinked',
  'SipTrunkNumberUnlinked',
] as const satisfies readonly SipTrunkEvent['type'][];

export type SipTrunkState =
  | { status: 'none' }
  | { status: 'requested'; trunkId: string; accountId: string; config: SipTrunkConfig }
  | { status: 'failed'; trunkId: string; accountId: string; code: ErrorCode; message: string }
  /** `deleting` while the provider is asked to delete it */
  | {
      status: 'active';
      trunkId: string;
      accountId: string;
      config: SipTrunkConfig;
      providerRef: string;
      numberIds: readonly string[];
      deleting: boolean;
    }
  | { status: 'deleted'; trunkId: string; accountId: string };

const notFound = () => new DomainError('SIP_TRUNK_NOT_FOUND', 'SIP trunk not found');

export const sipTrunkDecider: Decider<SipTrunkCommand, SipTrunkEvent, SipTrunkState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const { now, accountId } = cmd.metadata;
    const trunkId = cmd.data.trunkId;
    const owned = s.status !== 'none' && s.accountId === accountId;
    switch (cmd.type) {
      case 'RequestSipTrunk':
        if (s.status !== 'none') {
          if (!owned) throw new DomainError('CONCURRENCY_CONFLICT', 'SIP trunk id already taken');
          return [];
        }
        return [{ type: 'SipTrunkRequested', data: { trunkId, accountId, config: cmd.data.config, requestedAt: now } }];
      case 'FailSipTrunk':
        if (s.status !== 'requested') return [];
        return [
          {
            type: 'SipTrunkFailed',
            data: { trunkId, accountId: s.accountId, code: cmd.data.code, message: cmd.data.message, failedAt: now },
          },
        ];
      case 'RecordSipTrunkSynced':
        if (s.status !== 'active') return [];
        return [{ type: 'SipTrunkSynced', data: { trunkId, syncedAt: now } }];
      case 'RevertSipTrunkUpdate':
        if (s.status !== 'active') return [];
        return [
          {
            type: 'SipTrunkUpdateReverted',
            data: { trunkId, changes: cmd.data.changes, code: cmd.data.code, message: cmd.data.message, revertedAt: now },
          },
        ];
      case 'RequestSipTrunkDeletion':
        if (s.status !== 'active' || !owned) throw notFound();
        if (s.deleting) return [];
        return [{ type: 'SipTrunkDeletionRequested', data: { trunkId, requestedAt: now } }];
      case 'FailSipTrunkDeletion':
        if (s.status !== 'active' || !s.deleting) return [];
        return [{ type: 'SipTrunkDeletionFailed', data: { trunkId, code: cmd.data.code, message: cmd.data.message, failedAt: now } }];
      case 'CreateSipTrunk':
        if (s.status === 'requested') {
          if (!owned) throw notFound();
          return [
            {
              type: 'SipTrunkCreated',
              data: {
                trunkId,
                accountId,
                config: s.config,
                providerRef: cmd.data.providerRef,
                terminationUri: cmd.data.terminationUri,
                createdAt: now,
              },
            },
          ];
        }
        if (s.status !== 'none') {
          if (!owned) throw new DomainError('CONCURRENCY_CONFLICT', 'SIP trunk id already taken');
          return [];
        }
        return [
          {
            type: 'SipTrunkCreated',
            data: {
              trunkId,
              accountId,
              config: cmd.data.config,
              providerRef: cmd.data.providerRef,
              terminationUri: cmd.data.terminationUri,
              createdAt: now,
            },
          },
        ];
      case 'UpdateSipTrunk': {
        if (s.status !== 'active' || !owned) throw notFound();
        const changes = changedFields(s.config, cmd.data.changes);
        if (Object.keys(changes).length === 0) return [];
        if (changes.uris !== undefined && changes.uris.length === 0 && s.numberIds.length > 0) {
          throw new DomainError(
            'SIP_TRUNK_CONFLICT',
            `The origination URIs cannot be cleared while ${s.numberIds.length} phone number(s) are attached to this trunk; detach them first (PATCH /v1/numbers/{id} with sipTrunkId null)`,
          );
        }
        return [{ type: 'SipTrunkUpdated', data: { trunkId, changes, updatedAt: now } }];
      }
      case 'DeleteSipTrunk':
        if (s.status !== 'active' || !owned) throw notFound();
        return [
          {
            type: 'SipTrunkDeleted',
            data: { trunkId, accountId: s.accountId, providerRef: s.providerRef, numberIds: [...s.numberIds], deletedAt: now },
          },
        ];
      case 'LinkNumber':
        if (s.status !== 'active' || !owned) throw notFound();
        if (s.numberIds.includes(cmd.data.numberId)) return [];
        if (s.config.uris.length === 0) {
          throw new DomainError(
            'SIP_TRUNK_CONFLICT',
            'This SIP trunk has no origination URIs; add at least one before routing numbers to it',
          );
        }
        return [{ type: 'SipTrunkNumberLinked', data: { trunkId, numberId: cmd.data.numberId, linkedAt: now } }];
      case 'UnlinkNumber':
        if (s.status !== 'active' || !s.numberIds.includes(cmd.data.numberId)) return [];
        return [{ type: 'SipTrunkNumberUnlinked', data: { trunkId, numberId: cmd.data.numberId, unlinkedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'SipTrunkRequested':
        return { status: 'requested', trunkId: e.data.trunkId, accountId: e.data.accountId, config: e.data.config };
      case 'SipTrunkFailed':
        return { status: 'failed', trunkId: e.data.trunkId, accountId: e.data.accountId, code: e.data.code, message: e.data.message };
      case 'SipTrunkSynced':
        return s;
      case 'SipTrunkDeletionRequested':
        return s.status === 'active' ? { ...s, deleting: true } : s;
      case 'SipTrunkDeletionFailed':
        return s.status === 'active' ? { ...s, deleting: false } : s;
      case 'SipTrunkCreated':
        return {
          status: 'active',
          trunkId: e.data.trunkId,
          accountId: e.data.accountId,
          config: e.data.config,
          providerRef: e.data.providerRef,
          numberIds: [],
          deleting: false,
        };
      case 'SipTrunkUpdated':
      case 'SipTrunkUpdateReverted':
        return s.status === 'active' ? { ...s, config: { ...s.config, ...e.data.changes } } : s;
      case 'SipTrunkDeleted':
        return s.status === 'active' ? { status: 'deleted', trunkId: s.trunkId, accountId: s.accountId } : s;
      case 'SipTrunkNumberLinked':
        return s.status === 'active' ? { ...s, numberIds: [...s.numberIds, e.data.numberId] } : s;
      case 'SipTrunkNumberUnlinked':
        return s.status === 'active' ? { ...s, numberIds: s.numberIds.filter((n) => n !== e.data.numberId) } : s;
      default:
        return assertNever(e);
    }
  },
};
