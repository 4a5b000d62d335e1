import { expect } from 'chai';
import { consentDecider, isOptedOut } from '../../domain/conversation/consent.decider.js';
import { type ConversationCommand, type ConversationEvent, conversationDecider } from '../../domain/conversation/conversation.decider.js';
import { dailyCounterDecider } from '../../domain/conversation/daily-counter.decider.js';
import { consentKeywordOf } from '../../domain/conversation/rules.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(conversationDecider);
const t0 = '2026-03-01T10:00:00.000Z';
const at = (days: number, t = t0) => new Date(new Date(t).getTime() + days * 86_400_000).toISOString();
const conversationId = 'conv_1';
const party = {
  numberId: 'num_1',
  phoneNumber: '+12025550100',
  agentId: 'agt_1',
  participant: '+14155550123',
  participants: null,
  groupName: null,
};
const content = (messageId: string) => ({
  messageId,
  body: 'hi',
  mediaUrls: [],
  channel: 'sms' as const,
  encoding: 'GSM-7' as const,
  segments: 1,
});
const rules = { streakLimit: 4, inboundOnly: false };

const send = (
  messageId: string,
  now = t0,
  o: Partial<{ kind: 'message' | 'auto_reply'; rules: typeof rules }> = {},
): ConversationCommand => ({
  type: 'RecordOutbound',
  data: {
    conversationId,
    ...party,
    ...content(messageId),
    replyToMessageId: null,
    sendStyle: null,
    kind: o.kind ?? 'message',
    rules: o.rules ?? rules,
  },
  metadata: { now, accountId: 'acc_1' },
});
const receive = (messageId: string, now = t0): ConversationCommand => ({
  type: 'RecordInbound',
  data: {
    conversationId,
    ...party,
    ...content(messageId),
    from: party.participant,
    carrierMessageId: `c_${messageId}`,
    receivedAt: now,
    keyword: null,
  },
  metadata: { now, accountId: 'acc_1' },
});

/** the events a command produces on top of `past` */
const run = (past: ConversationEvent[], cmd: ConversationCommand) =>
  conversationDecider.decide(cmd, past.reduce(conversationDecider.evolve, conversationDecider.initialState()));
/** the history after a sequence of commands that all succeed */
const history = (...cmds: ConversationCommand[]) => {
  const past: ConversationEvent[] = [];
  for (const c of cmds) past.push(...run(past, c));
  return past;
};

describe('Conversation decider: sending rules', () => {
  it('starts the conversation with the first message, and records a message id once', () => {
    const events = run([], send('m1'));
    expect(events.map((e) => e.type)).to.deep.equal(['ConversationStarted', 'OutboundMessageAccepted']);
    expect(events[0]!.data).to.include({ conversationId, accountId: 'acc_1', isGroup: false, startedBy: 'outbound', startedAt: t0 });
    expect(events[1]!.data).to.deep.include({
      messageId: 'm1',
      from: party.phoneNumber,
      to: party.participant,
      recipients: [party.participant],
      reengagement: false,
    });
    given(events).when(send('m1')).then([]);
  });

  it('CONVERSATION_AWAITING_REPLY: three messages to a new recipient, the fourth refused until they reply', () => {
    const three = history(send('m1'), send('m2'), send('m3'));
    given(three).when(send('m4')).thenThrows('CONVERSATION_AWAITING_REPLY');
    const replied = history(send('m1'), send('m2'), send('m3'), receive('in1'));
    expect(run(replied, send('m4')).map((e) => e.type)).to.deep.equal(['OutboundMessageAccepted']);
  });

  it('CONVERSATION_STREAK_LIMIT: after a reply, at most streakLimit in a row; only a reply resets it', () => {
    const streak = history(receive('in1'), send('m1'), send('m2'), send('m3'), send('m4'));
    given(streak).when(send('m5')).thenThrows('CONVERSATION_STREAK_LIMIT');
    given(streak)
      .when(send('m5', at(3)))
      .thenThrows('CONVERSATION_STREAK_LIMIT');
    expect(run([...streak, ...run(streak, receive('in2'))], send('m5'))).to.have.length(1);
  });

  it('CONVERSATION_INACTIVE: after 14 quiet days one re-engagement message, then locked until a reply', () => {
    const old = history(receive('in1'), send('m1'));
    expect(run(old, send('m2', at(14)))[0]!.data).to.include({ reengagement: false }); // exactly 14 days is not over 14
    const reengaged = run(old, send('m2', at(15)));
    expect(reengaged[0]!.data).to.include({ reengagement: true });
    given([...old, ...reengaged])
      .when(send('m3', at(15)))
      .thenThrows('CONVERSATION_INACTIVE');
    const unlocked = [...old, ...reengaged, ...run([...old, ...reengaged], receive('in2', at(16)))];
    expect(run(unlocked, send('m3', at(16)))).to.have.length(1);
  });

  it('INBOUND_ONLY: an inbound-only number cannot write first, but answers once written to', () => {
    const only = { streakLimit: 4, inboundOnly: true };
    given([])
      .when(send('m1', t0, { rules: only }))
      .thenThrows('INBOUND_ONLY');
    expect(run(history(receive('in1')), send('m1', t0, { rules: only }))).to.have.length(1);
  });

  it('lets automatic keyword answers through every cap, and does not count them in the streak', () => {
    const blocked = history(send('m1'), send('m2'), send('m3'));
    const auto = run(blocked, send('a1', t0, { kind: 'auto_reply' }));
    expect(auto[0]!.data).to.include({ kind: 'auto_reply', reengagement: false });
    const s = [...blocked, ...auto].reduce(conversationDecider.evolve, conversationDecider.initialState());
    expect(s.exists && s.outboundSinceReply).to.equal(3);
  });

  it('sets the caller-written state and a group name only when they change; a missing conversation is 404', () => {
    const started = history(send('m1'));
    const set = (data: Record<string, unknown>): ConversationCommand =>
      ({
        type: 'SetConversationState',
        data: { conversationId, ...data },
        metadata: { now: t0, accountId: 'acc_1' },
      }) as ConversationCommand;
    given(started)
      .when(set({ state: { step: 2 } }))
      .then([{ type: 'ConversationStateSet', data: { conversationId, state: { step: 2 }, setAt: t0 } }]);
    given([...started, ...run(started, set({ state: { step: 2 } }))])
      .when(set({ state: { step: 2 } }))
      .then([]);
    given(started)
      .when(set({ groupName: 'Team' }))
      .then([]); // not a group
    given([])
      .when(set({ state: {} }))
      .thenThrows('CONVERSATION_NOT_FOUND');
  });
});

describe('Daily counter decider', () => {
  const { given: g } = deciderSpec(dailyCounterDecider);
  const meta = { now: '2026-03-01T23:00:00.000Z', accountId: 'acc_1' };
  const count = (participant: string, newConversation = true) =>
    ({
      type: 'CountSend',
      data: { numberId: 'num_1', day: '2026-03-01', participant, newConversation, limits: { newConversations: 2, outbound: 3 } },
      metadata: meta,
    }) as const;
  const counted = (participant: string, newConversation = true) =>
    ({
      type: 'DailySendCounted',
      data: { numberId: 'num_1', day: '2026-03-01', participant, newConversation, countedAt: meta.now },
    }) as const;

  it('counts each participant once a day', () => {
    g([])
      .when(count('+1'))
      .then([counted('+1')]);
    g([counted('+1')])
      .when(count('+1'))
      .then([]);
  });
  it('NEW_CONVERSATION_LIMIT_REACHED at the daily number of new conversations, naming when it resets', () => {
    g([counted('+1'), counted('+2')])
      .when(count('+3'))
      .thenThrows('NEW_CONVERSATION_LIMIT_REACHED');
    const err = (() => {
      try {
        dailyCounterDecider.decide(
          count('+3'),
          [counted('+1'), counted('+2')].reduce(dailyCounterDecider.evolve, dailyCounterDecider.initialState()),
        );
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).to.contain('2026-03-02T00:00:00.000Z');
  });
  it('OUTBOUND_LIMIT_REACHED at the daily number of contacts who never wrote, new conversations or not', () => {
    g([counted('+1', false), counted('+2', false), counted('+3', false)])
      .when(count('+4', false))
      .thenThrows('OUTBOUND_LIMIT_REACHED');
    g([counted('+1', false), counted('+2', false)])
      .when(count('+4', false))
      .then([counted('+4', false)]);
  });
  it('gives a count back, freeing its slot', () => {
    const released = {
      type: 'DailySendCountReleased',
      data: { numberId: 'num_1', day: '2026-03-01', participant: '+2', releasedAt: meta.now },
    } as const;
    g([counted('+1'), counted('+2')])
      .when({ type: 'ReleaseCount', data: { numberId: 'num_1', day: '2026-03-01', participant: '+2' }, metadata: meta })
      .then([released]);
    g([counted('+1'), counted('+2'), released])
      .when(count('+3'))
      .then([counted('+3')]);
  });
  it('keeps a busy day exact: 5,000 counts, some given back, at limits raised to match', () => {
    const limits = { newConversations: 4_000, outbound: 5_000 };
    const busy = (participant: string, newConversation: boolean) => ({
      ...count(participant, newConversation),
      data: { ...count(participant, newConversation).data, limits },
    });
    const who = (i: number) => `+1312555${String(i).padStart(4, '0')}`;
    // 4,000 conversations started, 1,000 sends to contacts in conversations already
    const day = Array.from({ length: 5_000 }, (_, i) => counted(who(i), i < 4_000));
    const release = (i: number) =>
      ({
        type: 'DailySendCountReleased',
        data: { numberId: 'num_1', day: '2026-03-01', participant: who(i), releasedAt: meta.now },
      }) as const;
    g(day).when(busy('+13125559999', false)).thenThrows('OUTBOUND_LIMIT_REACHED');
    g(day)
      .when(busy(who(4_321), false))
      .then([]);
    // a conversation's count given back frees an outbound slot and a new conversation's
    g([...day, release(17)])
      .when(busy('+13125559999', true))
      .then([counted('+13125559999', true)]);
    // an ordinary send's count given back frees an outbound slot, not a new conversation's
    g([...day, release(4_017)])
      .when(busy('+13125559999', true))
      .thenThrows('NEW_CONVERSATION_LIMIT_REACHED');
    g([...day, release(4_017)])
      .when(busy('+13125559999', false))
      .then([counted('+13125559999', false)]);
  });
});

describe('Consent decider and keywords', () => {
  const meta = { now: t0, accountId: 'acc_1' };
  const cmd = (type: 'OptOut' | 'OptIn', numberId: string | null, messageId: string) =>
    ({
      type,
      data: { recipient: '+14155550123', numberId, keyword: type === 'OptOut' ? 'STOP' : 'START', messageId },
      metadata: meta,
    }) as const;
  const fold = (...cmds: ReturnType<typeof cmd>[]) =>
    cmds.reduce((s, c) => consentDecider.decide(c, s).reduce(consentDecider.evolve, s), consentDecider.initialState());

  it('opts out of one number, or of every number, and START lifts it', () => {
    expect(isOptedOut(fold(cmd('OptOut', 'num_1', 'a')), 'num_1')).to.equal(true);
    expect(isOptedOut(fold(cmd('OptOut', 'num_1', 'a')), 'num_2')).to.equal(false);
    expect(isOptedOut(fold(cmd('OptOut', null, 'a')), 'num_2')).to.equal(true);
    expect(isOptedOut(fold(cmd('OptOut', 'num_1', 'a'), cmd('OptIn', 'num_1', 'b')), 'num_1')).to.equal(false);
    expect(isOptedOut(fold(cmd('OptOut', null, 'a'), cmd('OptIn', 'num_1', 'b')), 'num_2')).to.equal(false);
  });
  it('acts on a keyword message once, and records nothing that changes nothing', () => {
    const s = fold(cmd('OptOut', 'num_1', 'a'));
    expect(consentDecider.decide(cmd('OptOut', 'num_1', 'a'), s)).to.deep.equal([]);
    expect(consentDecider.decide(cmd('OptOut', 'num_1', 'b'), s)).to.deep.equal([]);
    expect(consentDecider.decide(cmd('OptIn', 'num_2', 'c'), s)).to.deep.equal([]);
  });
  it('reads STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, START, UNSTOP and HELP alone, in any case', () => {
    for (const w of ['STOP', 'stopall', ' Unsubscribe ', 'cancel', 'END', 'quit']) expect(consentKeywordOf(w)?.kind, w).to.equal('stop');
    for (const w of ['start', 'UNSTOP']) expect(consentKeywordOf(w)?.kind, w).to.equal('start');
    expect(consentKeywordOf('help')?.kind).to.equal('help');
    for (const w of ['stop it', 'please STOP', 'STOP.', 'stopp', '']) expect(consentKeywordOf(w), w).to.equal(null);
  });
});
