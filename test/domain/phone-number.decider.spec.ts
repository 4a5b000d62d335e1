import { expect } from 'chai';
import { AREA_CODES, areaCodeProblem, areaCodesOf } from '../../domain/phone-number/north-american-area-codes.js';
import { type PhoneNumberCommand, type PhoneNumberEvent, phoneNumberDecider } from '../../domain/phone-number/phone-number.decider.js';
import { addMonths, monthlyChargeId } from '../../domain/phone-number/pricing.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(phoneNumberDecider);
const now = '2026-01-31T10:00:00.000Z';
const metadata = { now, accountId: 'acc_1' };
const other = { now, accountId: 'acc_2' };
const numberId = 'pn_1';
const cmd = <T extends PhoneNumberCommand['type']>(
  type: T,
  data: Omit<Extract<PhoneNumberCommand, { type: T }>['data'], 'numberId'>,
  m = metadata,
) => ({ type, data: { numberId, ...data }, metadata: m }) as unknown as PhoneNumberCommand;

const requested = (agentId: string | null = null, attempt = 1): PhoneNumberEvent => ({
  type: 'NumberProvisioningRequested',
  data: { numberId, accountId: 'acc_1', country: 'US', areaCode: '415', agentId, attempt, requestedAt: now },
});
const slotHeld: PhoneNumberEvent = { type: 'NumberSlotHeld', data: { numberId, heldAt: now } };
const purchased: PhoneNumberEvent = {
  type: 'NumberPurchased',
  data: { numberId, phoneNumber: '+14155550100', carrierRef: 'sbx_1', purchasedAt: now },
};
const routed: PhoneNumberEvent = { type: 'NumberRoutingConfigured', data: { numberId, phoneNumber: '+14155550100', configuredAt: now } };
const provisioned: PhoneNumberEvent = {
  type: 'NumberProvisioned',
  data: {
    numberId,
    accountId: 'acc_1',
    phoneNumber: '+14155550100',
    country: 'US',
    areaCode: '415',
    type: 'sms',
    chargeId: monthlyChargeId(numberId, 0),
    amountMicros: 3_000_000,
    paidThrough: '2026-02-28T10:00:00.000Z',
    provisionedAt: now,
  },
};
const active = [requested(), slotHeld, purchased, routed, provisioned];
const attached = (agentId: string, previousAgentId: string | null = null): PhoneNumberEvent => ({
  type: 'NumberAttached',
  data: { numberId, agentId, previousAgentId, attachedAt: now },
});
const releaseRequested: PhoneNumberEvent = { type: 'NumberReleaseRequested', data: { numberId, requestedAt: now } };
const released: PhoneNumberEvent = {
  type: 'NumberReleased',
  data: { numberId, accountId: 'acc_1', phoneNumber: '+14155550100', previousAgentId: null, previousSipTrunkId: null, releasedAt: now },
};

describe('PhoneNumber decider', () => {
  describe('provisioning, one fact per step', () => {
    it('records the request with the first attempt', () =>
      given([])
        .when(cmd('RequestNumber', { country: 'US', areaCode: '415', agentId: null }))
        .then([requested()]));
    it('treats a repeated request as a retry of the same provisioning', () =>
      given([requested()])
        .when(cmd('RequestNumber', { country: 'US', areaCode: '415', agentId: null }))
        .then([]));
    it("refuses another account's number id", () =>
      given([requested()])
        .when(cmd('RequestNumber', { country: 'US', areaCode: '415', agentId: null }, other))
        .thenThrows('CONCURRENCY_CONFLICT'));
    it('moves through slot, purchase and routing in order', () => {
      given([requested()]).when(cmd('RecordSlotHeld', {})).then([slotHeld]);
      given([requested(), slotHeld])
        .when(cmd('RecordPurchase', { phoneNumber: '+14155550100', carrierRef: 'sbx_1' }))
        .then([purchased]);
      given([requested(), slotHeld, purchased]).when(cmd('RecordRouting', {})).then([routed]);
    });
    it('ignores a step recorded out of order or twice (a resumed process)', () => {
      given([requested()])
        .when(cmd('RecordPurchase', { phoneNumber: '+1', carrierRef: 'x' }))
        .then([]);
      given([requested(), slotHeld]).when(cmd('RecordSlotHeld', {})).then([]);
      given([requested(), slotHeld, purchased, routed]).when(cmd('RecordRouting', {})).then([]);
    });
    it('activates only after routing, with the first month paid through one calendar month later', () =>
      given([requested(), slotHeld, purchased, routed])
        .when(cmd('CompleteProvisioning', { chargeId: monthlyChargeId(numberId, 0), amountMicros: 3_000_000 }))
        .then([provisioned]));
    it('attaches the requested agent in the same decision as the activation', () =>
      given([requested('agt_1'), slotHeld, purchased, routed])
        .when(cmd('CompleteProvisioning', { chargeId: monthlyChargeId(numberId, 0), amountMicros: 3_000_000 }))
        .then([provisioned, attached('agt_1')]));
    it('does not activate before the number is routed', () =>
      given([requested(), slotHeld, purchased])
        .when(cmd('CompleteProvisioning', { chargeId: 'c', amountMicros: 3_000_000 }))
        .then([]));
    it('aborts from the step reached, then fails once the effects are undone', () => {
      given([requested(), slotHeld, purchased])
        .when(cmd('AbortProvisioning', { code: 'TELEPHONY_PROVIDER_ERROR', message: 'down' }))
        .then([
          {
            type: 'NumberProvisioningAborted',
            data: { numberId, reached: 'purchased', code: 'TELEPHONY_PROVIDER_ERROR', message: 'down', abortedAt: now },
          },
        ]);
      const aborted: PhoneNumberEvent = {
        type: 'NumberProvisioningAborted',
        data: { numberId, reached: 'purchased', code: 'TELEPHONY_PROVIDER_ERROR', message: 'down', abortedAt: now },
      };
      given([requested(), slotHeld, purchased, aborted])
        .when(cmd('CompleteAbort', {}))
        .then([{ type: 'NumberProvisioningFailed', data: { numberId, code: 'TELEPHONY_PROVIDER_ERROR', message: 'down', failedAt: now } }]);
      given([requested(), slotHeld, purchased, aborted]).when(cmd('RecordRouting', {})).then([]);
      given([requested(), slotHeld, purchased, aborted])
        .when(cmd('CompleteProvisioning', { chargeId: 'c', amountMicros: 1 }))
        .then([]);
    });
    it('never aborts an active number', () =>
      given(active)
        .when(cmd('AbortProvisioning', { code: 'SMS_PROVIDER_ERROR', message: 'x' }))
        .then([]));
    it('starts a fresh attempt when a failed provisioning is requested again', () => {
      const failed: PhoneNumberEvent[] = [
        requested(),
        {
          type: 'NumberProvisioningAborted',
          data: { numberId, reached: 'requested', code: 'NUMBER_LIMIT_REACHED', message: 'limit', abortedAt: now },
        },
        { type: 'NumberProvisioningFailed', data: { numberId, code: 'NUMBER_LIMIT_REACHED', message: 'limit', failedAt: now } },
      ];
      given(failed)
        .when(cmd('RequestNumber', { country: 'US', areaCode: '415', agentId: null }))
        .then([requested(null, 2)]);
    });
  });

  describe('attach and detach', () => {
    it('attaches an active number', () =>
      given(active)
        .when(cmd('AttachToAgent', { agentId: 'agt_1' }))
        .then([attached('agt_1')]));
    it('moves a number held by another agent, naming the agent it came from', () =>
      given([...active, attached('agt_1')])
        .when(cmd('AttachToAgent', { agentId: 'agt_2' }))
        .then([attached('agt_2', 'agt_1')]));
    it('treats attaching to the same agent again as a no-op', () =>
      given([...active, attached('agt_1')])
        .when(cmd('AttachToAgent', { agentId: 'agt_1' }))
        .then([]));
    it('refuses a released number with PHONE_NUMBER_RELEASED, and one being released', () => {
      given([...active, releaseRequested, released])
        .when(cmd('AttachToAgent', { agentId: 'agt_1' }))
        .thenThrows('PHONE_NUMBER_RELEASED');
      given([...active, releaseRequested])
        .when(cmd('AttachToAgent', { agentId: 'agt_1' }))
        .thenThrows('PHONE_NUMBER_RELEASED');
    });
    it("answers not found for another account's number and for one still provisioning", () => {
      given(active)
        .when(cmd('AttachToAgent', { agentId: 'agt_1' }, other))
        .thenThrows('PHONE_NUMBER_NOT_FOUND');
      given([requested(), slotHeld])
        .when(cmd('AttachToAgent', { agentId: 'agt_1' }))
        .thenThrows('PHONE_NUMBER_NOT_FOUND');
    });
    it('detaches from the agent that holds it; from another agent it is not found', () => {
      given([...active, attached('agt_1')])
        .when(cmd('DetachFromAgent', { agentId: 'agt_1', reason: 'request' }))
        .then([{ type: 'NumberDetached', data: { numberId, agentId: 'agt_1', reason: 'request', detachedAt: now } }]);
      given([...active, attached('agt_1')])
        .when(cmd('DetachFromAgent', { agentId: 'agt_2', reason: 'request' }))
        .thenThrows('PHONE_NUMBER_NOT_FOUND');
    });
    it('detaches for a deleted agent only while the number is still on it (process manager, idempotent)', () => {
      given([...active, attached('agt_1')])
        .when(cmd('DetachFromAgent', { agentId: 'agt_1', reason: 'agent_deleted' }))
        .then([{ type: 'NumberDetached', data: { numberId, agentId: 'agt_1', reason: 'agent_deleted', detachedAt: now } }]);
      given([...active, attached('agt_1'), attached('agt_2', 'agt_1')])
        .when(cmd('DetachFromAgent', { agentId: 'agt_1', reason: 'agent_deleted' }))
        .then([]);
    });
  });

  describe('SIP trunk routing', () => {
    it('assigns, moves and clears a trunk, naming the previous one', () => {
      given(active)
        .when(cmd('AssignSipTrunk', { sipTrunkId: 'trk_1' }))
        .then([{ type: 'NumberSipTrunkAssigned', data: { numberId, sipTrunkId: 'trk_1', previousSipTrunkId: null, assignedAt: now } }]);
      const on1: PhoneNumberEvent = {
        type: 'NumberSipTrunkAssigned',
        data: { numberId, sipTrunkId: 'trk_1', previousSipTrunkId: null, assignedAt: now },
      };
      given([...active, on1])
        .when(cmd('AssignSipTrunk', { sipTrunkId: null }))
        .then([{ type: 'NumberSipTrunkAssigned', data: { numberId, sipTrunkId: null, previousSipTrunkId: 'trk_1', assignedAt: now } }]);
      given([...active, on1])
        .when(cmd('AssignSipTrunk', { sipTrunkId: 'trk_1' }))
        .then([]);
    });
    it('clears a deleted trunk only from numbers still routed to it', () => {
      const on1: PhoneNumberEvent = {
        type: 'NumberSipTrunkAssigned',
        data: { numberId, sipTrunkId: 'trk_1', previousSipTrunkId: null, assignedAt: now },
      };
      given([...active, on1])
        .when(cmd('ClearSipTrunk', { sipTrunkId: 'trk_1' }))
        .then([{ type: 'NumberSipTrunkAssigned', data: { numberId, sipTrunkId: null, previousSipTrunkId: 'trk_1', assignedAt: now } }]);
      given([...active, on1])
        .when(cmd('ClearSipTrunk', { sipTrunkId: 'trk_2' }))
        .then([]);
    });
  });

  describe('release', () => {
    it('is requested, then completed by the process manager with what it was attached to', () => {
      given([...active, attached('agt_1')])
        .when(cmd('RequestRelease', {}))
        .then([releaseRequested]);
      given([...active, attached('agt_1'), releaseRequested])
        .when(cmd('CompleteRelease', {}))
        .then([{ type: 'NumberReleased', data: { ...released.data, previousAgentId: 'agt_1' } } as PhoneNumberEvent]);
    });
    it('returns to active when the upstream release fails', () => {
      const failed: PhoneNumberEvent = {
        type: 'NumberReleaseFailed',
        data: { numberId, code: 'SMS_PROVIDER_ERROR', message: 'down', failedAt: now },
      };
      given([...active, releaseRequested])
        .when(cmd('FailRelease', { code: 'SMS_PROVIDER_ERROR', message: 'down' }))
        .then([failed]);
      given([...active, releaseRequested, failed])
        .when(cmd('AttachToAgent', { agentId: 'agt_1' }))
        .then([attached('agt_1')]);
    });
    it('is irreversible and idempotent', () => {
      given([...active, releaseRequested, released])
        .when(cmd('RequestRelease', {}))
        .then([]);
      given([...active, releaseRequested, released])
        .when(cmd('AssignSipTrunk', { sipTrunkId: 'trk_1' }))
        .thenThrows('PHONE_NUMBER_RELEASED');
      given([...active, releaseRequested, released])
        .when(cmd('RecordRenewal', { period: 1, chargeId: 'c', amountMicros: 3_000_000 }))
        .then([]);
    });
    it("cannot release a number that is not (yet) the account's", () => {
      given([requested()]).when(cmd('RequestRelease', {})).thenThrows('PHONE_NUMBER_NOT_FOUND');
      given(active)
        .when(cmd('RequestRelease', {}, other))
        .thenThrows('PHONE_NUMBER_NOT_FOUND');
    });
  });

  describe('monthly renewal', () => {
    const renewed = (period: number): PhoneNumberEvent => ({
      type: 'NumberRenewed',
      data: {
        numberId,
        period,
        chargeId: monthlyChargeId(numberId, period),
        amountMicros: 3_000_000,
        paidThrough: addMonths(now, period + 1),
        renewedAt: now,
      },
    });
    it('renews the next unpaid period once, counted from the provisioning date', () => {
      given(active)
        .when(cmd('RecordRenewal', { period: 1, chargeId: monthlyChargeId(numberId, 1), amountMicros: 3_000_000 }))
        .then([renewed(1)]);
      given([...active, renewed(1)])
        .when(cmd('RecordRenewal', { period: 1, chargeId: monthlyChargeId(numberId, 1), amountMicros: 3_000_000 }))
        .then([]);
      expect(renewed(1).data).to.include({ paidThrough: '2026-03-31T10:00:00.000Z' });
    });
    it('flags a renewal that could not be paid once per period, and clears the flag when paid', () => {
      const failed: PhoneNumberEvent = {
        type: 'NumberRenewalPaymentFailed',
        data: { numberId, period: 1, neededMicros: 3_000_000, balanceMicros: 1, failedAt: now },
      };
      given(active)
        .when(cmd('RecordRenewalPaymentFailed', { period: 1, neededMicros: 3_000_000, balanceMicros: 1 }))
        .then([failed]);
      given([...active, failed])
        .when(cmd('RecordRenewalPaymentFailed', { period: 1, neededMicros: 3_000_000, balanceMicros: 1 }))
        .then([]);
      given([...active, failed])
        .when(cmd('RecordRenewal', { period: 1, chargeId: monthlyChargeId(numberId, 1), amountMicros: 3_000_000 }))
        .then([renewed(1)]);
    });
  });

  describe('billing periods and area codes', () => {
    it('adds calendar months, clamped to the end of shorter months, without drift', () => {
      expect(addMonths('2026-01-31T10:00:00.000Z', 1)).to.equal('2026-02-28T10:00:00.000Z');
      expect(addMonths('2026-01-31T10:00:00.000Z', 2)).to.equal('2026-03-31T10:00:00.000Z');
      expect(addMonths('2028-01-31T00:00:00.000Z', 1)).to.equal('2028-02-29T00:00:00.000Z');
      expect(addMonths('2026-11-15T00:00:00.000Z', 3)).to.equal('2027-02-15T00:00:00.000Z');
    });
    it('knows the area codes of the US and Canada and refuses others', () => {
      expect(areaCodeProblem('US', '415')).to.equal(null);
      expect(areaCodeProblem('CA', '416')).to.equal(null);
      expect(areaCodeProblem('CA', '415')).to.match(/of US, not CA/);
      expect(areaCodeProblem('US', '999')).to.match(/not an area code/);
      expect(areaCodeProblem('US', '800')).to.match(/not a geographic/);
      expect(areaCodeProblem('US', '41')).to.match(/three digits/);
      expect(AREA_CODES.get('867')?.regions).to.deep.equal(['YT', 'NT', 'NU']);
      expect(areaCodesOf('US').length).to.be.greaterThan(300);
      expect(areaCodesOf('CA').length).to.be.greaterThan(35);
    });
  });

  describe('numbers imported from a carrier (docs/numbers.md#imported-numbers)', () => {
    const imported: PhoneNumberEvent = {
      type: 'NumberImported',
      data: { numberId, accountId: 'acc_1', phoneNumber: '+14155550100', country: 'US', carrierId: 'telnyx', importedAt: now },
    };
    const importIt = (agentId: string | null = null, m = metadata) =>
      cmd('ImportNumber', { phoneNumber: '+14155550100', country: 'US', carrierId: 'telnyx', agentId }, m);

    it('records the number as imported with its carrier: no slot, no purchase, no charge', () =>
      given([]).when(importIt()).then([imported]));
    it('attaches it to the agent named', () =>
      given([])
        .when(importIt('ag_1'))
        .then([imported, attached('ag_1')]));
    it('treats the same import again as a no-op', () => given([imported]).when(importIt()).then([]));
    it('refuses an id already used, by this account or another', () => {
      given(active).when(importIt()).thenThrows('CONCURRENCY_CONFLICT');
      given([imported]).when(importIt(null, other)).thenThrows('CONCURRENCY_CONFLICT');
    });
    it('is then a number of the account like any other: attached, released (nothing upstream to give back)', () => {
      given([imported])
        .when(cmd('AttachToAgent', { agentId: 'ag_2' }))
        .then([attached('ag_2')]);
      given([imported]).when(cmd('RequestRelease', {})).then([releaseRequested]);
      given([imported])
        .when(cmd('AttachToAgent', { agentId: 'ag_2' }, other))
        .thenThrows('PHONE_NUMBER_NOT_FOUND');
    });
    it('is never due for renewal: no month was paid and none is charged', () =>
      given([imported])
        .when(cmd('RecordRenewal', { period: 0, chargeId: monthlyChargeId(numberId, 0), amountMicros: 3_000_000 }))
        .then([]));
  });
});
