import type { AnsweredBy, CallDirection, DisconnectionReason, TranscriptEntry } from './call.js';

/**
 * The call-ended summary (docs/calls.md#summary): derived from the transcript by fixed rules, so that replaying a
 * call gives the same summary. It is a plain description, not a language model's guess.
 */
export type CallSummary = Readonly<{
  summary: string;
  userSentiment: 'Positive' | 'Neutral' | 'Negative' | 'Unknown';
  callSuccessful: boolean;
}>;

const POSITIVE = ['thanks', 'thank you', 'great', 'good', 'perfect', 'sounds good', 'awesome', 'yes', 'sure', 'love', 'happy', 'helpful'];
const NEGATIVE = ['no', 'not', 'bad', 'terrible', 'angry', 'stop', 'wrong', 'hate', 'annoyed', 'useless', 'complaint', 'never'];

const count = (text: string, words: readonly string[]) => {
  const t = ` ${text.toLowerCase().replace(/[^a-z' ]+/g, ' ')} `;
  return words.reduce((n, w) => n + (t.includes(` ${w} `) ? 1 : 0), 0);
};

const quote = (s: string, max = 120) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

const UNSUCCESSFUL: ReadonlySet<DisconnectionReason> = new Set([
  'host_lost',
  'telephony_error',
  'dial_busy',
  'dial_no_answer',
  'invalid_destination',
  'sip_unreachable',
  'canceled',
]);

export function summarize(o: {
  direction: CallDirection;
  answeredBy: AnsweredBy | null;
  reason: DisconnectionReason;
  durationSeconds: number;
  transcript: readonly TranscriptEntry[];
}): CallSummary {
  const user = o.transcript.filter((t) => t.role === 'user').map((t) => t.content);
  const agent = o.transcript.filter((t) => t.role === 'agent').map((t) => t.content);
  const who = o.answeredBy === 'voicemail' ? 'voicemail' : o.answeredBy === 'screener' ? 'a call screener' : 'the caller';
  const parts = [
    `${o.direction === 'inbound' ? 'Inbound' : o.direction === 'web' ? 'Web' : 'Outbound'} call of ${o.durationSeconds} s`,
    `${agent.length} agent and ${user.length} caller turn${user.length === 1 ? '' : 's'}`,
    `ended: ${o.reason.replaceAll('_', ' ')}`,
  ];
  let summary = `${parts.join(', ')}.`;
  if (user.length > 0)
    summary += ` ${who === 'the caller' ? 'The caller' : `${who[0]!.toUpperCase()}${who.slice(1)}`} first said "${quote(user[0]!)}"`;
  if (user.length > 1) summary += ` and last said "${quote(user.at(-1)!)}"`;
  if (user.length > 0) summary += '.';
  if (o.answeredBy === 'voicemail' && agent.length > 0) summary += ` A message was left: "${quote(agent.at(-1)!)}".`;

  const text = user.join(' ');
  const score = count(text, POSITIVE) - count(text, NEGATIVE);
  const userSentiment = user.length === 0 ? 'Unknown' : score > 0 ? 'Positive' : score < 0 ? 'Negative' : 'Neutral';
  const callSuccessful = !UNSUCCESSFUL.has(o.reason) && (user.length > 0 || (o.answeredBy === 'voicemail' && agent.length > 0));
  return { summary, userSentiment, callSuccessful };
}
