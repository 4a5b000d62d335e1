import { expect } from 'chai';
import { verifyWebhookSignature } from '../../infrastructure/webhooks/verify.js';
import {
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
import { startTestApp, type TestApp } from '../support/http.js';

describe('outbound calls in webhook mode (docs/calls.md#webhook-mode)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let line: VoiceLine;
  let rx: VoiceReceiver;
  let secret: string;

  before(async () => {
    app = await startTestApp(FAST_VOICE_ENV);
    line = await voiceLine(app, { beginMessage: 'Hi, this is Caller from Acme.' });
    rx = await voiceReceiver();
    const hook = await app.call('POST', `/v1/agents/${line.agentId}/webhook`, { key: line.key, body: { url: rx.url } });
    expect(hook.status).to.equal(200);
    secret = hook.body.secret;
  });
  after(async () => {
    await rx?.close();
    await app?.close();
  });

  it('greets, sends each caller turn to the webhook signed, speaks the replies, and completes', async () => {
    rx.answer((t) => ({ json: { text: `You said ${t.body.data.transcript}` } }));
    const placed = await placeCall(app, line, { toNumber: FAR_END.talker });
    expect(placed.status).to.equal('in-progress');
    const c = await endedCall(app, line.key, placed.id);
    expect(c.status).to.equal('completed');
    expect(c.direction).to.equal('outbound');
    expect(c.disconnectionReason).to.equal('user_hangup');
    // a loaded machine may let the callee's "Hello?" come before the greeting reaches it: a turn like any other
    const turns = rx.turns.filter(
      (t) => t.body.event === 'agent.message' && t.body.data.callId === placed.id && t.body.data.transcript !== 'Hello?',
    );
    expect(turns.map((t) => t.body.data.transcript)).to.deep.equal([
      'Hi, who is this?',
      'Okay, tell me more.',
      'That sounds good.',
      'Thanks, bye!',
    ]);
    for (const t of turns) expect(verifyWebhookSignature(secret, t.headers as Record<string, string>, t.rawBody)).to.equal(true);
    expect(turns[0]!.body.channel).to.equal('voice');
    expect(turns[0]!.body.data).to.include({ from: line.phoneNumber, to: FAR_END.talker, direction: 'outbound' });
    const all = rx.turns.filter((t) => t.body.event === 'agent.message' && t.body.data.callId === placed.id);
    expect(all[0]!.body.data.answeredBy).to.equal('human');
    expect(all.slice(1).every((t) => !('answeredBy' in t.body.data))).to.equal(true);
    // the history of the second turn holds the first exchange, as heard
    expect(turns[1]!.body.recentHistory.map((h: any) => h.content)).to.include.members(['Hi, who is this?', 'You said Hi, who is this?']);
    // the far end heard the greeting, then each reply
    const heard = (await farEnd(app, placed.id)).agentSpeech.map((p: any) => p.heard);
    expect(heard[0]).to.equal('Hi, this is Caller from Acme.');
    expect(heard).to.include('You said Okay, tell me more.');
    // the record pairs each utterance with the reply to it, and times every agent turn
    expect(c.transcripts.find((t: any) => t.transcript === 'Hi, who is this?')).to.include({ response: 'You said Hi, who is this?' });
    const replies = c.turns.filter((t: any) => t.role === 'agent' && t.source === 'webhook' && t.spoken);
    for (const t of replies) expect(t.latency.requestMs).to.be.a('number').and.at.least(0);
  });
});
