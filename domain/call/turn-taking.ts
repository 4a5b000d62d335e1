/**
 * Turn-taking rules of a live call (docs/calls.md#interruptions): when speech from the far end cuts the agent's
 * turn, and when it is only a backchannel ("uh-huh") that lets the agent go on.
 */
const BACKCHANNEL = new Set([
  'yeah',
  'yes',
  'yep',
  'uh-huh',
  'uh huh',
  'mm-hmm',
  'mhm',
  'mm hmm',
  'hmm',
  'okay',
  'ok',
  'right',
  'sure',
  'i see',
  'got it',
  'alright',
  'all right',
]);

const normalise = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z\s-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

const PHRASES = [...BACKCHANNEL].map((p) => p.split(' '));

/** Whether the words are a run of backchannel expressions, one- or two-word ones: "yeah okay", "uh huh right", "okay i see". */
const onlyBackchannel = (words: readonly string[]): boolean =>
  words.length === 0 || PHRASES.some((p) => p.every((w, i) => words[i] === w) && onlyBackchannel(words.slice(p.length)));

/** A short acknowledgement, at most a few words, made only of backchannel expressions. */
export function isBackchannel(transcript: string): boolean {
  const t = normalise(transcript);
  if (!t || t.split(' ').length > 3) return false;
  return onlyBackchannel(t.split(' '));
}

/**
 * How long the far end must keep talking over the agent before the agent stops: 0 ms at sensitivity 1, 1.5 s at
 * sensitivity 0.1; at 0 the agent is never cut (it finishes its turn, then hears the caller).
 */
export function bargeInDelayMs(interruptionSensitivity: number): number | null {
  const s = Math.min(1, Math.max(0, interruptionSensitivity));
  if (s === 0) return null;
  return Math.round((1 - s) * 1667);
}

/**
 * What a call screener says after it has taken the agent's name and reason, while it fetches the person
 * ("Thanks, please stay on the line."): heard and recorded, never answered (docs/calls.md#call-screening).
 */
export function isScreenerHold(transcript: string): boolean {
  return /\b(stay on the line|please hold|hold on|one moment|connecting you|let me see if)\b/i.test(transcript);
}
