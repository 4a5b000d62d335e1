import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ChatMessage, CompletionRequest, LanguageModelPort } from '../../../application/calls/language-model.port.js';

/**
 * The sandbox language model (docs/language-model.md#the-sandbox-model). It is not a language model: it follows a
 * few instructions written one per line in the system prompt, and otherwise says what it heard, so a developer can
 * script a hosted-mode conversation offline and get the same answer every time.
 *
 *   If the caller says "X", answer "Y".        (also: reply / say / respond, with or without "with")
 *   When asked about X, say "Y".               (also: answer / reply / respond; X may be quoted)
 *   Answer every message with "Y".             (also: Reply to / Respond to every message with "Y".)
 *   Greet the caller with "Y".                 (also: Start the call with "Y".) — the opening
 *   Always end with "Z".                       (also: Always end every reply with "Z".)
 *
 * Instructions are case-insensitive; a line may start with a list marker (`-`, `*`, `•`, `1.`, `1)`); the final
 * period is optional; quotes are straight or curly double quotes.
 */

/** What marks every reply the sandbox composes itself (a scripted reply is said exactly as written). */
export const SANDBOX_MARK = '(sandbox model)';

type Rule = Readonly<{ when: string; reply: string }>;

type Instructions = Readonly<{
  /** `If the caller says` and `When asked about` rules, in prompt order: the first that matches answers */
  rules: readonly Rule[];
  every: string | null;
  greeting: string | null;
  ending: string | null;
  /** the prompt's first sentence that is not an instruction (for the default reply) */
  firstSentence: string | null;
}>;

const QUOTED = '["“]([^"“”]*)["”]';
const SUBJECT = `(?:${QUOTED}|([^"“”]+?))`;
const VERB = '(?:answer|reply|say|respond)(?:\\s+with)?';
const END = '\\s*\\.?$';

const IF_SAYS = new RegExp(`^if\\s+the\\s+caller\\s+says\\s+${SUBJECT}\\s*,?\\s*(?:then\\s+)?${VERB}\\s+${QUOTED}${END}`, 'iu');
const WHEN_ASKED = new RegExp(`^when\\s+asked\\s+about\\s+${SUBJECT}\\s*,?\\s*(?:then\\s+)?${VERB}\\s+${QUOTED}${END}`, 'iu');
const EVERY = new RegExp(`^(?:answer|reply\\s+to|respond\\s+to)\\s+every\\s+message\\s+with\\s+${QUOTED}${END}`, 'iu');
const GREET = new RegExp(`^(?:greet\\s+the\\s+caller|start\\s+the\\s+call)\\s+with\\s+${QUOTED}${END}`, 'iu');
const ALWAYS_END = new RegExp(`^always\\s+end(?:\\s+every\\s+(?:reply|answer|message))?\\s+with\\s+${QUOTED}${END}`, 'iu');
const LIST_MARKER = /^(?:[-*•]|\d{1,3}[.)])\s+/u;

/** Lower case, one space between words: how the caller's words and an instruction's subject are compared. */
const normalise = (s: string) => s.toLowerCase().replace(/\s+/gu, ' ').trim();

const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/** `needle` occurs in `haystack` as whole words (so "hi" does not match "this"). Both are normalised. */
function containsWords(haystack: string, needle: string): boolean {
  if (needle === '') return false;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    const before = haystack[at - 1];
    const after = haystack[at + needle.length];
    const startOk = !isWordChar(needle[0]) || !isWordChar(before);
    const endOk = !isWordChar(needle.at(-1)) || !isWordChar(after);
    if (startOk && endOk) return true;
  }
  return false;
}

function firstSentenceOf(text: string): string | null {
  const t = text.replace(/\s+/gu, ' ').trim();
  if (t === '') return null;
  const m = /^.*?[.!?](?=\s|$)/u.exec(t);
  const sentence = m ? m[0] : t;
  return sentence.length > 200 ? `${sentence.slice(0, 199)}…` : sentence;
}

function readInstructions(systemPrompt: string): Instructions {
  const rules: Rule[] = [];
  let every: string | null = null;
  let greeting: string | null = null;
  let ending: string | null = null;
  const prose: string[] = [];
  for (const raw of systemPrompt.split(/\r\n|\r|\n/u)) {
    const line = raw.trim().replace(LIST_MARKER, '');
    const rule = IF_SAYS.exec(line) ?? WHEN_ASKED.exec(line);
    const [everyLine, greetLine, endLine] = [EVERY.exec(line), GREET.exec(line), ALWAYS_END.exec(line)];
    if (rule) rules.push({ when: normalise(rule[1] ?? rule[2] ?? ''), reply: rule[3]!.trim() });
    else if (everyLine) every ??= everyLine[1]!.trim();
    else if (greetLine) greeting ??= greetLine[1]!.trim();
    else if (endLine) ending ??= endLine[1]!.trim();
    else prose.push(line);
  }
  return { rules, every, greeting, ending, firstSentence: firstSentenceOf(prose.join('\n')) };
}

/** The caller's words as the default reply repeats them: at most `max` words, without their final punctuation. */
const heardWords = (s: string, max: number) => {
  const all = s
    .replace(/\s+/gu, ' ')
    .replace(/[\s.!?,;:…]+$/u, '')
    .trim()
    .split(' ');
  return all.length > max ? `${all.slice(0, max).join(' ')}…` : all.join(' ');
};

/** The whole reply to a conversation: a pure function of the messages. */
export function sandboxReply(messages: readonly ChatMessage[]): string {
  const prompt = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');
  const ins = readInstructions(prompt);
  const heard = messages.findLast((m) => m.role === 'user');
  let reply: string;
  if (heard === undefined) reply = ins.greeting ?? `${SANDBOX_MARK} Hello, how can I help you?`;
  else {
    const said = normalise(heard.content);
    const rule = ins.rules.find((r) => containsWords(said, r.when));
    reply =
      rule?.reply ??
      ins.every ??
      [
        `${SANDBOX_MARK} I heard: ${heardWords(heard.content, 40) || '(nothing)'}.`,
        ins.firstSentence ?? 'The system prompt is empty.',
      ].join(' ');
  }
  if (ins.ending !== null && !reply.endsWith(ins.ending)) reply = reply === '' ? ins.ending : `${reply} ${ins.ending}`;
  return reply;
}

/** Word groups that join back into `text` exactly. */
function fragments(text: string, wordsPerFragment = 3): string[] {
  const tokens = text.match(/\s*\S+\s*/gu) ?? [];
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i += wordsPerFragment) out.push(tokens.slice(i, i + wordsPerFragment).join(''));
  return out;
}

export class SandboxLanguageModel implements LanguageModelPort {
  async *stream(req: CompletionRequest): AsyncIterable<string> {
    for (const fragment of fragments(sandboxReply(req.messages))) {
      await nextTurn(); // a real asynchronous gap: consumers see a stream, as from a model
      if (req.signal?.aborted) return;
      yield fragment;
    }
  }

  describe(): string {
    return 'sandbox';
  }
}
