import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import {
  type AnsweredBy,
  type CallLeg,
  type DialFailure,
  type InboundDecision,
  type LegEndReason,
  type LegListener,
  SipBridgeError,
  TelephonyError,
} from '../../application/calls/voice-engine.port.js';
import { SystemClock } from '../../infrastructure/adapters/system-clock.js';
import { createLogger } from '../../infrastructure/logger.js';
import { SandboxVoiceEngine } from '../../infrastructure/sandbox/voice/engine.js';
import {
  INTERRUPTION,
  MENU_PROMPT,
  NUMBER_OF_PERSONA,
  SCREENER_HOLD,
  SCREENER_HUMAN,
  SCREENER_PROMPT,
  TALKER_SCRIPT,
  VOICEMAIL_GREETING,
  voiceMagicNumbers,
} from '../../infrastructure/sandbox/voice/magic.js';
import {
  InboundCallRefusedError,
  SandboxCallNotConnectedError,
  SandboxCallNotFoundError,
} from '../../infrastructure/sandbox/voice/types.js';

// 6000 words a minute: 10 ms a word; the ring and the reply pause 20 ms
const FAST = { wordsPerMinute: 6000, ringMs: 20, replyPauseMs: 20 } as const;
const MS_PER_WORD = 10;
/** the interrupter and backchanneler tests play slower (20 ms a word), so that the cue sits well inside the playback */
const SLOW = { voice: 'sandbox-aria', wordsPerMinute: 3000 } as const;
const VOICE = { voice: 'sandbox-aria' } as const;
const FROM = '+14155550100';
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');
const count = (s: string) => (s === '' ? 0 : s.split(' ').length);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Speech = Readonly<{ utteranceId: string; transcript: string; confidence: number; final: boolean }>;

/**
 * A listener that writes every call down as a short line (`answered:human`, `said:Hello?`, `finished:p1`),
 * checks the port's rule (one call at a time, nothing after `ended` or `failed`), and lets a test react.
 */
class Recorder implements LegListener {
  readonly lines: string[] = [];
  readonly speech: Speech[] = [];
  readonly violations: string[] = [];
  leg: CallLeg | null = null;
  private inside = false;
  private over = false;
  private waiters: { pred: (line: string) => boolean; resolve: () => void }[] = [];

  constructor(private readonly react: (line: string, r: Recorder) => void = () => {}) {}

  ringing() {
    this.record('ringing');
  }
  answered(by: AnsweredBy) {
    this.record(`answered:${by}`);
  }
  failed(reason: DialFailure, detail: string) {
    this.record(`failed:${reason}`, detail);
    this.over = true;
  }
  callerSpeech(u: Speech) {
    this.speech.push(u);
    this.record(`${u.final ? 'said' : 'heard'}:${u.transcript}`);
  }
  beep() {
    this.record('beep');
  }
  digitReceived(d: string) {
    this.record(`digit:${d}`);
  }
  playbackFinished(id: string) {
    this.record(`finished:${id}`);
  }
  ended(reason: LegEndReason, _detail: string | null) {
    this.record(`ended:${reason}`);
    this.over = true;
  }

  /** Resolves when a line matching `pred` has been (or is) recorded. */
  until(pred: string | ((line: string) => boolean), timeoutMs = 3000): Promise<void> {
    const p = typeof pred === 'string' ? (l: string) => l === pred : pred;
    if (this.lines.some(p)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting; got ${JSON.stringify(this.lines)}`)), timeoutMs);
      this.waiters.push({
        pred: p,
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
      });
    });
  }

  /** The lines without the interim (`heard:`) ones. */
  get finals(): string[] {
    return this.lines.filter((l) => !l.startsWith('heard:'));
  }

  private record(line: string, _detail?: string) {
    if (this.inside) this.violations.push(`re-entered with ${line}`);
    if (this.over) this.violations.push(`${line} after the end`);
    this.inside = true;
    try {
      this.lines.push(line);
      this.react(line, this);
      for (const w of this.waiters.filter((x) => x.pred(line))) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    } finally {
      this.inside = false;
    }
  }
}

describe('SandboxVoiceEngine', function () {
  this.timeout(10_000);
  let engine: SandboxVoiceEngine;
  beforeEach(() => {
    engine = new SandboxVoiceEngine(FAST, new SystemClock(), createLogger('silent'));
  });
  afterEach(() => engine.close());

  const dial = async (to: string, r: Recorder, ringTimeoutMs = 2000) => {
    const leg = await engine.dial({ callId: `call_${to}_${Math.random()}`, from: FROM, to, ringTimeoutMs, voice: 'sandbox-aria' }, r);
    r.leg = leg;
    return leg;
  };

  describe('talker (and every number that is not magic)', () => {
    it('resolves the dial before ringing, answers, says hello, then one line per finished agent turn, and hangs up after the last', async () => {
      let n = 0;
      const r = new Recorder((line, rec) => {
        if (line.startsWith('said:') && line !== `said:${TALKER_SCRIPT.at(-1)}`) rec.leg!.play(`p${++n}`, 'Okay then.', VOICE);
      });
      await dial('+14155550142', r);
      expect(r.lines).to.deep.equal([]); // the dial answered before anything happened on the line
      await r.until('ended:remote_hangup');
      expect(r.finals).to.deep.equal([
        'ringing',
        'answered:human',
        'said:Hello?',
        'finished:p1',
        `said:${TALKER_SCRIPT[0]}`,
        'finished:p2',
        `said:${TALKER_SCRIPT[1]}`,
        'finished:p3',
        `said:${TALKER_SCRIPT[2]}`,
        'finished:p4',
        `said:${TALKER_SCRIPT[3]}`,
        'ended:remote_hangup',
      ]);
      // each utterance: one interim result with its first word, then the final one
      expect(r.lines.filter((l) => l.startsWith('heard:'))).to.deep.equal([
        'heard:Hello?',
        'heard:Hi,',
        'heard:Okay,',
        'heard:That',
        'heard:Thanks,',
      ]);
      const hello = r.speech.filter((s) => s.transcript === 'Hello?');
      expect(hello.map((s) => s.final)).to.deep.equal([false, true]);
      expect(hello[0]!.utteranceId).to.equal(hello[1]!.utteranceId);
      expect(hello[1]!.confidence).to.be.below(r.speech.find((s) => s.final && s.transcript === TALKER_SCRIPT[0])!.confidence);
      expect(r.violations).to.deep.equal([]);
      const view = engine.view(r.leg!.engineCallId)!;
      expect(view).to.include({ persona: 'talker', status: 'ended', answeredBy: 'human', endReason: 'remote_hangup' });
      expect(view.farEndSpeech.map((u) => u.text)).to.deep.equal(['Hello?', ...TALKER_SCRIPT]);
      expect(view.agentSpeech.map((p) => [p.playbackId, p.heard, p.state])).to.deep.equal(
        [1, 2, 3, 4].map((i) => [`p${i}`, 'Okay then.', 'finished']),
      );
    });

    it('does not say hello when the agent speaks first', async () => {
      const r = new Recorder((line, rec) => {
        if (line === 'answered:human') rec.leg!.play('greeting', 'Hi, this is Ava from Acme.', VOICE);
      });
      await dial(NUMBER_OF_PERSONA.talker, r);
      await r.until(`said:${TALKER_SCRIPT[0]}`);
      expect(r.finals).to.deep.equal(['ringing', 'answered:human', 'finished:greeting', `said:${TALKER_SCRIPT[0]}`]);
    });

    it('fails no_answer when the ring timeout is shorter than the ring time', async () => {
      const r = new Recorder();
      await dial(NUMBER_OF_PERSONA.talker, r, 5);
      await r.until('failed:no_answer');
      expect(r.lines).to.deep.equal(['ringing', 'failed:no_answer']);
    });
  });

  describe('playback', () => {
    it('stopPlayback reports exactly the words heard so far, and drops the queue', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.silent, r);
      await r.until('answered:human');
      const before = performance.now();
      leg.play('p1', words(40), VOICE);
      const after = performance.now();
      leg.play('p2', 'and then some more', VOICE);
      expect(leg.isPlaying()).to.equal(true);
      await sleep(120);
      const t0 = performance.now();
      const stopped = leg.stopPlayback();
      const t1 = performance.now();
      expect(stopped.cut).to.deep.equal(['p1', 'p2']);
      const n = count(stopped.heard.p1!);
      // between the words spoken from the end of play() to the start of stopPlayback() and those of the widest window
      expect(n).to.be.within(Math.floor((t0 - after) / MS_PER_WORD), Math.floor((t1 - before) / MS_PER_WORD));
      expect(stopped.heard.p1).to.equal(words(n));
      expect(stopped.heard.p2).to.equal('');
      expect(leg.isPlaying()).to.equal(false);
      expect(leg.stopPlayback()).to.deep.equal({ cut: [], heard: {} });
      await r.until('finished:p2');
      expect(r.lines).to.deep.equal(['ringing', 'answered:human', 'finished:p1', 'finished:p2']);
      const view = engine.view(leg.engineCallId)!;
      expect(view.agentSpeech.map((p) => [p.playbackId, p.state, p.heard])).to.deep.equal([
        ['p1', 'cut', words(n)],
        ['p2', 'dropped', ''],
      ]);
    });

    it('plays queued playbacks one after another', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.silent, r);
      await r.until('answered:human');
      const start = performance.now();
      leg.play('p1', words(5), VOICE);
      leg.play('p2', words(5), VOICE);
      leg.play('p3', '', VOICE);
      await r.until('finished:p3');
      expect(performance.now() - start).to.be.at.least(10 * MS_PER_WORD - 2);
      expect(r.lines.slice(2)).to.deep.equal(['finished:p1', 'finished:p2', 'finished:p3']);
      const [p1, p2] = engine.view(leg.engineCallId)!.agentSpeech;
      expect(p2!.startedAt! >= p1!.endedAt!).to.equal(true);
      expect(leg.isPlaying()).to.equal(false);
    });

    it('plays what was queued before the answer once the far end picks up', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.silent, r);
      leg.play('early', 'Hello there', VOICE);
      await r.until('finished:early');
      expect(r.lines).to.deep.equal(['ringing', 'answered:human', 'finished:early']);
    });

    it('speech stopped before the answer was never heard, and the far end still picks up as usual', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.talker, r);
      leg.play('early', 'Hello there', VOICE);
      expect(leg.stopPlayback()).to.deep.equal({ cut: ['early'], heard: { early: '' } });
      await r.until('said:Hello?');
      // the stop's playbackFinished and the ringing are independent: either may come first
      expect(r.finals).to.include('finished:early');
      expect(r.finals.filter((l) => l !== 'finished:early')).to.deep.equal(['ringing', 'answered:human', 'said:Hello?']);
    });
  });

  describe('interrupter and backchanneler', () => {
    it('the interrupter starts talking at about 40% of a playback', async () => {
      let heardAtInterruption = -1;
      const r = new Recorder((line, rec) => {
        if (line === 'answered:human') rec.leg!.play('p1', words(15), SLOW);
        if (line === 'heard:Sorry,') heardAtInterruption = count(engine.view(rec.leg!.engineCallId)!.agentSpeech[0]!.heard);
      });
      await dial(NUMBER_OF_PERSONA.interrupter, r);
      await r.until('finished:p1');
      expect(r.finals.slice(0, 3)).to.deep.equal(['ringing', 'answered:human', `said:${INTERRUPTION}`]);
      expect(r.lines.indexOf('heard:Sorry,')).to.be.below(r.lines.indexOf('finished:p1'));
      expect(heardAtInterruption).to.be.within(5, 14); // 6 of 15 words at 40%
      expect(r.lines).not.to.include('said:Hello?');
      expect(engine.view(r.leg!.engineCallId)!.farEndSpeech[0]!.overAgent).to.equal(true);
    });

    it('an interruption the agent yields to cuts the playback; the talker replies after the agent next finishes', async () => {
      let stopped: ReturnType<CallLeg['stopPlayback']> | null = null;
      const r = new Recorder((line, rec) => {
        if (line === 'answered:human') rec.leg!.play('p1', words(15), SLOW);
        if (line === 'heard:Sorry,') stopped = rec.leg!.stopPlayback();
        if (line === `said:${INTERRUPTION}`) rec.leg!.play('p2', 'Of course.', VOICE);
      });
      await dial(NUMBER_OF_PERSONA.interrupter, r);
      await r.until(`said:${TALKER_SCRIPT[0]}`);
      expect(stopped!.cut).to.deep.equal(['p1']);
      expect(count(stopped!.heard.p1!)).to.be.within(5, 14);
      expect(r.finals).to.deep.equal([
        'ringing',
        'answered:human',
        'finished:p1',
        `said:${INTERRUPTION}`,
        'finished:p2',
        `said:${TALKER_SCRIPT[0]}`,
      ]);
    });

    it('the backchanneler says uh-huh halfway through, then yeah, and replies after each playback', async () => {
      const at: number[] = [];
      const r = new Recorder((line, rec) => {
        if (line === 'answered:human') rec.leg!.play('p1', words(12), SLOW);
        if (line === `said:${TALKER_SCRIPT[0]}`) rec.leg!.play('p2', words(12), SLOW);
        if (line === 'heard:uh-huh' || line === 'heard:yeah') at.push(count(engine.view(rec.leg!.engineCallId)!.agentSpeech.at(-1)!.heard));
      });
      await dial(NUMBER_OF_PERSONA.backchanneler, r);
      await r.until(`said:${TALKER_SCRIPT[1]}`);
      expect(r.finals).to.deep.equal([
        'ringing',
        'answered:human',
        'said:uh-huh',
        'finished:p1',
        `said:${TALKER_SCRIPT[0]}`,
        'said:yeah',
        'finished:p2',
        `said:${TALKER_SCRIPT[1]}`,
      ]);
      expect(at).to.have.length(2);
      for (const n of at) expect(n).to.be.within(5, 11); // 6 of 12 words at 50%
    });

    it('short playbacks get no cue', async () => {
      const r = new Recorder((line, rec) => {
        if (line === 'answered:human') rec.leg!.play('p1', 'Just four words here.', SLOW);
      });
      await dial(NUMBER_OF_PERSONA.backchanneler, r);
      await r.until(`said:${TALKER_SCRIPT[0]}`);
      expect(r.finals).to.deep.equal(['ringing', 'answered:human', 'finished:p1', `said:${TALKER_SCRIPT[0]}`]);
    });
  });

  describe('keypad menu', () => {
    it('repeats the menu on a wrong key and connects on 1, naming it, then goes on as the talker', async () => {
      let prompts = 0;
      const r = new Recorder((line, rec) => {
        if (line === `said:${MENU_PROMPT}`) void rec.leg!.sendDigits(++prompts === 1 ? '3' : '1');
      });
      await dial(NUMBER_OF_PERSONA.menu, r);
      await r.until('said:Hello?');
      expect(r.finals).to.deep.equal([
        'ringing',
        'answered:human',
        `said:${MENU_PROMPT}`,
        `said:${MENU_PROMPT}`,
        'said:You pressed 1. Connecting you to sales.',
        'said:Hello?',
      ]);
      expect(engine.view(r.leg!.engineCallId)!.digitsFromAgent).to.equal('31');
    });

    it('a key cuts the prompt short', async () => {
      const r = new Recorder((line, rec) => {
        if (line === 'heard:Welcome.') void rec.leg!.sendDigits('2');
      });
      await dial(NUMBER_OF_PERSONA.menu, r);
      await r.until('said:You pressed 2. Connecting you to support.');
      const prompt = r.speech.find((s) => s.final)!;
      expect(MENU_PROMPT.startsWith(prompt.transcript)).to.equal(true);
      expect(prompt.transcript.length).to.be.below(MENU_PROMPT.length);
    });

    it('sendDigits rejects tones that do not exist', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.menu, r);
      await r.until('answered:human');
      await expectRejection(leg.sendDigits('12x'), TelephonyError);
    });
  });

  describe('voicemail and screener', () => {
    it('voicemail: greeting as caller speech, beep, records the agent, hangs up after a silence', async () => {
      const message = 'Hi Sam, this is Ava from Acme, please call me back.';
      const r = new Recorder((line, rec) => {
        if (line === 'beep') rec.leg!.play('vm', message, VOICE);
      });
      await dial(NUMBER_OF_PERSONA.voicemail, r);
      await r.until('ended:remote_hangup');
      expect(r.finals).to.deep.equal([
        'ringing',
        'answered:voicemail',
        `said:${VOICEMAIL_GREETING}`,
        'beep',
        'finished:vm',
        'ended:remote_hangup',
      ]);
      const view = engine.view(r.leg!.engineCallId)!;
      expect(view.voicemailMessage).to.equal(message);
      expect(view.beepAt).to.be.a('string');
      // it hung up three reply pauses after the message
      expect(Date.parse(view.endedAt!) - Date.parse(view.agentSpeech[0]!.endedAt!)).to.be.at.least(3 * FAST.replyPauseMs - 2);
    });

    it('screener: asks, listens, keeps what it heard, holds, then the person picks up as the talker', async () => {
      const intro = 'This is Ava from Acme about your order.';
      const r = new Recorder((line, rec) => {
        if (line === `said:${SCREENER_PROMPT}`) rec.leg!.play('intro', intro, VOICE);
        if (line === `said:${SCREENER_HUMAN}`) rec.leg!.play('hello', 'Hi Sam!', VOICE);
      });
      await dial(NUMBER_OF_PERSONA.screener, r);
      await r.until(`said:${TALKER_SCRIPT[0]}`);
      expect(r.finals).to.deep.equal([
        'ringing',
        'answered:screener',
        `said:${SCREENER_PROMPT}`,
        'finished:intro',
        `said:${SCREENER_HOLD}`,
        `said:${SCREENER_HUMAN}`,
        'finished:hello',
        `said:${TALKER_SCRIPT[0]}`,
      ]);
      expect(engine.view(r.leg!.engineCallId)!.screenerHeard).to.equal(intro);
    });
  });

  describe('the other personas', () => {
    it('busy, no answer, invalid number, and a provider error', async () => {
      const busy = new Recorder();
      const noAnswer = new Recorder();
      const invalid = new Recorder();
      const unknownArea = new Recorder();
      await dial(NUMBER_OF_PERSONA.busy, busy);
      const t = performance.now();
      await dial(NUMBER_OF_PERSONA['no-answer'], noAnswer, 80);
      await dial(NUMBER_OF_PERSONA['invalid-number'], invalid);
      await dial('+19995550100', unknownArea);
      await Promise.all([busy.until('failed:busy'), noAnswer.until('failed:no_answer'), invalid.until('failed:invalid_number')]);
      expect(performance.now() - t).to.be.at.least(78);
      await unknownArea.until('failed:invalid_number');
      expect(busy.lines).to.deep.equal(['ringing', 'failed:busy']);
      expect(noAnswer.lines).to.deep.equal(['ringing', 'failed:no_answer']);
      expect(invalid.lines).to.deep.equal(['failed:invalid_number']);
      const err = await expectRejection(dial(NUMBER_OF_PERSONA['provider-error'], new Recorder()), TelephonyError);
      expect(err.retryable).to.equal(true);
      await expectRejection(dial('0800 123', new Recorder()), TelephonyError);
      // a failed dial is over: hanging up sends nothing more
      await busy.leg!.hangup();
      await sleep(30);
      expect(busy.lines).to.deep.equal(['ringing', 'failed:busy']);
      expect([busy, noAnswer, invalid].flatMap((x) => x.violations)).to.deep.equal([]);
    });

    it('silent answers and never speaks; hangup is idempotent and nothing follows ended', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.silent, r);
      await r.until('answered:human');
      await sleep(100);
      await leg.hangup();
      await leg.hangup();
      leg.play('late', 'anyone there', VOICE);
      expect(leg.stopPlayback()).to.deep.equal({ cut: [], heard: {} });
      await sleep(40);
      expect(r.lines).to.deep.equal(['ringing', 'answered:human', 'ended:local_hangup']);
      expect(r.violations).to.deep.equal([]);
    });

    it('hang-up lets the first playback finish, then hangs up', async () => {
      const r = new Recorder((line, rec) => {
        if (line === 'answered:human') rec.leg!.play('p1', 'Hello, this is Ava.', VOICE);
      });
      await dial(NUMBER_OF_PERSONA['hang-up'], r);
      await r.until('ended:remote_hangup');
      expect(r.lines).to.deep.equal(['ringing', 'answered:human', 'finished:p1', 'ended:remote_hangup']);
    });

    it('a playback cut by the end of the call is reported once by stopPlayback', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.silent, r);
      await r.until('answered:human');
      leg.play('long', words(50), VOICE);
      await sleep(60);
      engine.hangupRemote(leg.engineCallId);
      await r.until('ended:remote_hangup');
      const stopped = leg.stopPlayback();
      expect(stopped.cut).to.deep.equal(['long']);
      expect(count(stopped.heard.long!)).to.be.within(1, 49);
      expect(leg.stopPlayback().cut).to.deep.equal([]);
      expect(r.lines).to.deep.equal(['ringing', 'answered:human', 'ended:remote_hangup']);
    });
  });

  describe('transfer and bridge', () => {
    it('a transfer ends the leg with transferred and records the target', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.talker, r);
      await r.until('answered:human');
      await leg.transfer('+14155550111');
      await r.until('ended:transferred');
      const view = engine.view(leg.engineCallId)!;
      expect(view).to.include({ transferredTo: '+14155550111', endReason: 'transferred', status: 'ended' });
      await expectRejection(leg.transfer('+14155550112'), TelephonyError);
    });

    it('a transfer to the provider-error number is refused and the leg stays up', async () => {
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.silent, r);
      await r.until('answered:human');
      const err = await expectRejection(leg.transfer(NUMBER_OF_PERSONA['provider-error']), TelephonyError);
      expect(err.retryable).to.equal(true);
      expect(engine.view(leg.engineCallId)).to.include({ status: 'answered', transferredTo: null });
    });

    it('bridges to a SIP URI that answers; a failing, unreachable or busy host rejects and the leg stays up', async () => {
      const { leg, r } = await inbound(engine, '+14155550150');
      const failing = await expectRejection(leg.bridge('sip:+14155550100@fail.pbx.example.com'), SipBridgeError);
      expect(failing.message).to.equal('SIP 503 Service Unavailable from sip:+14155550100@fail.pbx.example.com');
      const unreachable = await expectRejection(leg.bridge('sip:desk@unreachable.example.com;transport=tls'), SipBridgeError);
      expect(unreachable.failure).to.deep.include({ kind: 'response', status: 408 });
      const busy = await expectRejection(leg.bridge('sip:desk@busy.pbx.example.com'), SipBridgeError);
      expect(busy.failure).to.deep.include({ kind: 'response', status: 486 });
      expect(engine.view(leg.engineCallId)!.status).to.equal('answered');
      await leg.bridge('sip:desk@pbx.example.com');
      const view = engine.view(leg.engineCallId)!;
      expect(view.bridgedTo).to.equal('sip:desk@pbx.example.com');
      expect(view.bridgeAttempts.map((a) => a.outcome)).to.deep.equal([
        'SIP 503 Service Unavailable',
        'SIP 408 Request Timeout',
        'SIP 486 Busy Here',
        'answered',
      ]);
      expect(view.status).to.equal('answered');
      await leg.hangup();
      expect(r.lines).to.deep.equal(['answered:human', 'ended:local_hangup']);
    });
  });

  describe('inbound calls and the sandbox controls', () => {
    it('an accepted offer is answered at once and the caller speaks only when told', async () => {
      const { leg, r, callId, offers } = await inbound(engine, '+14155550150');
      expect(offers).to.have.length(1);
      expect(offers[0]).to.include({ from: '+14155550150', to: '+14155550101', engineCallId: leg.engineCallId });
      await sleep(60);
      expect(r.lines).to.deep.equal(['answered:human']);
      engine.say(callId, 'I have a question about my bill');
      await r.until('said:I have a question about my bill');
      engine.pressDigits(callId, '12#');
      await r.until('digit:#');
      leg.play('answer', words(30), VOICE);
      engine.say(callId, 'wait');
      await r.until('said:wait');
      engine.hangupRemote(callId);
      await r.until('ended:remote_hangup');
      expect(r.lines).to.deep.equal([
        'answered:human',
        'heard:I',
        'said:I have a question about my bill',
        'digit:1',
        'digit:2',
        'digit:#',
        'heard:wait',
        'said:wait',
        'ended:remote_hangup',
      ]);
      const view = engine.view(callId)!;
      expect(view).to.include({ persona: 'driven', direction: 'inbound', digitsFromFarEnd: '12#', endReason: 'remote_hangup' });
      expect(view.farEndSpeech.map((u) => [u.text, u.overAgent, u.fromSandboxApi])).to.deep.equal([
        ['I have a question about my bill', false, true],
        ['wait', true, true],
      ]);
      expect(view.agentSpeech[0]!.state).to.equal('cut');
      expect(() => engine.say(callId, 'hello?')).to.throw(SandboxCallNotConnectedError);
      expect(() => engine.hangupRemote(callId)).to.throw(SandboxCallNotConnectedError);
      expect(() => engine.say('call_nope', 'hello?')).to.throw(SandboxCallNotFoundError);
      expect(engine.view('call_nope')).to.equal(null);
      expect(r.violations).to.deep.equal([]);
    });

    it('an inbound caller from a persona number follows it', async () => {
      const { r } = await inbound(engine, NUMBER_OF_PERSONA.talker);
      await r.until('said:Hello?');
      expect(r.finals).to.deep.equal(['answered:human', 'said:Hello?']);
    });

    it('a refused offer rejects with the reason; without a handler it is refused too', async () => {
      await expectRejection(engine.ringInbound({ from: '+14155550150', to: '+14155550101' }), InboundCallRefusedError);
      engine.onInbound(async () => ({ accept: false, reason: '+14155550101 is not an active number of the platform' }));
      const err = await expectRejection(engine.ringInbound({ from: '+14155550150', to: '+14155550101' }), InboundCallRefusedError);
      expect(err.reason).to.equal('+14155550101 is not an active number of the platform');
      expect(engine.list()).to.deep.equal([]);
    });

    it('hanging up an outbound call that still rings declines it', async () => {
      // it rings longer than the test can take: with 20 ms of ringing a busy machine let it answer before the hang-up
      await engine.close();
      engine = new SandboxVoiceEngine({ ...FAST, ringMs: 60_000 }, new SystemClock(), createLogger('silent'));
      const r = new Recorder();
      const leg = await dial(NUMBER_OF_PERSONA.talker, r, 120_000);
      await r.until('ringing');
      engine.hangupRemote(leg.engineCallId);
      await r.until('failed:busy');
      expect(r.lines).to.deep.equal(['ringing', 'failed:busy']);
    });
  });

  describe('the engine', () => {
    it('close hangs up every leg', async () => {
      const a = new Recorder();
      const b = new Recorder();
      await dial(NUMBER_OF_PERSONA.silent, a);
      await dial(NUMBER_OF_PERSONA.silent, b);
      await Promise.all([a.until('answered:human'), b.until('answered:human')]);
      await engine.close();
      expect(a.lines.at(-1)).to.equal('ended:local_hangup');
      expect(b.lines.at(-1)).to.equal('ended:local_hangup');
      await expectRejection(dial(NUMBER_OF_PERSONA.silent, new Recorder()), TelephonyError);
    });

    it('keeps the most recent ended legs, newest first', async () => {
      const small = new SandboxVoiceEngine(FAST, new SystemClock(), createLogger('silent'), { keepEnded: 2 });
      const legs: CallLeg[] = [];
      for (let i = 0; i < 3; i++) {
        const r = new Recorder();
        legs.push(await small.dial({ callId: `call_${i}`, from: FROM, to: NUMBER_OF_PERSONA.busy, ringTimeoutMs: 1000, voice: 'v' }, r));
        await r.until('failed:busy');
      }
      expect(small.list().map((v) => v.callId)).to.deep.equal(['call_2', 'call_1']);
      expect(small.view('call_0')).to.equal(null);
      expect(small.view('call_1')).to.include({ status: 'failed', engineCallId: legs[1]!.engineCallId });
      await small.close();
    });

    it('documents one number per persona in 646-555-0150…0169', () => {
      const table = voiceMagicNumbers();
      expect(table.map((m) => m.persona)).to.have.members(Object.keys(NUMBER_OF_PERSONA));
      for (const m of table) {
        expect(m.phoneNumber).to.match(/^\+1646555015\d$|^\+1646555016\d$/);
        expect(m.description).to.be.a('string').and.not.equal('');
      }
    });
  });
});

/** Rings an inbound call into `engine`, accepted by a recording listener. */
async function inbound(engine: SandboxVoiceEngine, from: string) {
  const r = new Recorder();
  const offers: { engineCallId: string; from: string; to: string }[] = [];
  engine.onInbound(async (offer): Promise<InboundDecision> => {
    offers.push(offer);
    return { accept: true, callId: `call_in_${offers.length}`, listener: r, onLeg: (l) => (r.leg = l) };
  });
  const { callId } = await engine.ringInbound({ from, to: '+14155550101' });
  expect(r.leg).not.to.equal(null);
  return { leg: r.leg!, r, callId, offers };
}

async function expectRejection<E extends Error>(p: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(type);
    return err as E;
  }
  throw new Error(`expected a ${type.name}`);
}
