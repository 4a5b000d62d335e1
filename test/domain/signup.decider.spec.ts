import { type SignUpCommand, type SignUpEvent, type SignUpPlan, signUpDecider } from '../../domain/signup/signup.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(signUpDecider);
const t0 = '2026-01-01T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(t0) + seconds * 1000).toISOString();
const plan: SignUpPlan = {
  userId: 'usr_1',
  projectId: 'prj_1',
  accountId: 'acc_1',
  agentId: 'agt_1',
  numberId: 'pn_1',
  keyId: 'key_1',
  keyPrefix: 'avp_abcdef',
  keyHash: 'kh',
};
const requested: SignUpEvent = {
  type: 'SignUpRequested',
  data: {
    verificationId: 'ver_1',
    email: 'ada@example.com',
    agentName: 'Ada',
    codeHash: 'good',
    clientAddress: '127.0.0.1',
    expiresAt: at(600),
    requestedAt: t0,
  },
};
const verify = (codeHash: string, seconds = 60, p: SignUpPlan = plan): SignUpCommand => ({
  type: 'VerifySignUp',
  data: { verificationId: 'ver_1', codeHash, source: null, plan: p },
  metadata: { now: at(seconds), accountId: 'signup' },
});
const rejected = (n: number): SignUpEvent => ({
  type: 'SignUpCodeRejected',
  data: { verificationId: 'ver_1', wrongTries: n, rejectedAt: at(60) },
});
const verified: SignUpEvent = {
  type: 'SignUpVerified',
  data: { verificationId: 'ver_1', email: 'ada@example.com', agentName: 'Ada', source: null, plan, verifiedAt: at(60) },
};

describe('SignUp decider', () => {
  it('records a request with only the hash of the code and a 10-minute expiry', () =>
    given([])
      .when({
        type: 'RequestSignUp',
        data: { verificationId: 'ver_1', email: 'ada@example.com', agentName: 'Ada', codeHash: 'good', clientAddress: '127.0.0.1' },
        metadata: { now: t0, accountId: 'signup' },
      })
      .then([requested]));
  it('verifies the right code and fixes the provisioning plan', () => given([requested]).when(verify('good')).then([verified]));
  it('counts a wrong code', () =>
    given([requested, rejected(1)])
      .when(verify('bad'))
      .then([rejected(2)]));
  it('locks after 5 wrong codes, even for the right one', () =>
    given([requested, rejected(1), rejected(2), rejected(3), rejected(4), rejected(5)])
      .when(verify('good'))
      .thenThrows('SIGNUP_LOCKED'));
  it('refuses an expired code', () => given([requested]).when(verify('good', 601)).thenThrows('SIGNUP_CODE_EXPIRED'));
  it('keeps the first plan when verify is repeated: no second account', () =>
    given([requested, verified])
      .when(verify('good', 90, { ...plan, accountId: 'acc_2' }))
      .then([]));
  it('does not know an unknown verification id', () => given([]).when(verify('good')).thenThrows('SIGNUP_NOT_FOUND'));
  it('completes once', () => {
    const complete: SignUpCommand = {
      type: 'CompleteSignUp',
      data: { verificationId: 'ver_1', keyDelivered: true },
      metadata: { now: at(70), accountId: 'signup' },
    };
    const completed: SignUpEvent = {
      type: 'SignUpCompleted',
      data: { verificationId: 'ver_1', accountId: 'acc_1', keyDelivered: true, completedAt: at(70) },
    };
    given([requested, verified]).when(complete).then([completed]);
    given([requested, verified, completed]).when(complete).then([]);
  });
  it('refuses to verify a failed sign-up', () =>
    given([requested, verified, { type: 'SignUpFailed', data: { verificationId: 'ver_1', reason: 'no numbers', failedAt: at(90) } }])
      .when(verify('good'))
      .thenThrows('SIGNUP_FAILED'));
});

describe('SignUp decider: provisioning by the sign-up process', () => {
  const cmd = (type: SignUpCommand['type'], data: Record<string, unknown> = {}, seconds = 70) =>
    ({ type, data: { verificationId: 'ver_1', ...data }, metadata: { now: at(seconds), accountId: 'signup' } }) as SignUpCommand;
  const stepFailed = (failures: number): SignUpEvent => ({
    type: 'SignUpStepFailed',
    data: { verificationId: 'ver_1', code: 'SMS_PROVIDER_ERROR', message: 'carrier down', failures, failedAt: at(70) },
  });
  const completed: SignUpEvent = {
    type: 'SignUpCompleted',
    data: { verificationId: 'ver_1', accountId: 'acc_1', keyDelivered: false, completedAt: at(70) },
  };

  it('counts refused steps in a row, and only while the sign-up is verified', () => {
    given([requested, verified])
      .when(cmd('RecordStepFailed', { code: 'SMS_PROVIDER_ERROR', message: 'carrier down' }))
      .then([stepFailed(1)]);
    given([requested, verified, stepFailed(1)])
      .when(cmd('RecordStepFailed', { code: 'SMS_PROVIDER_ERROR', message: 'carrier down' }))
      .then([stepFailed(2)]);
    given([requested, verified, completed])
      .when(cmd('RecordStepFailed', { code: 'SMS_PROVIDER_ERROR', message: 'carrier down' }))
      .then([]);
  });
  it('asks for a retry of a verified sign-up only, naming the failures so far', () => {
    given([requested, verified, stepFailed(1)])
      .when(cmd('RetrySignUp'))
      .then([{ type: 'SignUpRetryRequested', data: { verificationId: 'ver_1', failures: 1, requestedAt: at(70) } }]);
    given([requested, verified, completed]).when(cmd('RetrySignUp')).then([]);
    given([requested]).when(cmd('RetrySignUp')).then([]);
  });
  it('records once that the first verify handed the key out', () => {
    const delivered: SignUpEvent = { type: 'SignUpKeyDelivered', data: { verificationId: 'ver_1', deliveredAt: at(70) } };
    given([requested, verified, completed]).when(cmd('RecordKeyDelivered')).then([delivered]);
    given([requested, verified, completed, delivered]).when(cmd('RecordKeyDelivered')).then([]);
    given([requested]).when(cmd('RecordKeyDelivered')).then([]);
  });
});
