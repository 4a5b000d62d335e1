import { accountDecider, accountStream } from '../../domain/account/account.decider.js';
import {
  REGISTRATION_FEE_MICROS,
  type RegistrationCommand,
  type RegistrationDetails,
  type RegistrationState,
  registrationChargeId,
  registrationDecider,
  registrationRequestDecider,
  registrationRequestStream,
  registrationStream,
} from '../../domain/registration/registration.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { AccountCommands } from '../accounts/account-commands.js';
import type { Billing } from '../accounts/billing.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { RegistrationStatus, RegistrationStatusPort } from './registration-status.port.js';

/** The fee as the public API shows it, in cents. */
export const REGISTRATION_FEE_CENTS = REGISTRATION_FEE_MICROS / 10_000;

export type RegistrationOutcome = Readonly<{
  ok: true;
  message: string;
  campaignStatus: RegistrationStatus;
  /** the sub-account registered (opened for it, or the acting sub-account); null for a master account's own */
  subAccountId: string | null;
  /** what this request charged: the fee, or 0 when it repeated a registration already paid for */
  feeCents: number;
}>;

export type RegistrationView = Readonly<{ campaignStatus: RegistrationStatus; message: string; stage: string | null }>;

/** Canonical JSON (keys sorted), so that the same content always has the same fingerprint. */
export const canonicalJson = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonicalJson).join(',')}]`
    : v !== null && typeof v === 'object'
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(v);

/**
 * US A2P 10DLC registration (docs/registration.md): submitting (with the fee, charged once per submission, and a
 * sub-account opened for the registration when asked), and the status that covers an account, read from the
 * event store. `fingerprint` hashes a registration's canonical content (a short hex digest).
 */
export class Registrations implements RegistrationStatusPort {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly billing: Billing,
    private readonly accounts: AccountCommands,
    private readonly fingerprint: (content: string) => string,
  ) {}

  async register(ctx: RequestContext, details: RegistrationDetails, o: { createSubAccount: boolean }): Promise<RegistrationOutcome> {
    const fingerprint = this.fingerprint(canonicalJson(details));
    const me = (await this.exec.state(accountDecider, accountStream(ctx.accountId))).state;
    if (me.status !== 'open') throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
    // a sub-account (selected with X-Sub-Account-Id) is already the dedicated account: it registers itself
    if (me.parentAccountId !== null) return this.submit(ctx, ctx.accountId, ctx.accountId, fingerprint, details, null);
    if (!o.createSubAccount) return this.submit(ctx, ctx.accountId, null, fingerprint, details, null);

    const claimStream = registrationRequestStream(ctx.accountId, fingerprint);
    let subAccountId = (await this.exec.state(registrationRequestDecider, claimStream)).state.subAccountId;
    if (subAccountId === null) {
      // refuse a short balance before anything is recorded (the charge itself still checks, after the account is open)
      await this.billing.assertCanPay(ctx.accountId, REGISTRATION_FEE_MICROS);
      const claimed = await this.exec.execute(
        registrationRequestDecider,
        claimStream,
        { type: 'ClaimRegistrationSubAccount', data: { masterAccountId: ctx.accountId, fingerprint, subAccountId: this.ids.id('acc') } },
        ctx,
      );
      subAccountId = claimed.state.subAccountId!;
    }
    // the same id again is a no-op: a retry after a crash finishes what the first attempt started
    await this.accounts.open(ctx, {
      accountId: subAccountId,
      name: subAccountName(details),
      parentAccountId: ctx.accountId,
      keyName: null,
    });
    return this.submit(ctx, subAccountId, subAccountId, fingerprint, details, ctx.accountId);
  }

  private async submit(
    ctx: RequestContext,
    accountId: string,
    subAccountId: string | null,
    fingerprint: string,
    details: RegistrationDetails,
    requestedBy: string | null,
  ): Promise<RegistrationOutcome> {
    const stream = registrationStream(accountId);
    const { state } = await this.exec.state(registrationDecider, stream);
    if ((state.status === 'pending' || state.status === 'approved') && state.fingerprint === fingerprint)
      return {
        ok: true,
        message: `This registration was already submitted and is ${state.status}; no new fee was charged.`,
        campaignStatus: state.status,
        subAccountId,
        feeCents: 0,
      };
    const submission = state.status === 'none' ? 1 : state.submission + 1;
    const chargeId = registrationChargeId(accountId, submission);
    const cmd = {
      type: 'SubmitRegistration',
      data: { accountId, submission, fingerprint, details, feeMicros: REGISTRATION_FEE_MICROS, chargeId, requestedBy },
    } as const satisfies CommandInput<RegistrationCommand>;
    // the decider's refusals (409) come before the fee: the same decision, on the state just read
    registrationDecider.decide({ ...cmd, metadata: { now: this.exec.now(), accountId } }, state);
    // one charge per submission: a retry, or a concurrent request for the same submission, finds it made
    await this.billing.charge(
      ctx,
      accountId,
      {
        chargeId,
        amountMicros: REGISTRATION_FEE_MICROS,
        kind: 'a2p_registration',
        description: 'US A2P 10DLC registration fee',
        reference: accountId,
      },
      { readYourWrites: true }, // the fee shows in the balance once this answers
    );
    // waits for the read model the sandbox review reads, so a registration is in its queue once this answers
    const r = await this.exec.execute(registrationDecider, stream, cmd, ctx, { accountId, readYourWrites: true });
    return {
      ok: true,
      message: 'Registration submitted; it is pending carrier review. GET /v1/register/status to follow it.',
      campaignStatus: statusOf(r.state),
      subAccountId,
      feeCents: REGISTRATION_FEE_CENTS,
    };
  }

  /** The registration that covers `accountId`: its own, or (a sub-account without one) its master's. */
  private async covering(accountId: string): Promise<{ state: RegistrationState; viaMaster: boolean }> {
    const own = (await this.exec.state(registrationDecider, registrationStream(accountId))).state;
    if (own.status !== 'none') return { state: own, viaMaster: false };
    const master = await this.billing.billingAccountOf(accountId);
    if (master === accountId) return { state: own, viaMaster: false };
    const theirs = (await this.exec.state(registrationDecider, registrationStream(master))).state;
    return { state: theirs, viaMaster: theirs.status !== 'none' };
  }

  async statusOf(accountId: string): Promise<RegistrationStatus> {
    return statusOf((await this.covering(accountId)).state);
  }

  async view(accountId: string): Promise<RegistrationView> {
    const { state, viaMaster } = await this.covering(accountId);
    const v = viewOf(state);
    return viaMaster ? { ...v, message: `Covered by the master account's registration. ${v.message}` } : v;
  }

  /** Sandbox review and operators: reject the account's pending registration (a no-op once decided). */
  async reject(ctx: RequestContext, accountId: string, reason: string): Promise<RegistrationView> {
    const { state } = await this.exec.state(registrationDecider, registrationStream(accountId));
    const submission = state.status === 'none' ? 0 : state.submission;
    await this.exec.execute(
      registrationDecider,
      registrationStream(accountId),
      { type: 'RejectRegistration', data: { accountId, submission, reason } },
      ctx,
      { accountId },
    );
    return this.view(accountId);
  }

  /** Sandbox control: approve the account's pending registration now. */
  async approveNow(ctx: RequestContext, accountId: string): Promise<RegistrationView> {
    const { state } = await this.exec.state(registrationDecider, registrationStream(accountId));
    await this.approve(ctx, accountId, state.status === 'none' ? 0 : state.submission);
    return this.view(accountId);
  }

  /** Approve one submission (the sandbox review); a no-op once decided or superseded. */
  async approve(ctx: RequestContext, accountId: string, submission: number): Promise<boolean> {
    const r = await this.exec.execute(
      registrationDecider,
      registrationStream(accountId),
      { type: 'ApproveRegistration', data: { accountId, submission } },
      ctx,
      { accountId },
    );
    return r.events.length > 0;
  }
}

const statusOf = (s: RegistrationState): RegistrationStatus => s.status;

function viewOf(s: RegistrationState): RegistrationView {
  switch (s.status) {
    case 'none':
      return { campaignStatus: 'none', message: 'No registration submitted. POST /v1/register to register for US SMS.', stage: null };
    case 'pending':
      return { campaignStatus: 'pending', message: 'Registration is under review.', stage: 'carrier_review' };
    case 'approved':
      return { campaignStatus: 'approved', message: 'Registration approved. The account is ready to send US SMS.', stage: 'approved' };
    case 'rejected':
      return {
        campaignStatus: 'rejected',
        message: `Registration rejected: ${s.reason ?? 'no reason given'}. Fix it and POST /v1/register again.`,
        stage: 'rejected',
      };
  }
}

const subAccountName = (d: RegistrationDetails) =>
  `10DLC: ${d.brandName ?? d.businessName ?? `${d.firstName} ${d.lastName}`}`.slice(0, 100);
