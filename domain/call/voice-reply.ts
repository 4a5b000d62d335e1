/**
 * What a voice webhook may answer (docs/calls.md#replies): `{text}`, or NDJSON lines of the same objects; `interim`
 * lines are spoken at once; `action: "transfer"` cold-transfers to the agent's transfer number; `digits` (also
 * `press_digit`, `dtmf`) sends keypad tones; `action: "end_call"` hangs up after the speech.
 */
export type VoiceReply = Readonly<{
  text: string | null;
  interim: boolean;
  action: 'transfer' | 'end_call' | null;
  digits: string | null;
}>;

const DIGITS = /^[0-9*#]{1,64}$/;

/** The reply an answer's JSON value stands for, or why it is not one. */
export function parseVoiceReply(v: unknown): VoiceReply | { error: string } {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { error: 'a reply must be a JSON object' };
  const o = v as Record<string, unknown>;
  const text = o.text ?? o.response ?? null;
  if (text !== null && typeof text !== 'string') return { error: '`text` must be a string' };
  const rawDigits = o.digits ?? o.press_digit ?? o.dtmf ?? null;
  const digits = typeof rawDigits === 'number' ? String(rawDigits) : rawDigits;
  if (digits !== null && (typeof digits !== 'string' || !DIGITS.test(digits)))
    return { error: '`digits` must be keypad digits: 0-9, * and #' };
  const action = o.action ?? (o.end_call === true ? 'end_call' : null);
  if (action !== null && action !== 'transfer' && action !== 'end_call')
    return { error: `unknown action ${JSON.stringify(action).slice(0, 40)}` };
  return { text: text === null || text.trim() === '' ? null : text, interim: o.interim === true, action, digits };
}

/** Splits streamed model text into speakable pieces: whole sentences as they complete, the rest at the end. */
export function takeSentences(buffer: string): { sentences: string[]; rest: string } {
  const sentences: string[] = [];
  let rest = buffer;
  for (let m = /^([\s\S]*?[.!?…])(\s+)/.exec(rest); m; m = /^([\s\S]*?[.!?…])(\s+)/.exec(rest)) {
    if (m[1]!.trim()) sentences.push(m[1]!.trim());
    rest = rest.slice(m[0].length);
  }
  return { sentences, rest };
}
