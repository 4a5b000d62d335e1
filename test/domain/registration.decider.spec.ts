import {
  type RegistrationCommand,
  type RegistrationDetails,
  type RegistrationEvent,
  registrationDecider,
  registrationRequestDecider,
} from '../../domain/registration/registration.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(registrationDecider);
const metadata = { now: '2026-01-01T00:00:00.000Z', accountId: 'acc_1' };

const details: RegistrationDetails = {
  registrationType: 'sole_proprietor',
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  phoneNumber: '+15551234567',
  businessName: null,
  brandName: 'Acme',
  organizationType: null,
  contactTitle: null,
  contactTitleOther: null,
  ein: null,
  websiteUrl: null,
  industry: null,
  businessRegions: ['usa_and_canada'],
  streetAddress: '1 Main St',
  streetAddress2: null,
  city: 'Springfield',
  state: 'IL',
  zipCode: '62701',
  country: 'US',
  plannedNumbers: 1,
  description: 'We send appointment reminders to our customers who opted in on our site.',
  useCases: ['account_notification'],
  volume: 'low',
  messageSamples: ['Acme: your appointment is tomorrow at 10am.', 'Acme: reply STOP to opt out of reminders.'],
  consentFlow: 'Customers tick an unchecked consent box on the booking form at acme.example.',
  privacyPolicyUrl: null,
  termsOfServiceUrl: null,
  optInImageUrl: 'https://acme.example/opt-in.png',
  includes: [],
  linkSample: null,
};

const submit = (submission: number, fingerprint = 'fp1'): RegistrationCommand => ({
  type: 'SubmitRegistration',
  data: {
    accountId: 'acc_1',
    submission,
    fingerprint,
    details,
    feeMicros: 25_000_000,
    chargeId: `a2p_registration:acc_1:${submission}`,
    requestedBy: null,
  },
  metadata,
});
const submitted = (submission: number, fingerprint = 'fp1'): RegistrationEvent => ({
  type: 'RegistrationSubmitted',
  data: {
    ...(submit(submission, fingerprint).data as Extract<RegistrationCommand, { type: 'SubmitRegistration' }>['data']),
    submittedAt: metadata.now,
  },
});
const approve = (submission: number): RegistrationCommand => ({
  type: 'ApproveRegistration',
  data: { accountId: 'acc_1', submission },
  metadata,
});
const reject = (submission: number): RegistrationCommand => ({
  type: 'RejectRegistration',
  data: { accountId: 'acc_1', submission, reason: 'brand not verified' },
  metadata,
});
const approved = (submission: number): RegistrationEvent => ({
  type: 'RegistrationApproved',
  data: { accountId: 'acc_1', submission, approvedAt: metadata.now },
});
const rejected = (submission: number): RegistrationEvent => ({
  type: 'RegistrationRejected',
  data: { accountId: 'acc_1', submission, reason: 'brand not verified', rejectedAt: metadata.now },
});

describe('Registration decider', () => {
  it('submits the first registration', () =>
    given([])
      .when(submit(1))
      .then([submitted(1)]));
  it('treats the same registration again while pending as a retry', () =>
    given([submitted(1)])
      .when(submit(1))
      .then([]));
  it('treats the same registration again once approved as a retry', () =>
    given([submitted(1), approved(1)])
      .when(submit(2))
      .then([]));
  it('refuses a different registration while one is under review', () =>
    given([submitted(1)])
      .when(submit(2, 'fp2'))
      .thenThrows('REGISTRATION_IN_REVIEW'));
  it('refuses a different registration once one is approved', () =>
    given([submitted(1), approved(1)])
      .when(submit(2, 'fp2'))
      .thenThrows('REGISTRATION_ALREADY_APPROVED'));
  it('accepts a new submission after a rejection, even with the same content', () =>
    given([submitted(1), rejected(1)])
      .when(submit(2))
      .then([submitted(2)]));
  it('refuses a submission whose number (and fee) no longer matches the stream', () =>
    given([submitted(1), rejected(1)])
      .when(submit(1))
      .thenThrows('CONCURRENCY_CONFLICT'));
  it('refuses a first submission numbered other than 1', () => given([]).when(submit(2)).thenThrows('CONCURRENCY_CONFLICT'));

  it('approves a pending registration', () =>
    given([submitted(1)])
      .when(approve(1))
      .then([approved(1)]));
  it('approves once: a repeated approval is a no-op', () =>
    given([submitted(1), approved(1)])
      .when(approve(1))
      .then([]));
  it('does not approve a rejected registration', () =>
    given([submitted(1), rejected(1)])
      .when(approve(1))
      .then([]));
  it('ignores an approval of an older submission', () =>
    given([submitted(1), rejected(1), submitted(2)])
      .when(approve(1))
      .then([]));
  it('refuses to approve when nothing was submitted', () => given([]).when(approve(1)).thenThrows('REGISTRATION_NOT_FOUND'));

  it('rejects a pending registration', () =>
    given([submitted(1)])
      .when(reject(1))
      .then([rejected(1)]));
  it('does not reject an approved registration', () =>
    given([submitted(1), approved(1)])
      .when(reject(1))
      .then([]));
  it('refuses to reject when nothing was submitted', () => given([]).when(reject(1)).thenThrows('REGISTRATION_NOT_FOUND'));
});

describe('Registration request decider (the sub-account opened for a request)', () => {
  const claim = (subAccountId: string) =>
    ({ type: 'ClaimRegistrationSubAccount', data: { masterAccountId: 'acc_m', fingerprint: 'fp1', subAccountId }, metadata }) as const;
  const claimed = (subAccountId: string) =>
    ({
      type: 'RegistrationSubAccountClaimed',
      data: { masterAccountId: 'acc_m', fingerprint: 'fp1', subAccountId, claimedAt: metadata.now },
    }) as const;
  const spec = deciderSpec(registrationRequestDecider);
  it('claims a sub-account id for the first request', () =>
    spec
      .given([])
      .when(claim('acc_s1'))
      .then([claimed('acc_s1')]));
  it('keeps the first claim when the request is retried', () =>
    spec
      .given([claimed('acc_s1')])
      .when(claim('acc_s2'))
      .then([]));
});
