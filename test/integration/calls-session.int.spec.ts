import { expect } from 'chai';
import {
  callWhen,
  endedCall,
  FAR_END,
  FAST_VOICE_ENV,
  farEnd,
  placeCall,
  type VoiceLine,
  type VoiceReceiver,
  voiceLine,
  voiceReceiver,
} from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';

const LONG_GREETING =
  'Hello there, this is the Acme scheduling assistant calling about your appointment next Tuesday morning at the downtown office, do you have a minute?';

const agentTurns = (c: any) => c.turns.filter((t: any) => t.role === 'agent');
const callerTurns = (c: any) => c.turns.filter((t: any) => t.role === 'user');

/** The live session's rules (docs/calls.md#the-live-session), each proven against the sandbox far end. */
describe('the live call session', function () {
  this.timeout(90_000);
  let app: TestApp;
  let rx: VoiceReceiver;

  before(async () => {
    app = await startTestApp(FAST_VOICE_ENV);
    rx = await voiceReceiver();
  });
  after(async () => {
    await rx?.close();
    await app?.close();
  });

  async function line(agent: Record<string, unknown>, hook = true): Promise<VoiceLine> {
    const l = await voiceLine(app, agent);
    if (hook) {
      const h = await app.call('POST', `/v1/agents/${l.agentId}/webhook`, { key: l.key, body: { url: rx.url, timeout: 5 } });
      expect(h.status).to.equal(200);
    }
    return l;
  }

  describe('interruptions', () => {
    it('speech over the agent cuts its turn, and the turn records only the words heard', async () => {
      const l = await line({ beginMessage: LONG_GREETING, interruptionSensitivity: 1 });
      rx.answer(() => ({ json: { text: 'Sure, go ahead.' } }));
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.interrupter })).id);
      const greeting = agentTurns(c).find((t: any) => t.source === 'greeting');
      expect(greeting.interrupted).to.equal(true);
      expect(greeting.text).to.equal(LONG_GREETING);
      const heardWords = greeting.spoken.split(' ').length;
      expect(heardWords).to.be.greaterThan(0).and.lessThan(LONG_GREETING.split(' ').length);
      expect(LONG_GREETING.startsWith(greeting.spoken)).to.equal(true);
      // the far end heard exactly what the turn says was spoken
      const view = await farEnd(app, c.id);
      expect(view.agentSpeech[0].heard).to.equal(greeting.spoken);
      // the interruption itself is a caller turn that reached the webhook
      expect(callerTurns(c).map((t: any) => t.content)).to.include('Sorry, can I ask something?');
      // the transcript keeps what was heard, not what was meant
      expect(c.transcripts.length).to.be.greaterThan(0);
    });

    it('a backchannel does not cut the agent when enableBackchannel is on', async () => {
      const l = await line({ beginMessage: LONG_GREETING, interruptionSensitivity: 1, enableBackchannel: true });
      rx.answer(() => ({ json: { text: 'Great, thanks.' } }));
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.backchanneler })).id);
      const greeting = agentTurns(c).find((t: any) => t.source === 'greeting');
      expect(greeting.interrupted).to.equal(false);
      expect(greeting.spoken).to.equal(LONG_GREETING);
      const view = await farEnd(app, c.id);
      expect(view.farEndSpeech.some((u: any) => u.overAgent)).to.equal(true);
      // the acknowledgement was not a turn: no caller turn is a backchannel
      expect(callerTurns(c).map((t: any) => t.content)).to.not.include('uh-huh');
    });

    it('the same backchannel cuts the agent when enableBackchannel is off', async () => {
      const l = await line({ beginMessage: LONG_GREETING, interruptionSensitivity: 1, enableBackchannel: false });
      rx.answer(() => ({ json: { text: 'Yes?' } }));
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.backchanneler })).id);
      const greeting = agentTurns(c).find((t: any) => t.source === 'greeting');
      expect(greeting.interrupted).to.equal(true);
      expect(callerTurns(c)[0].content).to.equal('uh-huh');
    });

    it('at interruptionSensitivity 0 the agent finishes its turn and then hears the caller', async () => {
      const l = await line({ beginMessage: LONG_GREETING, interruptionSensitivity: 0 });
      rx.answer(() => ({ json: { text: 'Go ahead.' } }));
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.interrupter })).id);
      const greeting = agentTurns(c).find((t: any) => t.source === 'greeting');
      expect(greeting.interrupted).to.equal(false);
      expect(callerTurns(c).map((t: any) => t.content)).to.include('Sorry, can I ask something?');
    });
  });

  describe('webhook replies', () => {
    it('streams NDJSON: interim lines are spoken as they arrive, digits and text in one answer', async () => {
      const l = await line({});
      rx.answer((t, n) =>
        n === rx.turns.length - 1 && t.body.data.transcript === 'Welcome. Press 1 for sales or 2 for support.'
          ? { lines: [{ text: 'One moment.', interim: true }, { digits: '1' }], delayMs: 50 }
          : { json: { text: 'Thanks.' } },
      );
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.menu, initialGreeting: '' })).id);
      const view = await farEnd(app, c.id);
      expect(view.digitsFromAgent).to.equal('1');
      const first = agentTurns(c)[0];
      expect(first.spoken).to.equal('One moment.');
      expect(first.actions).to.deep.include({ type: 'digits', value: '1', outcome: 'done', detail: null });
      expect(callerTurns(c).map((t: any) => t.content)).to.include('You pressed 1. Connecting you to sales.');
      // the press_digit alias is a digits reply too
      expect(first.latency.requestMs).to.be.a('number');
    });

    it('a webhook that does not answer in time leaves that turn silent, says why, and the call goes on', async () => {
      const l = await line({});
      let hung = false;
      rx.answer(() => {
        if (!hung) {
          hung = true;
          return 'hang';
        }
        return { json: { text: 'Sorry for the wait.' } };
      });
      // the silent far end never speaks by itself: the test speaks for it
      const placed = await placeCall(app, l, { toNumber: FAR_END.silent, initialGreeting: '' });
      await callWhen(app, l.key, placed.id, (c) => c.answeredAt !== null, 'the call answered');
      await app.call('POST', `/sandbox/calls/${placed.id}/say`, { key: ADMIN_TOKEN, body: { text: 'Is anyone there?' } });
      const silent = (
        await callWhen(app, l.key, placed.id, (c) => agentTurns(c).some((t: any) => t.silentReason), 'a silent turn')
      ).turns.find((t: any) => t.silentReason);
      expect(silent.silentReason).to.match(/^webhook_timeout/);
      expect(silent.spoken).to.equal('');
      await app.call('POST', `/sandbox/calls/${placed.id}/say`, { key: ADMIN_TOKEN, body: { text: 'Hello?' } });
      await callWhen(app, l.key, placed.id, (c) => agentTurns(c).some((t: any) => t.spoken === 'Sorry for the wait.'), 'the next reply');
      await app.call('POST', `/v1/calls/${placed.id}/end`, { key: l.key });
      const c = await endedCall(app, l.key, placed.id);
      expect(c.status).to.equal('completed');
      expect(c.disconnectionReason).to.equal('ended_by_api');
    });

    it('transfers to the agent’s transferNumber, and refuses cleanly without one', async () => {
      const withNumber = await line({ transferNumber: '+16465550150' });
      rx.answer(() => ({ json: { text: 'Let me transfer you.', action: 'transfer' } }));
      const c = await endedCall(
        app,
        withNumber.key,
        (await placeCall(app, withNumber, { toNumber: FAR_END.talker, initialGreeting: '' })).id,
      );
      expect(c.disconnectionReason).to.equal('call_transfer');
      expect((await farEnd(app, c.id)).transferredTo).to.equal('+16465550150');

      const without = await line({});
      rx.answer((_t, n) => (n % 2 === 0 ? { json: { text: 'Transferring.', action: 'transfer' } } : { json: { text: 'Okay.' } }));
      const d = await endedCall(app, without.key, (await placeCall(app, without, { toNumber: FAR_END.talker, initialGreeting: '' })).id);
      expect(d.disconnectionReason).to.equal('user_hangup');
      const refused = agentTurns(d)
        .flatMap((t: any) => t.actions)
        .find((a: any) => a.type === 'transfer');
      expect(refused.outcome).to.equal('refused');
      expect(refused.detail).to.match(/transferNumber/);
      expect((await farEnd(app, d.id)).transferredTo).to.equal(null);
    });
  });

  describe('who answered', () => {
    it('voicemail: the agent leaves its voicemailMessage after the beep and hangs up', async () => {
      const l = await line({ voicemailMessage: 'Hi Sam, this is Acme calling about your order. Please call us back.' });
      rx.answer(() => ({ json: { text: 'should not be asked' } }));
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.voicemail })).id);
      expect(c.answeredBy).to.equal('voicemail');
      expect(c.disconnectionReason).to.equal('voicemail_reached');
      const view = await farEnd(app, c.id);
      expect(view.voicemailMessage).to.equal('Hi Sam, this is Acme calling about your order. Please call us back.');
      expect(
        rx.turns.filter((t) => t.body.event === 'agent.message' && t.body.data.callId === c.id).map((t) => t.body.data.transcript),
      ).to.deep.equal([]);
    });

    it('voicemail without a voicemailMessage: the agent hangs up at once', async () => {
      const l = await line({});
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.voicemail })).id);
      expect(c.answeredBy).to.equal('voicemail');
      expect(c.disconnectionReason).to.equal('voicemail_reached');
      expect(agentTurns(c)).to.have.length(0);
    });

    it('a call screener hears the screening identity and purpose; the first human turn carries answeredBy', async () => {
      const l = await line({ callScreeningIdentity: 'Ada from Acme', callScreeningPurpose: 'your delivery window' });
      rx.answer(() => ({ json: { text: 'Hi Sam, quick question about your delivery.' } }));
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.screener })).id);
      expect(c.answeredBy).to.equal('screener');
      const view = await farEnd(app, c.id);
      expect(view.screenerHeard).to.include('This is Ada from Acme, calling about your delivery window.');
      // the screener's own words (its question, its "please stay on the line") are heard, not sent
      const first = rx.turns.find((t) => t.body.event === 'agent.message' && t.body.data.callId === c.id)!;
      expect(first.body.data.transcript).to.equal('Hello, this is Sam.');
      expect(first.body.data.answeredBy).to.equal('screener');
    });

    it('only a purpose set: the agent’s name is the identity; the call overrides the agent', async () => {
      const l = await line({ name: 'Robin', callScreeningPurpose: 'a billing question' });
      rx.answer(() => ({ json: { text: 'Thanks.' } }));
      const c = await endedCall(app, l.key, (await placeCall(app, l, { toNumber: FAR_END.screener })).id);
      expect((await farEnd(app, c.id)).screenerHeard).to.include('This is Robin, calling about a billing question.');
      const d = await endedCall(
        app,
        l.key,
        (await placeCall(app, l, { toNumber: FAR_END.screener, callScreeningIdentity: 'Kim', callScreeningPurpose: 'a refund' })).id,
      );
      expect((await farEnd(app, d.id)).screenerHeard).to.include('This is Kim, calling about a refund.');
    });
  });

  describe('hosted mode', () => {
    it('the built-in model answers from the system prompt with variables filled; unknown ones are reported', async () => {
      const l = await line({ voiceMode: 'hosted' }, false);
      const c = await endedCall(
        app,
        l.key,
        (
          await placeCall(app, l, {
            toNumber: FAR_END.talker,
            initialGreeting: 'Hi {{name}}, this is Acme.',
            systemPrompt:
              'You book appointments.\nIf the caller says "who is this", answer "This is {{agent}} from Acme, about {{topic}}."',
            variables: { name: 'Sam', agent: 'Ada' },
          })
        ).id,
      );
      const spoken = agentTurns(c).map((t: any) => t.spoken);
      expect(spoken[0]).to.equal('Hi Sam, this is Acme.');
      expect(spoken).to.include('This is Ada from Acme, about {{topic}}.');
      expect(c.unknownVariables).to.deep.equal(['topic']);
      expect(agentTurns(c).find((t: any) => t.source === 'model')).to.not.equal(undefined);
    });

    it('variables without a systemPrompt on a webhook-mode agent are refused', async () => {
      const l = await line({});
      const r = await app.call('POST', '/v1/calls', {
        key: l.key,
        body: { agentId: l.agentId, toNumber: FAR_END.talker, variables: { a: 'b' } },
      });
      expect(r.status).to.equal(422);
      expect(JSON.stringify(r.body)).to.include('variables');
    });
  });
});
