import { performance } from 'node:perf_hooks';
import type { Playback } from './agent-speech.js';
import {
  BACKCHANNELS,
  FEW_WORDS,
  INTERRUPTION,
  MENU_GOODBYE,
  MENU_OPTIONS,
  MENU_PROMPT,
  menuConnecting,
  SCREENER_HOLD,
  SCREENER_HUMAN,
  SCREENER_PROMPT,
  TALKER_GREETING,
  TALKER_SCRIPT,
  VOICEMAIL_GREETING,
  type VoicePersona,
} from './magic.js';
import { msPerWordAt, type Timers } from './timing.js';
import { type SandboxVoiceTiming, VOICEMAIL_MAX_WORDS } from './types.js';

/** Where a far end is in its persona's script. */
export type Phase =
  | { kind: 'driven' }
  | { kind: 'silent' }
  | { kind: 'hang-up'; hangingUp: boolean }
  | { kind: 'talker'; style: 'plain' | 'interrupter' | 'backchanneler'; line: number; backchannels: number }
  | { kind: 'voicemail'; stage: 'greeting' | 'recording'; spoke: boolean; silence: NodeJS.Timeout | null }
  | { kind: 'screener'; stage: 'prompt' | 'listening' | 'holding' }
  | { kind: 'menu'; stage: 'choosing' | 'connecting' | 'goodbye'; prompts: number; noInput: NodeJS.Timeout | null };

export const phaseOf = (persona: VoicePersona | 'driven'): Phase => {
  switch (persona) {
    case 'talker':
    case 'interrupter':
    case 'backchanneler':
      return { kind: 'talker', style: persona === 'talker' ? 'plain' : persona, line: 0, backchannels: 0 };
    case 'voicemail':
      return { kind: 'voicemail', stage: 'greeting', spoke: false, silence: null };
    case 'screener':
      return { kind: 'screener', stage: 'prompt' };
    case 'menu':
      return { kind: 'menu', stage: 'choosing', prompts: 0, noInput: null };
    case 'silent':
      return { kind: 'silent' };
    case 'hang-up':
      return { kind: 'hang-up', hangingUp: false };
    case 'driven':
    case 'busy':
    case 'no-answer':
    case 'provider-error':
    case 'invalid-number':
      return { kind: 'driven' };
  }
};

/** What a persona can do and see on its leg. */
export type PersonaLine = Readonly<{
  timing: SandboxVoiceTiming;
  /** the persona's own timers: dropped when it stops following its script */
  cues: Timers;
  say: (text: string, afterwards?: () => void) => void;
  agentPlaying: () => boolean;
  currentPlayback: () => Playback | null;
  heardWords: (p: Playback, mono: number) => number;
  /** whether the agent has said something the screener heard */
  screenedSomething: () => boolean;
  /** the far end is speaking, or about to */
  farEndBusy: () => boolean;
  /** stops what the persona is saying (a key cuts a menu's prompt) */
  cutOwnSpeech: () => void;
  beep: () => void;
  hangUp: (detail: string) => void;
}>;

/**
 * The far end's behaviour on one leg (magic.ts): each persona reacts to the answer, to the agent's playbacks and
 * turns, and to the agent's keys, with its own timers; `driven` (an inbound caller, a call transferred or bridged
 * away) does nothing by itself.
 */
export class FarEndPersona {
  private current: Phase;
  private reply: NodeJS.Timeout | null = null;

  constructor(
    persona: VoicePersona | 'driven',
    private readonly line: PersonaLine,
  ) {
    this.current = phaseOf(persona);
  }

  /** who speaks now: an utterance's continuation runs only while the phase that said it lasts */
  get phase(): Phase {
    return this.current;
  }

  private get pause(): number {
    return this.line.timing.replyPauseMs;
  }

  private after(ms: number, f: () => void): NodeJS.Timeout {
    return this.line.cues.after(ms, f);
  }

  private replyAfter(ms: number, f: () => void): void {
    this.line.cues.cancel(this.reply);
    this.reply = this.after(ms, () => {
      this.reply = null;
      f();
    });
  }

  private dropReply(): void {
    this.line.cues.cancel(this.reply);
    this.reply = null;
  }

  onAnswered(): void {
    const ph = this.current;
    switch (ph.kind) {
      case 'talker':
        this.greetUnlessSpokenTo();
        return;
      case 'voicemail':
        this.line.say(VOICEMAIL_GREETING, () => this.voicemailBeep(ph));
        return;
      case 'screener':
        this.line.say(SCREENER_PROMPT, () => {
          ph.stage = 'listening';
          this.screenerCheck(ph);
        });
        return;
      case 'menu':
        this.menuPrompt(ph);
        return;
      case 'driven':
      case 'silent':
      case 'hang-up':
        return;
    }
  }

  onPlaybackStarted(p: Playback): void {
    const ph = this.current;
    switch (ph.kind) {
      case 'talker': {
        this.dropReply(); // the agent speaks: a reply waits for the end of its turn
        if (ph.style === 'plain' || p.words.length <= FEW_WORDS) return;
        const share = ph.style === 'interrupter' ? 0.4 : 0.5;
        p.cue = this.after(p.words.length * p.msPerWord * share, () => {
          p.cue = null;
          if (this.line.currentPlayback() !== p || this.line.farEndBusy() || this.current !== ph) return;
          this.line.say(ph.style === 'interrupter' ? INTERRUPTION : BACKCHANNELS[ph.backchannels++ % BACKCHANNELS.length]!);
        });
        return;
      }
      case 'voicemail':
        if (ph.stage !== 'recording') return;
        ph.spoke = true;
        p.recordFrom = 0;
        this.line.cues.cancel(ph.silence);
        ph.silence = null;
        return;
      case 'screener':
        if (ph.stage !== 'holding') p.screened = true;
        this.dropReply();
        return;
      case 'driven':
      case 'silent':
      case 'hang-up':
      case 'menu':
        return;
    }
  }

  /** A playback ended, naturally or cut. */
  onPlaybackEnded(): void {
    const ph = this.current;
    if (ph.kind !== 'hang-up' || ph.hangingUp) return;
    ph.hangingUp = true;
    this.after(this.pause, () => this.line.hangUp('the far end hung up after the first thing the agent said'));
  }

  /** The agent stopped speaking on an answered call: its queue drained, or its speech was stopped. */
  onAgentTurnEnded(): void {
    const ph = this.current;
    switch (ph.kind) {
      case 'talker':
        this.replyAfterPause(ph);
        return;
      case 'voicemail':
        if (ph.stage !== 'recording' || !ph.spoke) return;
        this.line.cues.cancel(ph.silence);
        ph.silence = this.after(3 * this.pause, () => {
          if (!this.line.agentPlaying()) this.line.hangUp('the voicemail recorded a message and hung up');
        });
        return;
      case 'screener':
        if (ph.stage === 'listening') this.screenerCheck(ph);
        return;
      case 'driven':
      case 'silent':
      case 'hang-up':
      case 'menu':
        return;
    }
  }

  onAgentDigit(digit: string): void {
    const ph = this.current;
    if (ph.kind !== 'menu' || ph.stage !== 'choosing') return;
    this.line.cues.cancel(ph.noInput);
    ph.noInput = null;
    // a key cuts the menu's own speech short, as a menu listens for keys while it talks
    this.line.cutOwnSpeech();
    const department = MENU_OPTIONS[digit];
    if (!department) {
      ph.prompts = 0; // a wrong key is an answer: the menu starts over
      this.menuPrompt(ph);
      return;
    }
    ph.stage = 'connecting';
    this.line.say(menuConnecting(digit, department), () => {
      this.current = phaseOf('talker');
      this.greetUnlessSpokenTo();
    });
  }

  /** The far end stops following its persona (transferred away, bridged to a SIP endpoint). */
  becomeDriven(): void {
    this.line.cues.clear();
    this.reply = null;
    const p = this.line.currentPlayback();
    if (p) p.cue = null;
    this.current = { kind: 'driven' };
  }

  /** What the persona is doing on an answered call; null while it is driven. */
  stage(): string | null {
    const ph = this.current;
    switch (ph.kind) {
      case 'talker':
        return `talker: ${ph.line} of ${TALKER_SCRIPT.length} lines said`;
      case 'voicemail':
        return `voicemail: ${ph.stage}`;
      case 'screener':
        return `screener: ${ph.stage}`;
      case 'menu':
        return `menu: ${ph.stage}`;
      case 'hang-up':
        return ph.hangingUp ? 'hang-up: hanging up' : 'hang-up: waiting for the first playback';
      case 'silent':
        return 'silent';
      case 'driven':
        return null;
    }
  }

  private greetUnlessSpokenTo(): void {
    this.replyAfter(this.pause, () => {
      if (!this.line.agentPlaying() && !this.line.farEndBusy()) this.line.say(TALKER_GREETING);
    });
  }

  /** The talker's next line, a pause after the agent's turn, unless someone speaks first. */
  private replyAfterPause(ph: Extract<Phase, { kind: 'talker' }>): void {
    // the far end is talking (it interrupted, or the sandbox API speaks): the next turn is the agent's
    if (this.line.farEndBusy()) return;
    this.replyAfter(this.pause, () => {
      if (this.line.agentPlaying() || this.line.farEndBusy() || this.current !== ph || ph.line >= TALKER_SCRIPT.length) return;
      const text = TALKER_SCRIPT[ph.line++]!;
      const last = ph.line === TALKER_SCRIPT.length;
      this.line.say(text, last ? () => this.after(this.pause, () => this.line.hangUp('the far end said goodbye')) : undefined);
    });
  }

  private voicemailBeep(ph: Extract<Phase, { kind: 'voicemail' }>): void {
    ph.stage = 'recording';
    this.line.beep();
    const p = this.line.currentPlayback();
    if (p) {
      p.recordFrom = this.line.heardWords(p, performance.now());
      ph.spoke = true;
    }
    this.after(20 * this.pause, () => {
      if (!ph.spoke) this.line.hangUp('the voicemail heard no message and hung up');
    });
    this.after(VOICEMAIL_MAX_WORDS * msPerWordAt(this.line.timing.wordsPerMinute), () =>
      this.line.hangUp('the voicemail message reached its limit'),
    );
  }

  /** The screener moves on once the agent has said something and stopped. */
  private screenerCheck(ph: Extract<Phase, { kind: 'screener' }>): void {
    if (this.line.agentPlaying() || !this.line.screenedSomething()) return;
    this.replyAfter(this.pause, () => {
      if (this.line.agentPlaying() || this.current !== ph || ph.stage !== 'listening') return;
      ph.stage = 'holding';
      this.line.say(SCREENER_HOLD, () =>
        this.after(2 * this.pause, () => {
          if (this.current !== ph) return;
          this.current = phaseOf('talker');
          this.line.say(SCREENER_HUMAN);
        }),
      );
    });
  }

  private menuPrompt(ph: Extract<Phase, { kind: 'menu' }>): void {
    ph.prompts++;
    this.line.say(MENU_PROMPT, () => {
      this.line.cues.cancel(ph.noInput);
      ph.noInput = this.after(10 * this.pause, () => {
        ph.noInput = null;
        if (this.current !== ph || ph.stage !== 'choosing') return;
        if (ph.prompts < 3) {
          this.menuPrompt(ph);
          return;
        }
        ph.stage = 'goodbye';
        this.line.say(MENU_GOODBYE, () => this.after(this.pause, () => this.line.hangUp('the menu got no selection')));
      });
    });
  }
}
