import { DomainError, type ErrorCode } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import type { NanpCountry } from './north-american-area-codes.js';
import { addMonths } from './pricing.js';

/** The stream of a phone number of the platform: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const phoneNumberStream = (id: string) => `phone_number-${id}`;

/**
 * A phone number, from the request to provision it to its release, as one aggregate (`phone_number-<id>`).
 *
 * Provisioning is a sequence of facts, one per step of provisioning (docs/numbers.md#provisioning), so that a process manager can resume it
 * after a crash at any point from the stream alone:
 *   Requested -> SlotHeld (account slot: limit, then balance) -> Purchased (carrier) -> RoutingConfigured
 *   -> Provisioned (first month charged; the number is now the account's)
 * A step that cannot succeed records Aborted (the decision) and, once its effects are undone (purchase
 * released upstream, slot given back), Failed. A paid-for number is recorded before anything else happens to
 * it, and a number is active only after its first month is charged.
 */
export type NumberType = 'sms';
export type ProvisioningStep = 'requested' | 'slot_held' | 'purchased' | 'routed';
export type DetachReason = 'request' | 'agent_deleted';

type Meta = {
  numberId: string;
  accountId: string;
  country: NanpCountry;
  areaCode: string | null;
  requestedAgentId: string | null;
  attempt: number;
};

export type PhoneNumberState =
  | { status: 'none' }
  | (Meta & { status: 'provisioning'; step: ProvisioningStep; phoneNumber: string | null; carrierRef: string | null })
  | (Meta & { status: 'aborting'; reached: ProvisioningStep; code: ErrorCode; message: string; phoneNumber: string | null })
  | (Meta & { status: 'failed'; code: ErrorCode; message: string })
  | (Meta & {
      status: 'active';
      phoneNumber: string;
      carrierRef: string;
      type: NumberType;
      agentId: string | null;
      sipTrunkId: string | null;
      releasing: boolean;
      provisionedAt: string;
      periodsPaid: number;
      renewalFailedPeriod: number | null;
    })
  | (Meta & { status: 'released'; phoneNumber: string; releasedAt: string });

type Id = { numberId: string };
export type PhoneNumberCommand =
  | Command<'RequestNumber', Id & { country: NanpCountry; areaCode: string | null; agentId: string | null }>
  | Command<'RecordSlotHeld', Id>
  | Command<'RecordPurchase', Id & { phoneNumber: string; carrierRef: string }>
  | Command<'RecordRouting', Id>
  | Command<'CompleteProvisioning', Id & { chargeId: string; amountMicros: number }>
  | Command<'AbortProvisioning', Id & { code: ErrorCode; message: string }>
  | Command<'CompleteAbort', Id>
  | Command<'AttachToAgent', Id & { agentId: string }>
  | Command<'DetachFromAgent', Id & { agentId: string; reason: DetachReason }>
  | Command<'AssignSipTrunk', Id & { sipTrunkId: string | null }>
  /** the process manager's clean-up after a trunk is deleted: only a number still routed to that trunk changes */
  | Command<'ClearSipTrunk', Id & { sipTrunkId: string }>
  | Command<'RequestRelease', Id>
  | Command<'CompleteRelease', Id>
  | Command<'FailRelease', Id & { code: ErrorCode; message: string }>
  | Command<'RecordRenewal', Id & { period: number; chargeId: string; amountMicros: number }>
  | Command<'RecordRenewalPaymentFailed', Id & { period: number; neededMicros: number; balanceMicros: number }>
  /** the operator brings a number it holds at a carrier into an account (docs/numbers.md#imported-numbers) */
  | Command<'ImportNumber', Id & { phoneNumber: string; country: NanpCountry; carrierId: string; agentId: string | null }>;

export type PhoneNumberEvent =
  | Event<
      'NumberProvisioningRequested',
      Id & {
        accountId: string;
        country: NanpCountry;
        areaCode: string | null;
        agentId: string | null;
        attempt: number;
        requestedAt: string;
      }
    >
  | Event<'NumberSlotHeld', Id & { heldAt: string }>
  | Event<'NumberPurchased', Id & { phoneNumber: string; carrierRef: string; purchasedAt: string }>
  | Event<'NumberRoutingConfigured', Id & { phoneNumber: string; configuredAt: string }>
  | Event<
      'NumberProvisioned',
      Id & {
        accountId: string;
        phoneNumber: string;
        country: NanpCountry;
        areaCode: string | null;
        type: NumberType;
        chargeId: string;
        amountMicros: number;
        paidThrough: string;
        provisionedAt: string;
      }
    >
  | Event<'NumberProvisioningAborted', Id & { reached: ProvisioningStep; code: ErrorCode; message: string; abortedAt: string }>
  | Event<'NumberProvisioningFailed', Id & { code: ErrorCode; message: string; failedAt: string }>
  | Event<'NumberAttached', Id & { agentId: string; previousAgentId: string | null; attachedAt: string }>
  | Event<'NumberDetached', Id & { agentId: string; reason: DetachReason; detachedAt: string }>
  | Event<'NumberSipTrunkAssigned', Id & { sipTrunkId: string | null; previousSipTrunkId: string | null; assignedAt: string }>
  | Event<'NumberReleaseRequested', Id & { requestedAt: string }>
  | Event<'NumberReleaseFailed', Id & { code: ErrorCode; message: string; failedAt: string }>
  | Event<
      'NumberReleased',
      Id & { accountId: string; phoneNumber: string; previousAgentId: string | null; previousSipTrunkId: string | null; releasedAt: string }
    >
  | Event<'NumberRenewed', Id & { period: number; chargeId: string; amountMicros: number; paidThrough: string; renewedAt: string }>
  | Event<'NumberRenewalPaymentFailed', Id & { period: number; neededMicros: number; balanceMicros: number; failedAt: string }>
  | Event<'NumberImported', Id & { accountId: string; phoneNumber: string; country: NanpCountry; carrierId: string; importedAt: string }>;

export const phoneNumberEventTypes = [
  'NumberProvisioningRequested',
  'NumberSlotHeld',
  'NumberPurchased',
  'NumberRoutingConfigured',
  'NumberProvisioned',
  'NumberProvisioningAborted',
  'NumberProvisioningFailed',
  'NumberAttached',
  'NumberDetached',
  'NumberSipTrunkAssigned',
  'NumberReleaseRequested',
  'NumberReleaseFailed',
  'NumberReleased',
  'NumberRenewed',
  'NumberRenewalPaymentFailed',
  'NumberImported',
] as const satisfies readonly PhoneNumberEvent['type'][];

const notFound = () => new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
const releasedError = (releasing: boolean) =>
  new DomainError(
    'PHONE_NUMBER_RELEASED',
    releasing ? 'The phone number is being released' : 'The phone number was released; released numbers cannot be changed',
  );

/** An imported number's carrier reference: the carrier it arrives from, which holds it (nothing to buy or release upstream). */
export const IMPORTED_PREFIX = 'import:';
export const importedCarrierOf = (carrierRef: string): string | null =>
  carrierRef.startsWith(IMPORTED_PREFIX) ? carrierRef.slice(IMPORTED_PREFIX.length) : null;

/** When the number's next billing period starts (its paid-through date), for an active number. */
export const paidThrough = (s: Extract<PhoneNumberState, { status: 'active' }>) => addMonths(s.provisionedAt, s.periodsPaid);

export const phoneNumberDecider: Decider<PhoneNumberCommand, PhoneNumberEvent, PhoneNumberState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const { now, accountId } = cmd.metadata;
    const numberId = cmd.data.numberId;
    // another account's number is indistinguishable from a missing one
    const owned = s.status !== 'none' && s.accountId === accountId;
    /** the number as the account sees it: provisioned and not released */
    const usable = () => {
      if (s.status === 'released' && owned) throw releasedError(false);
      if (s.status !== 'active' || !owned) throw notFound();
      if (s.releasing) throw releasedError(true);
      return s;
    };

    switch (cmd.type) {
      case 'RequestNumber': {
        if (s.status !== 'none' && !owned) throw new DomainError('CONCURRENCY_CONFLICT', 'Phone number id already taken');
        // a failed provisioning may be tried again under the same id (a fresh attempt, a fresh carrier key)
        if (s.status !== 'none' && s.status !== 'failed') return [];
        const attempt = s.status === 'failed' ? s.attempt + 1 : 1;
        const { country, areaCode, agentId } = cmd.data;
        return [
          { type: 'NumberProvisioningRequested', data: { numberId, accountId, country, areaCode, agentId, attempt, requestedAt: now } },
        ];
      }
      case 'RecordSlotHeld':
        return s.status === 'provisioning' && s.step === 'requested' ? [{ type: 'NumberSlotHeld', data: { numberId, heldAt: now } }] : [];
      case 'RecordPurchase':
        return s.status === 'provisioning' && s.step === 'slot_held'
          ? [
              {
                type: 'NumberPurchased',
                data: { numberId, phoneNumber: cmd.data.phoneNumber, carrierRef: cmd.data.carrierRef, purchasedAt: now },
              },
            ]
          : [];
      case 'RecordRouting':
        return s.status === 'provisioning' && s.step === 'purchased' && s.phoneNumber
          ? [{ type: 'NumberRoutingConfigured', data: { numberId, phoneNumber: s.phoneNumber, configuredAt: now } }]
          : [];
      case 'CompleteProvisioning': {
        if (s.status !== 'provisioning' || s.step !== 'routed' || !s.phoneNumber) return [];
        const events: PhoneNumberEvent[] = [
          {
            type: 'NumberProvisioned',
            data: {
              numberId,
              accountId: s.accountId,
              phoneNumber: s.phoneNumber,
              country: s.country,
              areaCode: s.areaCode,
              type: 'sms',
              chargeId: cmd.data.chargeId,
              amountMicros: cmd.data.amountMicros,
              paidThrough: addMonths(now, 1),
              provisionedAt: now,
            },
          },
        ];
        if (s.requestedAgentId)
          events.push({ type: 'NumberAttached', data: { numberId, agentId: s.requestedAgentId, previousAgentId: null, attachedAt: now } });
        return events;
      }
      case 'AbortProvisioning':
        return s.status === 'provisioning'
          ? [
              {
                type: 'NumberProvisioningAborted',
                data: { numberId, reached: s.step, code: cmd.data.code, message: cmd.data.message, abortedAt: now },
              },
            ]
          : [];
      case 'CompleteAbort':
        return s.status === 'aborting'
          ? [{ type: 'NumberProvisioningFailed', data: { numberId, code: s.code, message: s.message, failedAt: now } }]
          : [];

      case 'AttachToAgent': {
        const n = usable();
        if (n.agentId === cmd.data.agentId) return [];
        return [{ type: 'NumberAttached', data: { numberId, agentId: cmd.data.agentId, previousAgentId: n.agentId, attachedAt: now } }];
      }
      case 'DetachFromAgent': {
        if (cmd.data.reason === 'agent_deleted') {
          // the process manager's clean-up: whatever happened since, only a number still on that agent changes
          if (s.status !== 'active' || s.agentId !== cmd.data.agentId) return [];
          return [{ type: 'NumberDetached', data: { numberId, agentId: cmd.data.agentId, reason: 'agent_deleted', detachedAt: now } }];
        }
        if (s.status !== 'active' || !owned || s.agentId !== cmd.data.agentId) {
          throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found or not attached to this agent');
        }
        return [{ type: 'NumberDetached', data: { numberId, agentId: cmd.data.agentId, reason: 'request', detachedAt: now } }];
      }
      case 'AssignSipTrunk': {
        const n = usable();
        if (n.sipTrunkId === cmd.data.sipTrunkId) return [];
        return [
          {
            type: 'NumberSipTrunkAssigned',
            data: { numberId, sipTrunkId: cmd.data.sipTrunkId, previousSipTrunkId: n.sipTrunkId, assignedAt: now },
          },
        ];
      }

      case 'ClearSipTrunk':
        if (s.status !== 'active' || s.sipTrunkId !== cmd.data.sipTrunkId) return [];
        return [
          { type: 'NumberSipTrunkAssigned', data: { numberId, sipTrunkId: null, previousSipTrunkId: s.sipTrunkId, assignedAt: now } },
        ];

      case 'RequestRelease':
        if (s.status === 'released' && owned) return [];
        if (s.status !== 'active' || !owned) throw notFound();
        if (s.releasing) return [];
        return [{ type: 'NumberReleaseRequested', data: { numberId, requestedAt: now } }];
      case 'CompleteRelease':
        if (s.status !== 'active' || !s.releasing) return [];
        return [
          {
            type: 'NumberReleased',
            data: {
              numberId,
              accountId: s.accountId,
              phoneNumber: s.phoneNumber,
              previousAgentId: s.agentId,
              previousSipTrunkId: s.sipTrunkId,
              releasedAt: now,
            },
          },
        ];
      case 'FailRelease':
        if (s.status !== 'active' || !s.releasing) return [];
        return [{ type: 'NumberReleaseFailed', data: { numberId, code: cmd.data.code, message: cmd.data.message, failedAt: now } }];

      case 'RecordRenewal':
        // an imported number is paid for at its carrier by the operator: never renewed here
        if (s.status !== 'active' || cmd.data.period !== s.periodsPaid || importedCarrierOf(s.carrierRef) !== null) return [];
        return [
          {
            type: 'NumberRenewed',
            data: {
              numberId,
              period: cmd.data.period,
              chargeId: cmd.data.chargeId,
              amountMicros: cmd.data.amountMicros,
              paidThrough: addMonths(s.provisionedAt, cmd.data.period + 1),
              renewedAt: now,
            },
          },
        ];
      case 'RecordRenewalPaymentFailed':
        if (s.status !== 'active' || cmd.data.period !== s.periodsPaid || s.renewalFailedPeriod === cmd.data.period) return [];
        return [
          {
            type: 'NumberRenewalPaymentFailed',
            data: {
              numberId,
              period: cmd.data.period,
              neededMicros: cmd.data.neededMicros,
              balanceMicros: cmd.data.balanceMicros,
              failedAt: now,
            },
          },
        ];
      case 'ImportNumber': {
        if (
          s.status === 'active' &&
          owned &&
          s.carrierRef === `${IMPORTED_PREFIX}${cmd.data.carrierId}` &&
          s.phoneNumber === cmd.data.phoneNumber
        )
          return []; // the same import again
        if (s.status !== 'none') throw new DomainError('CONCURRENCY_CONFLICT', 'Phone number id already taken');
        const { phoneNumber, country, carrierId, agentId } = cmd.data;
        const events: PhoneNumberEvent[] = [
          { type: 'NumberImported', data: { numberId, accountId, phoneNumber, country, carrierId, importedAt: now } },
        ];
        if (agentId) events.push({ type: 'NumberAttached', data: { numberId, agentId, previousAgentId: null, attachedAt: now } });
        return events;
      }
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    if (e.type === 'NumberImported') {
      const { numberId, accountId, country, phoneNumber, carrierId, importedAt } = e.data;
      // not bought: no month is paid for, and none is ever due (the operator pays the carrier)
      return {
        status: 'active',
        numberId,
        accountId,
        country,
        areaCode: null,
        requestedAgentId: null,
        attempt: 1,
        phoneNumber,
        carrierRef: `${IMPORTED_PREFIX}${carrierId}`,
        type: 'sms',
        agentId: null,
        sipTrunkId: null,
        releasing: false,
        provisionedAt: importedAt,
        periodsPaid: 0,
        renewalFailedPeriod: null,
      };
    }
    if (e.type === 'NumberProvisioningRequested') {
      const { numberId, accountId, country, areaCode, agentId, attempt } = e.data;
      return {
        status: 'provisioning',
        step: 'requested',
        numberId,
        accountId,
        country,
        areaCode,
        requestedAgentId: agentId,
        attempt,
        phoneNumber: null,
        carrierRef: null,
      };
    }
    if (s.status === 'none') return s;
    const meta: Meta = {
      numberId: s.numberId,
      accountId: s.accountId,
      country: s.country,
      areaCode: s.areaCode,
      requestedAgentId: s.requestedAgentId,
      attempt: s.attempt,
    };
    switch (e.type) {
      case 'NumberSlotHeld':
        return s.status === 'provisioning' ? { ...s, step: 'slot_held' } : s;
      case 'NumberPurchased':
        return s.status === 'provisioning'
          ? { ...s, step: 'purchased', phoneNumber: e.data.phoneNumber, carrierRef: e.data.carrierRef }
          : s;
      case 'NumberRoutingConfigured':
        return s.status === 'provisioning' ? { ...s, step: 'routed' } : s;
      case 'NumberProvisioned':
        return {
          ...meta,
          status: 'active',
          phoneNumber: e.data.phoneNumber,
          carrierRef: s.status === 'provisioning' ? (s.carrierRef ?? '') : '',
          type: e.data.type,
          agentId: null,
          sipTrunkId: null,
          releasing: false,
          provisionedAt: e.data.provisionedAt,
          periodsPaid: 1,
          renewalFailedPeriod: null,
        };
      case 'NumberProvisioningAborted':
        return s.status === 'provisioning'
          ? { ...meta, status: 'aborting', reached: e.data.reached, code: e.data.code, message: e.data.message, phoneNumber: s.phoneNumber }
          : s;
      case 'NumberProvisioningFailed':
        return { ...meta, status: 'failed', code: e.data.code, message: e.data.message };
      case 'NumberAttached':
        return s.status === 'active' ? { ...s, agentId: e.data.agentId } : s;
      case 'NumberDetached':
        return s.status === 'active' ? { ...s, agentId: null } : s;
      case 'NumberSipTrunkAssigned':
        return s.status === 'active' ? { ...s, sipTrunkId: e.data.sipTrunkId } : s;
      case 'NumberReleaseRequested':
        return s.status === 'active' ? { ...s, releasing: true } : s;
      case 'NumberReleaseFailed':
        return s.status === 'active' ? { ...s, releasing: false } : s;
      case 'NumberReleased':
        return { ...meta, status: 'released', phoneNumber: e.data.phoneNumber, releasedAt: e.data.releasedAt };
      case 'NumberRenewed':
        return s.status === 'active' ? { ...s, periodsPaid: e.data.period + 1, renewalFailedPeriod: null } : s;
      case 'NumberRenewalPaymentFailed':
        return s.status === 'active' ? { ...s, renewalFailedPeriod: e.data.period } : s;
      default:
        return assertNever(e);
    }
  },
};
