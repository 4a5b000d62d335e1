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

/** A digest credential the customer's PBX sends calls out with (docs/sip.md#calls-from-your-pbx); the password sealed. */
export type TerminationCredential = Readonly<{ username: string; passwordSealed: string }>;
/**
 * The trunk's termination side (docs/sip.md#calls-from-your-pbx): who may send calls into the platform to go out
 * through the carrier, by digest credentials or by source address (addresses or CIDR blocks).
 */
export type SipTrunkTermination = Readonly<{ credentials: readonly TerminationCredential[]; addresses: readonly string[] }>;
export const NO_TERMINATION: SipTrunkTermination = { credentials: [], addresses: [] };

export type SipTrunkConfig = Readonly<{
  name: string;
  transfers: (typeof TRANSFERS)[number];
  transferCallerId: (typeof TRANSFER_CALLER_IDS)[number];
  uris: readonly OriginationUri[];
  /** absent: no termination side (and on events stored before it was added) */
  termination?: SipTrunkTermination;
}>;
/** What an update recorded changes: the fields given, whole (the termination with every password sealed). */
export type SipTrunkChanges = Partial<SipTrunkConfig>;

/**
 * The termination side as an update gives it: each list given replaces the stored one; a credential without a
 * password keeps the stored password of the same user name (a new user name needs one).
 */
export type TerminationChange = Readonly<{
  credentials?: readonly Readonly<{ username: string; passwordSealed?: string }>[];
  addresses?: readonly string[];
}>;
export type SipTrunkChangesInput = Partial<Omit<SipTrunkConfig, 'termination'>> & { termination?: TerminationChange };
/** A new trunk as it is requested: its termination as a change of none (every credential with its password). */
export type SipTrunkConfigInput = Omit<SipTrunkConfig, 'termination'> & { termination?: TerminationChange };

/** The termination side of a configuration: none when the trunk has none. */
export const terminationOf = (c: SipTrunkConfig): SipTrunkTermination => c.termination ?? NO_TERMINATION;

const invalidField = (field: string, message: string) =>
  new DomainError('VALIDATION_ERROR', message, [{ field, message, type: 'value_error' }]);

/** A termination change applied to the stored side: the lists given replace, passwords left out are kept. */
function resolveTermination(stored: SipTrunkTermination, change: TerminationChange): SipTrunkTermination {
  const credentials = (change.credentials ?? stored.credentials).map((c, i) => {
    if (c.passwordSealed) return { username: c.username, passwordSealed: c.passwordSealed };
    const kept = stored.credentials.find((s) => s.username === c.username);
    if (!kept) throw invalidField(`termination.credentials.${i}.password`, `a new credential (${c.username}) needs a password`);
    return kept;
  });
  const seen = new Set<string>();
  for (const [i, c] of credentials.entries()) {
    if (seen.has(c.username)) throw invalidField(`termination.credentials.${i}.username`, `the user name ${c.username} is given twice`);
    seen.add(c.username);
  }
  return { credentials, addresses: [...new Set(change.addresses ?? stored.addresses)] };
}

type Id = { trunkId: string };
type Failure = { code: ErrorCode; message: string };
export type SipTrunkCommand =
  /** a new trunk: the SIP trunk process creates it upstream, then records CreateSipTrunk or FailSipTrunk */
  | Command<'RequestSipTrunk', Id & { config: SipTrunkConfigInput }>
  | Command<'CreateSipTrunk', Id & { config: SipTrunkConfig; providerRef: string; terminationUri: string }>
  | Command<'FailSipTrunk', Id & Failure>
  | Command<'UpdateSipTrunk', Id & { changes: SipTrunkChangesInput }>
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
      case 'RequestSipTrunk': {
        if (s.status !== 'none') {
          if (!owned) throw new DomainError('CONCURRENCY_CONFLICT', 'SIP trunk id already taken');
          return [];
        }
        const { termination, ...rest } = cmd.data.config;
        // a new trunk's credentials all carry their passwords; the same rules as an update's (no user name twice)
        const config = termination ? { ...rest, termination: resolveTermination(NO_TERMINATION, termination) } : rest;
        return [{ type: 'SipTrunkRequested', data: { trunkId, accountId, config, requestedAt: now } }];
      }
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
        const { termination, ...rest } = cmd.data.changes;
        const given: SipTrunkChanges = termination
          ? { ...rest, termination: resolveTermination(terminationOf(s.config), termination) }
          : rest;
        const changes = changedFields({ ...s.config, termination: terminationOf(s.config) }, given);
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
