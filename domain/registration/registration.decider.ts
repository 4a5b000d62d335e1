import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * US A2P 10DLC registration of one account's brand and campaign, on `registration-<accountId>`
 * (docs/registration.md): Submitted, then Approved or Rejected; a rejected registration may be submitted again.
 */
/** an account's US A2P 10DLC registration (docs/registration.md) */
export const registrationStream = (accountId: string) => `registration-${accountId}`;

/** The one-time registration fee: $25.00, in micro-dollars. */
export const REGISTRATION_FEE_MICROS = 25_000_000;

/** The fee of submission `submission` of an account's registration: one charge per submission, whatever the retries. */
export const registrationChargeId = (accountId: string, submission: number) => `a2p_registration:${accountId}:${submission}`;

export const REGISTRATION_TYPES = ['sole_proprietor', 'standard_brand'] as const;
export const ORGANIZATION_TYPES = [
  'sole_proprietor',
  'private_corporation',
  'public_corporation',
  'llc',
  'partnership',
  'non_profit',
  'co_op',
  'government',
] as const;
export const CONTACT_TITLES = ['ceo', 'cfo', 'cto', 'coo', 'vp', 'gm', 'director', 'other'] as const;
export const USE_CASES = [
  'account_notification',
  'customer_care',
  'delivery_notification',
  'fraud_alert',
  'higher_education',
  'marketing',
  'polling_voting',
  'public_service_announcement',
  'security_alert',
  'two_factor_authentication',
] as const;
export const VOLUMES = ['low', 'high'] as const;
export const CAMPAIGN_INCLUDES = ['links', 'phone_numbers', 'age_gated', 'direct_lending'] as const;

export type RegistrationType = (typeof REGISTRATION_TYPES)[number];

/** What the account registers: its brand, contact and campaign, as submitted (validated at the edge). */
export type RegistrationDetails = Readonly<{
  registrationType: RegistrationType;
  firstName: string;
  lastName: string;
  email: string;
  phoneNumber: string;
  businessName: string | null;
  brandName: string | null;
  organizationType: (typeof ORGANIZATION_TYPES)[number] | null;
  contactTitle: (typeof CONTACT_TITLES)[number] | null;
  contactTitleOther: string | null;
  ein: string | null;
  websiteUrl: string | null;
  industry: string | null;
  businessRegions: readonly string[];
  streetAddress: string;
  streetAddress2: string | null;
  city: string;
  state: string;
  zipCode: string;
  country: string;
  plannedNumbers: number;
  description: string;
  useCases: readonly (typeof USE_CASES)[number][];
  volume: (typeof VOLUMES)[number];
  messageSamples: readonly string[];
  consentFlow: string;
  privacyPolicyUrl: string | null;
  termsOfServiceUrl: string | null;
  optInImageUrl: string;
  includes: readonly (typeof CAMPAIGN_INCLUDES)[number][];
  linkSample: string | null;
}>;

export type RegistrationCommand =
  /**
   * Submission `submission` (1 for the first, n + 1 after n) of the registration. `fingerprint` identifies the
   * request's content: the same content again while it is pending or approved is a retry (no-op); different
   * content is refused (409) until a rejection.
   */
  | Command<
      'SubmitRegistration',
      {
        accountId: string;
        submission: number;
        fingerprint: string;
        details: RegistrationDetails;
        feeMicros: number;
        chargeId: string;
        /** the master account that asked for this registration when it opened the account for it */
        requestedBy: string | null;
      }
    >
  | Command<'ApproveRegistration', { accountId: string; submission: number }>
  | Command<'RejectRegistration', { accountId: string; submission: number; reason: string }>;

export type RegistrationEvent =
  | Event<
      'RegistrationSubmitted',
      {
        accountId: string;
        submission: number;
        fingerprint: string;
        details: RegistrationDetails;
        feeMicros: number;
        chargeId: string;
        requestedBy: string | null;
        submittedAt: string;
      }
    >
  | Event<'RegistrationApproved', { accountId: string; submission: number; approvedAt: string }>
  | Event<'RegistrationRejected', { accountId: string; submission: number; reason: string; rejectedAt: string }>;

export const registrationEventTypes = ['RegistrationSubmitted', 'RegistrationApproved', 'RegistrationRejected'] as const;

export type RegistrationState =
  | { status: 'none' }
  | {
      status: 'pending' | 'approved' | 'rejected';
      accountId: string;
      submission: number;
      fingerprint: string;
      registrationType: RegistrationType;
      submittedAt: string;
      decidedAt: string | null;
      reason: string | null;
    };

export const registrationDecider: Decider<RegistrationCommand, RegistrationEvent, RegistrationState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    switch (cmd.type) {
      case 'SubmitRegistration': {
        if (s.status === 'pending' || s.status === 'approved') {
          if (s.fingerprint === cmd.data.fingerprint) return []; // the same registration again: a retry
          throw s.status === 'pending'
            ? new DomainError('REGISTRATION_IN_REVIEW', 'A registration of this account is already under review')
            : new DomainError('REGISTRATION_ALREADY_APPROVED', 'This account already has an approved registration');
        }
        const next = s.status === 'none' ? 1 : s.submission + 1;
        // the fee was charged for `cmd.data.submission`: another submission slipped in since it was read
        if (cmd.data.submission !== next)
          throw new DomainError('CONCURRENCY_CONFLICT', 'The registration changed while it was submitted; retry');
        return [{ type: 'RegistrationSubmitted', data: { ...cmd.data, submittedAt: cmd.metadata.now } }];
      }
      case 'ApproveRegistration':
        if (s.status === 'none') throw new DomainError('REGISTRATION_NOT_FOUND', 'No registration to approve');
        if (s.status !== 'pending' || s.submission !== cmd.data.submission) return []; // decided already, or an older submission
        return [
          { type: 'RegistrationApproved', data: { accountId: cmd.data.accountId, submission: s.submission, approvedAt: cmd.metadata.now } },
        ];
      case 'RejectRegistration':
        if (s.status === 'none') throw new DomainError('REGISTRATION_NOT_FOUND', 'No registration to reject');
        if (s.status !== 'pending' || s.submission !== cmd.data.submission) return [];
        return [
          {
            type: 'RegistrationRejected',
            data: { accountId: cmd.data.accountId, submission: s.submission, reason: cmd.data.reason, rejectedAt: cmd.metadata.now },
          },
        ];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'RegistrationSubmitted':
        return {
          status: 'pending',
          accountId: e.data.accountId,
          submission: e.data.submission,
          fingerprint: e.data.fingerprint,
          registrationType: e.data.details.registrationType,
          submittedAt: e.data.submittedAt,
          decidedAt: null,
          reason: null,
        };
      case 'RegistrationApproved':
        return s.status === 'none' ? s : { ...s, status: 'approved', decidedAt: e.data.approvedAt };
      case 'RegistrationRejected':
        return s.status === 'none' ? s : { ...s, status: 'rejected', decidedAt: e.data.rejectedAt, reason: e.data.reason };
      default:
        return assertNever(e);
    }
  },
};

/**
 * The sub-account a master account opened for one registration request, on
 * `registration_request-<masterId>_<fingerprint>`: a retried request finds the sub-account it opened the first
 * time instead of opening (and paying for) another one (docs/registration.md, "Retries").
 */
export const registrationRequestStream = (masterAccountId: string, fingerprint: string) =>
  `registration_request-${masterAccountId}_${fingerprint}`;

export type RegistrationRequestCommand = Command<
  'ClaimRegistrationSubAccount',
  { masterAccountId: string; fingerprint: string; subAccountId: string }
>;
export type RegistrationRequestEvent = Event<
  'RegistrationSubAccountClaimed',
  { masterAccountId: string; fingerprint: string; subAccountId: string; claimedAt: string }
>;
export type RegistrationRequestState = { subAccountId: string | null };

export const registrationRequestDecider: Decider<RegistrationRequestCommand, RegistrationRequestEvent, RegistrationRequestState> = {
  initialState: () => ({ subAccountId: null }),
  decide: (cmd, s) =>
    s.subAccountId !== null ? [] : [{ type: 'RegistrationSubAccountClaimed', data: { ...cmd.data, claimedAt: cmd.metadata.now } }],
  evolve: (s, e) => (s.subAccountId === null ? { subAccountId: e.data.subAccountId } : s),
};
