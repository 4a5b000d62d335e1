import type { AnsweredBy } from '../../../application/calls/voice-engine.port.js';
import { sandboxLineInfo } from '../carrier/sandbox-carrier.js';

/**
 * Who answers a sandbox call, decided by the dialled number (docs/sandbox.md#voice). The magic numbers are
 * `+1 646 555 0150` upwards, in the fictional 555-01XX range: the carrier's inventory is 555-0100…0119 and the
 * SMS magic numbers are 415/212 555-0120…0199, so no number the platform owns or texts specially is a voice
 * persona. Every other valid number answers as the talker; a number that lookup calls invalid (e.g.
 * `+19995550100`) fails `invalid_number`.
 */

export type VoicePersona =
  | 'talker'
  | 'busy'
  | 'no-answer'
  | 'provider-error'
  | 'invalid-number'
  | 'voicemail'
  | 'screener'
  | 'menu'
  | 'interrupter'
  | 'backchanneler'
  | 'silent'
  | 'hang-up';

/** The talker's lines, one per finished agent turn; it hangs up shortly after the last. */
export const TALKER_SCRIPT = ['Hi, who is this?', 'Okay, tell me more.', 'That sounds good.', 'Thanks, bye!'] as const;
/** What a talker says when it picks up and the agent is not speaking yet. */
export const TALKER_GREETING = 'Hello?';
export const VOICEMAIL_GREETING = "Hi, you've reached Sam. Please leave a message after the beep.";
export const SCREENER_PROMPT =
  "Hi, the person you're calling is using a screening service. Please say your name and the reason for your call.";
export const SCREENER_HOLD = 'Thanks, please stay on the line.';
export const SCREENER_HUMAN = 'Hello, this is Sam.';
export const MENU_PROMPT = 'Welcome. Press 1 for sales or 2 for support.';
export const MENU_OPTIONS: Readonly<Record<string, string>> = { '1': 'sales', '2': 'support' };
export const menuConnecting = (digit: string, department: string) => `You pressed ${digit}. Connecting you to ${department}.`;
export const MENU_GOODBYE = "Sorry, we didn't get your selection. Goodbye.";
export const INTERRUPTION = 'Sorry, can I ask something?';
export const BACKCHANNELS = ['uh-huh', 'yeah', 'mm-hmm'] as const;

/** A playback of more words than this is long enough for the interrupter and the backchanneler to react to. */
export const FEW_WORDS = 4;

export type PersonaNumber = Readonly<{ persona: VoicePersona; answeredBy: AnsweredBy | null; description: string }>;

export const PERSONA_NUMBERS: Readonly<Record<string, PersonaNumber>> = {
  '+16465550150': {
    persona: 'talker',
    answeredBy: 'human',
    description:
      'answers after SANDBOX_VOICE_RING_MS and says "Hello?" after the reply pause unless the agent is already speaking; after each ' +
      `agent turn that finishes it says its next line after the pause (${TALKER_SCRIPT.map((l) => `"${l}"`).join(', ')}), ` +
      'then hangs up. Every number that is not magic behaves like this',
  },
  '+16465550151': { persona: 'busy', answeredBy: null, description: 'rings, then fails `busy` after the ring time' },
  '+16465550152': { persona: 'no-answer', answeredBy: null, description: 'rings until the ring timeout, then fails `no_answer`' },
  '+16465550153': {
    persona: 'provider-error',
    answeredBy: null,
    description: 'dial is refused at once (TelephonyError, retryable); as a transfer target the transfer is refused',
  },
  '+16465550154': {
    persona: 'invalid-number',
    answeredBy: null,
    description: 'fails `invalid_number` ("The number is not in service.") after the reply pause, without ringing',
  },
  '+16465550155': {
    persona: 'voicemail',
    answeredBy: 'voicemail',
    description:
      `answers as \`voicemail\` and plays its greeting ("${VOICEMAIL_GREETING}") as caller speech, then beeps and records the ` +
      'agent (it never replies); hangs up 3 reply pauses after the agent stops speaking, after 20 reply pauses if the agent ' +
      'says nothing, or at the message limit (330 words)',
  },
  '+16465550156': {
    persona: 'screener',
    answeredBy: 'screener',
    description:
      `answers as \`screener\`: "${SCREENER_PROMPT}", waits for the agent to speak and finish, keeps what it heard, says ` +
      `"${SCREENER_HOLD}", then a person picks up ("${SCREENER_HUMAN}") and it goes on as the talker`,
  },
  '+16465550157': {
    persona: 'menu',
    answeredBy: 'human',
    description:
      `a keypad menu: "${MENU_PROMPT}"; a key cuts the prompt short; 1 or 2 answers "${menuConnecting('1', 'sales')}" ` +
      '(naming the key and the department) and it goes on as the talker; another key repeats the menu; no key within 10 reply ' +
      'pauses repeats it, and after three prompts it says goodbye and hangs up',
  },
  '+16465550158': {
    persona: 'interrupter',
    answeredBy: 'human',
    description: `the talker, but at 40% of every agent playback longer than ${FEW_WORDS} words it says "${INTERRUPTION}"`,
  },
  '+16465550159': {
    persona: 'backchanneler',
    answeredBy: 'human',
    description:
      `the talker, but at 50% of every agent playback longer than ${FEW_WORDS} words it says ` +
      `${BACKCHANNELS.map((b) => `"${b}"`).join(', ')} (in turn), and replies normally once the playback has finished`,
  },
  '+16465550160': { persona: 'silent', answeredBy: 'human', description: 'answers and never speaks' },
  '+16465550161': {
    persona: 'hang-up',
    answeredBy: 'human',
    description: "answers without a word, lets the agent's first playback finish, then hangs up after the reply pause",
  },
};

/** The personas an inbound call can follow when it comes from their number; from any other number the caller is driven. */
export const INBOUND_PERSONAS: ReadonlySet<VoicePersona> = new Set(['talker', 'interrupter', 'backchanneler', 'silent', 'hang-up']);

/** Who answers an outbound call to `to` (deterministic: the same number always behaves the same way). */
export function personaFor(to: string): VoicePersona {
  const magic = PERSONA_NUMBERS[to];
  if (magic) return magic.persona;
  return sandboxLineInfo(to).valid ? 'talker' : 'invalid-number';
}

/** The persona an inbound call from `from` follows, or null for a caller driven by the sandbox API. */
export function inboundPersonaFor(from: string): VoicePersona | null {
  const persona = PERSONA_NUMBERS[from]?.persona;
  return persona && INBOUND_PERSONAS.has(persona) ? persona : null;
}

export type VoiceMagicNumber = Readonly<{ phoneNumber: string } & PersonaNumber>;

/** The table of docs/sandbox.md#voice, in number order. */
export function voiceMagicNumbers(): VoiceMagicNumber[] {
  return Object.entries(PERSONA_NUMBERS).map(([phoneNumber, p]) => ({ phoneNumber, ...p }));
}

/** The number of each persona (every persona has one): for tests and examples. */
export const NUMBER_OF_PERSONA = Object.fromEntries(Object.entries(PERSONA_NUMBERS).map(([n, p]) => [p.persona, n])) as Readonly<
  Record<VoicePersona, string>
>;
