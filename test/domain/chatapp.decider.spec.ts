import { expect } from 'chai';
import { type ChatappNumberCommand, type ChatappNumberEvent, chatappNumberDecider } from '../../domain/chatapp/chatapp-number.decider.js';
import { type ConnectionCommand, type ConnectionEvent, connectionDecider } from '../../domain/chatapp/connection.decider.js';
import { chatappFailure } from '../../domain/chatapp/platform-codes.js';
import { type SessionSend, type TemplateUse, windowExpiresAt } from '../../domain/chatapp/session-window.js';
import { chatappSettingsDecider } from '../../domain/chatapp/settings.decider.js';
import { type TemplateCommand, type TemplateContent, type TemplateEvent, templateDecider } from '../../domain/chatapp/template.decider.js';
import { parseTemplateBody, renderTemplate, variablesMismatch } from '../../domain/chatapp/template-body.js';
import { type ConversationCommand, type ConversationEvent, conversationDecider } from '../../domain/conversation/conversation.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { deciderSpec } from '../support/decider-spec.js';

const t0 = '2026-03-01T10:00:00.000Z';
const hours = (h: number, t = t0) => new Date(Date.parse(t) + h * 3_600_000).toISOString();
const acc = 'acc_1';

describe('chat-app session rules (the conversation decides: docs/chatapp.md#the-24-hour-window)', () => {
  const { given } = deciderSpec(conversationDecider);
  const conversationId = 'conv_chat';
  const party = {
    numberId: 'chn_1',
    phoneNumber: '+447700900501',
    agentId: 'agt_1',
    participant: '+447700900810',
    participants: null,
    groupName: null,
  };
  const content = (messageId: string, body = 'hi') => ({
    messageId,
    body,
    mediaUrls: [],
    channel: 'chatapp' as const,
    encoding: null,
    segments: null,
  });
  const approved = (over: Partial<TemplateUse> = {}): TemplateUse => ({
    name: 'opening_hours',
    language: 'en_US',
    status: 'approved',
    variables: { format: 'positional', count: 2 },
    values: ['Ada', '9 to 5'],
    ...over,
  });
  const send = (messageId: string, now: string, template: TemplateUse | null = null): ConversationCommand => ({
    type: 'RecordOutbound',
    data: {
      conversationId,
      ...party,
      ...content(messageId),
      replyToMessageId: null,
      sendStyle: null,
      kind: 'message',
      conversationChannel: 'chatapp',
      session: { windowHours: 24, template } satisfies SessionSend,
    },
    metadata: { now, accountId: acc },
  });
  const receive = (messageId: string, at: string): ConversationCommand => ({
    type: 'RecordInbound',
    data: {
      conversationId,
      ...party,
      ...content(messageId),
      from: party.participant,
      carrierMessageId: `p_${messageId}`,
      receivedAt: at,
      keyword: null,
      conversationChannel: 'chatapp',
    },
    metadata: { now: at, accountId: acc },
  });
  /** the events a series of commands records, each decided on what the ones before recorded */
  const history = (...cmds: ConversationCommand[]): ConversationEvent[] => {
    const evs: ConversationEvent[] = [];
    for (const c of cmds)
      evs.push(...conversationDecider.decide(c, evs.reduce(conversationDecider.evolve, conversationDecider.initialState())));
    return evs;
  };
  const codeOf = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e instanceof DomainError ? { code: e.code, message: e.message } : null;
    }
    return null;
  };
  const decide = (past: ConversationEvent[], c: ConversationCommand) => () =>
    conversationDecider.decide(c, past.reduce(conversationDecider.evolve, conversationDecider.initialState()));

  it('starts a chat conversation on the chatapp channel when the person writes', () => {
    const evs = history(receive('m1', t0));
    expect(evs[0]).to.deep.include({ type: 'ConversationStarted' });
    expect(evs[0]!.data).to.include({ channel: 'chatapp' });
  });

  it('accepts a free-form message inside the 24 hours after the last inbound message', () => {
    const out = decide(history(receive('m1', t0)), send('o1', hours(23.99)))();
    expect(out.map((e) => e.type)).to.deep.equal(['OutboundMessageAccepted']);
    expect(out[0]!.data).to.include({ channel: 'chatapp', reengagement: false });
  });

  it('refuses a free-form message 24 hours after the last inbound message, with platform code 131047', () => {
    given(history(receive('m1', t0)))
      .when(send('o1', hours(24)))
      .thenThrows('CHATAPP_SEND_REFUSED');
    expect(codeOf(decide(history(receive('m1', t0)), send('o1', hours(25))))?.message).to.contain('131047');
  });

  it('refuses a free-form message to someone who never wrote (131047), a conversation started by the business included', () => {
    given([]).when(send('o1', t0)).thenThrows('CHATAPP_SEND_REFUSED');
    const started = history(send('o1', t0, approved()));
    given(started)
      .when(send('o2', hours(1)))
      .thenThrows('CHATAPP_SEND_REFUSED');
  });

  it('opens the window again from the newest inbound message', () => {
    const evs = history(receive('m1', t0), receive('m2', hours(30)));
    expect(decide(evs, send('o1', hours(53)))().map((e) => e.type)).to.deep.equal(['OutboundMessageAccepted']);
    given(evs)
      .when(send('o1', hours(54)))
      .thenThrows('CHATAPP_SEND_REFUSED');
    // an inbound message reported late (an older time) does not move the window back
    const late = history(receive('m1', t0), receive('m2', hours(30)), receive('m3', hours(1)));
    expect(decide(late, send('o1', hours(53)))().length).to.equal(1);
  });

  it('sends an approved template at any time, recording the template and its values', () => {
    const out = decide(history(receive('m1', t0)), send('o1', hours(100), approved()))();
    expect(out.map((e) => e.type)).to.deep.equal(['OutboundMessageAccepted']);
    expect(out[0]!.data).to.deep.include({ template: { name: 'opening_hours', language: 'en_US', values: ['Ada', '9 to 5'] } });
    expect(decide([], send('o1', t0, approved()))().map((e) => e.type)).to.deep.equal(['ConversationStarted', 'OutboundMessageAccepted']);
  });

  it('refuses a template in review or rejected (CHATAPP_TEMPLATE_NOT_APPROVED), even inside the window', () => {
    given(history(receive('m1', t0)))
      .when(send('o1', hours(1), approved({ status: 'pending' })))
      .thenThrows('CHATAPP_TEMPLATE_NOT_APPROVED');
    given([])
      .when(send('o1', t0, approved({ status: 'rejected' })))
      .thenThrows('CHATAPP_TEMPLATE_NOT_APPROVED');
  });

  it('refuses values that do not fit the template with platform code 100', () => {
    const cases: Partial<TemplateUse>[] = [
      { values: ['only one'] },
      { values: { a: 'b' } },
      { values: null },
      { variables: { format: 'named', names: ['order_id', 'name'] }, values: ['1', '2'] },
      { variables: { format: 'named', names: ['order_id', 'name'] }, values: { order_id: '1' } },
      { variables: { format: 'named', names: ['order_id'] }, values: { order_id: '1', extra: 'x' } },
      { variables: { format: 'none' }, values: ['x'] },
    ];
    for (const c of cases) {
      given([])
        .when(send('o1', t0, approved(c)))
        .thenThrows('CHATAPP_SEND_REFUSED');
      expect(codeOf(decide([], send('o1', t0, approved(c))))?.message, JSON.stringify(c)).to.contain('Chat platform error 100');
    }
    const named = approved({ variables: { format: 'named', names: ['order_id'] }, values: { order_id: '42' } });
    expect(decide([], send('o1', t0, named))().length).to.equal(2);
  });

  it('applies no text caps to chat sends (a fourth message to someone who never replied is a template matter only)', () => {
    const evs = history(send('o1', t0, approved()), send('o2', t0, approved()), send('o3', t0, approved()));
    expect(decide(evs, send('o4', t0, approved()))().map((e) => e.type)).to.deep.equal(['OutboundMessageAccepted']);
  });

  it('gives the window end as 24 hours after the last inbound message', () => {
    expect(windowExpiresAt(t0)).to.equal(hours(24));
    expect(windowExpiresAt(null)).to.equal(null);
  });
});

describe('template bodies', () => {
  it('reads positional, named and no variables, and refuses mixed, gapped and malformed ones', () => {
    expect(parseTemplateBody('Hi {{1}}, at {{2}}; again {{1}}')).to.deep.equal({ ok: true, variables: { format: 'positional', count: 2 } });
    expect(parseTemplateBody('Order {{ order_id }} for {{name}} ({{order_id}})')).to.deep.equal({
      ok: true,
      variables: { format: 'named', names: ['order_id', 'name'] },
    });
    expect(parseTemplateBody('No variables')).to.deep.equal({ ok: true, variables: { format: 'none' } });
    for (const bad of ['{{1}} and {{name}}', 'Hi {{2}}', 'Hi {{1}} {{3}}', 'Hi {{Name}}', 'Hi {{first-name}}', 'Hi {{}}'])
      expect(parseTemplateBody(bad).ok, bad).to.equal(false);
  });

  it('fills the values in, leaving a placeholder without a value as written', () => {
    expect(renderTemplate('Hi {{1}}, at {{2}}', ['Ada', '9'])).to.equal('Hi Ada, at 9');
    expect(renderTemplate('Order {{order_id}} {{name}}', { order_id: '42' })).to.equal('Order 42 {{name}}');
    expect(renderTemplate('Hi {{1}}', null)).to.equal('Hi {{1}}');
  });

  it('says why values do not fit', () => {
    expect(variablesMismatch({ format: 'positional', count: 2 }, ['a', 'b'])).to.equal(null);
    expect(variablesMismatch({ format: 'positional', count: 2 }, ['a'])).to.contain('2 positional variables and 1 was sent');
    expect(variablesMismatch({ format: 'named', names: ['a', 'b'] }, { a: '1', c: '2' })).to.contain('missing: b; unknown: c');
    expect(variablesMismatch({ format: 'none' }, [])).to.equal(null);
  });
});

describe('platform codes as message failures', () => {
  it('words each code of the platform with its meaning; an unknown code is not retryable', () => {
    expect(chatappFailure(131026)).to.deep.equal({
      failureReason: 'Chat platform error 131026: the recipient cannot receive messages; do not retry.',
      errorCode: '131026',
      failureCategory: 'recipient',
      retryable: false,
    });
    expect(chatappFailure(131042).failureCategory).to.equal('configuration');
    expect(chatappFailure(999, 'something new')).to.deep.equal({
      failureReason: 'Chat platform error 999: something new.',
      errorCode: '999',
      failureCategory: 'unknown',
      retryable: false,
    });
  });
});

describe('Connection decider', () => {
  const { given } = deciderSpec(connectionDecider);
  const m = (now = t0, accountId = acc) => ({ now, accountId });
  const request = (token = 'enc:v1:x', now = t0): ConnectionCommand => ({
    type: 'RequestConnection',
    data: { connectionId: 'chc_1', businessAccountId: 'ba_1', accessTokenSealed: token },
    metadata: m(now),
  });
  const requested = (attempt: number, token = 'enc:v1:x'): ConnectionEvent => ({
    type: 'ChatappConnectionRequested',
    data: { connectionId: 'chc_1', accountId: acc, businessAccountId: 'ba_1', accessTokenSealed: token, attempt, requestedAt: t0 },
  });
  const verified = (attempt: number): ConnectionCommand => ({
    type: 'RecordConnectionVerified',
    data: { connectionId: 'chc_1', attempt, businessName: 'Coffee' },
    metadata: m(),
  });
  const activated = (attempt: number): ConnectionEvent => ({
    type: 'ChatappConnectionActivated',
    data: { connectionId: 'chc_1', attempt, businessName: 'Coffee', activatedAt: t0 },
  });

  it('records a request with the sealed token, attempt 1', () =>
    given([])
      .when(request())
      .then([requested(1)]));
  it('activates on the platform verifying that attempt', () =>
    given([requested(1)])
      .when(verified(1))
      .then([activated(1)]));
  it('ignores the outcome of an earlier attempt', () =>
    given([requested(1), requested(2, 'enc:v1:y')])
      .when(verified(1))
      .then([]));
  it('fails on a refusal, with the code and the words', () =>
    given([requested(1)])
      .when({
        type: 'RecordConnectionRefused',
        data: { connectionId: 'chc_1', attempt: 1, platformCode: 190, reason: 'expired' },
        metadata: m(),
      })
      .then([
        {
          type: 'ChatappConnectionFailed',
          data: { connectionId: 'chc_1', attempt: 1, platformCode: 190, reason: 'expired', failedAt: t0 },
        },
      ]));
  it('verifies a new token again when connected again', () =>
    given([requested(1), activated(1)])
      .when(request('enc:v1:z'))
      .then([requested(2, 'enc:v1:z')]));
  it('deletes; a second delete or another account answers CHATAPP_CONNECTION_NOT_FOUND', () => {
    const del: ConnectionCommand = { type: 'DeleteConnection', data: { connectionId: 'chc_1' }, metadata: m() };
    given([requested(1), activated(1)])
      .when(del)
      .then([{ type: 'ChatappConnectionDeleted', data: { connectionId: 'chc_1', businessAccountId: 'ba_1', deletedAt: t0 } }]);
    given([requested(1), { type: 'ChatappConnectionDeleted', data: { connectionId: 'chc_1', businessAccountId: 'ba_1', deletedAt: t0 } }])
      .when(del)
      .thenThrows('CHATAPP_CONNECTION_NOT_FOUND');
    given([requested(1)])
      .when({ ...del, metadata: m(t0, 'acc_2') })
      .thenThrows('CHATAPP_CONNECTION_NOT_FOUND');
    given([]).when(del).thenThrows('CHATAPP_CONNECTION_NOT_FOUND');
  });
});

describe('Chat-app number decider', () => {
  const { given } = deciderSpec(chatappNumberDecider);
  const m = (accountId = acc) => ({ now: t0, accountId });
  const bind = (o: { accountId?: string; connectionId?: string; agentId?: string | null } = {}): ChatappNumberCommand => ({
    type: 'RequestBind',
    data: { bindingId: 'chn_1', connectionId: o.connectionId ?? 'chc_1', phoneNumberId: 'p1', agentId: o.agentId ?? null, pin: null },
    metadata: m(o.accountId),
  });
  const requested = (attempt = 1): ChatappNumberEvent => ({
    type: 'ChatappNumberBindRequested',
    data: {
      bindingId: 'chn_1',
      accountId: acc,
      connectionId: 'chc_1',
      phoneNumberId: 'p1',
      agentId: null,
      pin: null,
      attempt,
      requestedAt: t0,
    },
  });
  const line = { phoneNumber: '+447700900501', verifiedName: 'Coffee', lineId: 'chn_1', nativeNumberId: null };
  const bound: ChatappNumberEvent = { type: 'ChatappNumberBound', data: { bindingId: 'chn_1', attempt: 1, ...line, boundAt: t0 } };
  const unbound: ChatappNumberEvent = {
    type: 'ChatappNumberUnbound',
    data: { bindingId: 'chn_1', connectionId: 'chc_1', reason: 'requested', unboundAt: t0 },
  };

  it('records a bind request', () => given([]).when(bind()).then([requested()]));
  it('records the line once the platform registered the number', () =>
    given([requested()])
      .when({ type: 'RecordBound', data: { bindingId: 'chn_1', attempt: 1, ...line }, metadata: m() })
      .then([bound]));
  it('refuses a number held by another account or another connection (CHATAPP_NUMBER_IN_USE)', () => {
    given([requested(), bound])
      .when(bind({ accountId: 'acc_2' }))
      .thenThrows('CHATAPP_NUMBER_IN_USE');
    given([requested()])
      .when(bind({ connectionId: 'chc_2' }))
      .thenThrows('CHATAPP_NUMBER_IN_USE');
  });
  it('treats the same bind again as a retry, and a new agent as a change of agent', () => {
    given([requested(), bound]).when(bind()).then([]);
    given([requested(), bound])
      .when(bind({ agentId: 'agt_2' }))
      .then([{ type: 'ChatappNumberAgentSet', data: { bindingId: 'chn_1', agentId: 'agt_2', setAt: t0 } }]);
  });
  it('binds again after an unbind, by any account (a new attempt)', () =>
    given([requested(), bound, unbound])
      .when(bind({ accountId: 'acc_2' }))
      .then([{ ...requested(2), data: { ...requested(2).data, accountId: 'acc_2' } } as ChatappNumberEvent]));
  it('unbinds once; another account answers CHATAPP_NUMBER_NOT_FOUND', () => {
    const u: ChatappNumberCommand = { type: 'Unbind', data: { bindingId: 'chn_1', reason: 'requested' }, metadata: m() };
    given([requested(), bound]).when(u).then([unbound]);
    given([requested(), bound, unbound]).when(u).then([]);
    given([requested(), bound])
      .when({ ...u, metadata: m('acc_2') })
      .thenThrows('CHATAPP_NUMBER_NOT_FOUND');
  });
});

describe('Template decider', () => {
  const { given } = deciderSpec(templateDecider);
  const content: TemplateContent = {
    name: 'opening_hours',
    language: 'en_US',
    category: 'utility',
    body: 'Hi {{1}}',
    header: null,
    buttons: [],
    variables: { format: 'positional', count: 1 },
    examples: null,
  };
  const create: TemplateCommand = {
    type: 'CreateTemplate',
    data: { templateId: 'cht_1', connectionId: 'chc_1', ...content },
    metadata: { now: t0, accountId: acc },
  };
  const created = (submission = 1): TemplateEvent => ({
    type: 'ChatappTemplateCreated',
    data: { templateId: 'cht_1', accountId: acc, connectionId: 'chc_1', ...content, submission, createdAt: t0 },
  });
  const submitted: TemplateEvent = {
    type: 'ChatappTemplateSubmitted',
    data: { templateId: 'cht_1', submission: 1, platformTemplateId: 'pt_1', submittedAt: t0 },
  };
  const review = (approved: boolean, platformTemplateId: string | null = 'pt_1'): TemplateCommand => ({
    type: 'RecordTemplateReviewed',
    data: { templateId: 'cht_1', platformTemplateId, approved, reason: approved ? null : 'INVALID_FORMAT' },
    metadata: { now: t0, accountId: acc },
  });
  const rejected: TemplateEvent = {
    type: 'ChatappTemplateRejected',
    data: { templateId: 'cht_1', submission: 1, reason: 'INVALID_FORMAT', rejectedAt: t0 },
  };

  it('creates a template pending review', () => given([]).when(create).then([created()]));
  it('moves pending to approved, as a fact', () =>
    given([created(), submitted])
      .when(review(true))
      .then([{ type: 'ChatappTemplateApproved', data: { templateId: 'cht_1', submission: 1, approvedAt: t0 } }]));
  it('moves pending to rejected, with the reason', () => given([created(), submitted]).when(review(false)).then([rejected]));
  it('ignores a second review, and a review of another platform template', () => {
    given([created(), submitted, rejected]).when(review(true)).then([]);
    given([created(), submitted]).when(review(true, 'pt_other')).then([]);
  });
  it('refuses the same name and language again unless rejected (a new submission)', () => {
    given([created()]).when(create).thenThrows('CHATAPP_TEMPLATE_EXISTS');
    given([created(), submitted, rejected])
      .when(create)
      .then([created(2)]);
  });
});

describe('Chat-app settings decider', () => {
  const { given } = deciderSpec(chatappSettingsDecider);
  const set = (enabled: boolean) => ({ type: 'SetChatappEnabled' as const, data: { enabled }, metadata: { now: t0, accountId: acc } });
  it('is on by default: switching it on is a no-op, off is a fact', () => {
    given([]).when(set(true)).then([]);
    given([])
      .when(set(false))
      .then([{ type: 'ChatappSettingsChanged', data: { enabled: false, changedAt: t0 } }]);
  });
});
