import type { AnsweredBy, ModelTier } from '../../domain/call/call.js';
import { parseVoiceReply, takeSentences } from '../../domain/call/voice-reply.js';
import type { ClockPort } from '../ports/clock.port.js';
import { buildEnvelope } from '../webhooks/envelope.js';
import type { WebhookQueries, WebhookSecretsPort } from '../webhooks/webhook.port.js';
import type { ChatMessage, LanguageModelPort } from './language-model.port.js';
import type { VoiceWebhookPort } from './voice-webhook.port.js';
import { VoiceWebhookError } from './voice-webhook.port.js';

/** What a reply source produces for one caller turn, in order (docs/calls.md#turns). */
export type ReplyEvent =
  /** the request left (the webhook POST was written, the model was asked) */
  | Readonly<{ kind: 'request-sent' }>
  /** the first byte of the answer (the webhook's status line, the model's first token) */
  | Readonly<{ kind: 'first-byte' }>
  | Readonly<{ kind: 'speech'; text: string }>
  | Readonly<{ kind: 'action'; action: 'transfer' | 'end_call' }>
  | Readonly<{ kind: 'digits'; digits: string }>;

export type HistoryEntry = Readonly<{ id: string; role: 'agent' | 'user'; content: string; at: string }>;

export type TurnInput = Readonly<{
  callerTurnId: string;
  transcript: string;
  /** null when the recogniser gives none */
  confidence: number | null;
  /** the call so far, oldest first, without this turn */
  history: readonly HistoryEntry[];
  answeredBy: AnsweredBy | null;
  /** the first caller turn of the call (the webhook's `data` then carries `answeredBy`) */
  first: boolean;
}>;

/** Why a turn has no reply; the turn is silent and records it. */
export class SilentTurn extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SilentTurn';
  }
}

export interface ReplySource {
  /** Readies what the first reply needs (called when the call is answered), so the first turn does not wait for it. */
  prepare?(): void;
  /** Streams the reply; throws `SilentTurn` when there is none. Stops promptly when `signal` aborts. */
  reply(input: TurnInput, signal: AbortSignal): AsyncIterable<ReplyEvent>;
}

export type CallFacts = Readonly<{
  callId: string;
  accountId: string;
  agentId: string | null;
  numberId: string | null;
  from: string;
  to: string;
  direction: 'inbound' | 'outbound' | 'web';
}>;

/**
 * Webhook mode (docs/calls.md#webhook-mode): each caller turn is an `agent.message` on channel `voice`, signed like
 * every delivery and sent to the agent's own webhook, else the account's. The answer is read as it streams.
 */
export class WebhookReplies implements ReplySource {
  /** the webhook and its opened secret, looked up once per call (a change of configuration applies to the next call) */
  private hook: Promise<{ url: string; secret: string; contextLimit: number; timeout: number } | string> | null = null;

  constructor(
    private readonly call: CallFacts,
    private readonly deps: Readonly<{
      webhooks: WebhookQueries;
      secrets: WebhookSecretsPort;
      client: VoiceWebhookPort;
      clock: ClockPort;
      /** an id for `X-Webhook-ID`, stable for the turn */
      webhookIdOf: (callerTurnId: string) => string;
    }>,
  ) {}

  /**
   * Looks the webhook up ahead of the first turn (when the call is answered), off the turn's critical path. A look-up
   * that fails (the database away a moment) is the next turn's failure, not the process's: it is let go of, and the
   * turn after looks the webhook up again.
   */
  prepare(): void {
    if (this.hook) return;
    const hook = this.lookUp();
    this.hook = hook;
    hook.catch(() => {
      if (this.hook === hook) this.hook = null;
    });
  }

  private async lookUp(): Promise<{ url: string; secret: string; contextLimit: number; timeout: number } | string> {
    const { webhooks } = this.deps;
    const c = this.call;
    const hook = (c.agentId ? await webhooks.ofAgent(c.accountId, c.agentId) : null) ?? (await webhooks.master(c.accountId));
    if (!hook) return 'no webhook is configured for this agent or account';
    if (hook.status === 'disabled') return 'the webhook is disabled';
    return { url: hook.url, secret: this.deps.secrets.open(hook.secret), contextLimit: hook.contextLimit, timeout: hook.timeout };
  }

  async *reply(input: TurnInput, signal: AbortSignal): AsyncIterable<ReplyEvent> {
    const c = this.call;
    this.prepare();
    const hook = await this.hook!;
    if (typeof hook === 'string') throw new SilentTurn(hook);
    const now = this.deps.clock.now();
    const body = buildEnvelope({
      event: 'agent.message',
      channel: 'voice',
      timestamp: now.toISOString(),
      agentId: c.agentId,
      data: {
        callId: c.callId,
        turnId: input.callerTurnId,
        numberId: c.numberId,
        from: c.from,
        to: c.to,
        status: 'in-progress',
        transcript: input.transcript,
        confidence: input.confidence,
        direction: c.direction,
        ...(input.first ? { answeredBy: input.answeredBy } : {}),
      },
      conversationState: null,
      recentHistory: input.history.map((h) => ({
        messageId: h.id,
        content: h.content,
        direction: h.role === 'user' ? 'inbound' : 'outbound',
        channel: 'voice',
        at: h.at,
      })),
      contextLimit: hook.contextLimit,
    });
    let answer: Awaited<ReturnType<VoiceWebhookPort['post']>>;
    const sent = this.deps.client.post({
      url: hook.url,
      secret: hook.secret,
      webhookId: this.deps.webhookIdOf(input.callerTurnId),
      timestamp: Math.floor(now.getTime() / 1000),
      body,
      firstByteTimeoutMs: hook.timeout * 1000,
      signal,
    });
    yield { kind: 'request-sent' };
    try {
      answer = await sent;
    } catch (err) {
      throw silentFrom(err);
    }
    yield { kind: 'first-byte' };
    try {
      for await (const v of answer.objects) {
        const r = parseVoiceReply(v);
        if ('error' in r) throw new SilentTurn(`the webhook's answer is not a voice reply: ${r.error}`);
        if (r.text !== null) yield { kind: 'speech', text: r.text };
        if (r.digits !== null) yield { kind: 'digits', digits: r.digits };
        if (r.action !== null) yield { kind: 'action', action: r.action };
      }
    } catch (err) {
      throw silentFrom(err);
    }
  }
}

const silentFrom = (err: unknown): Error => {
  if (err instanceof SilentTurn) return err;
  if (err instanceof VoiceWebhookError) {
    if (err.kind === 'timeout') return new SilentTurn(`webhook_timeout: ${err.message}`);
    return new SilentTurn(`webhook_error: ${err.message}`);
  }
  return err instanceof Error ? err : new Error(String(err));
};

/**
 * Hosted mode (docs/calls.md#hosted-mode): the built-in language model answers from the call's system prompt; its
 * tokens are spoken sentence by sentence as they stream.
 */
export class ModelReplies implements ReplySource {
  constructor(private readonly o: Readonly<{ model: LanguageModelPort; tier: ModelTier; systemPrompt: string }>) {}

  async *reply(input: TurnInput, signal: AbortSignal): AsyncIterable<ReplyEvent> {
    const messages: ChatMessage[] = [
      { role: 'system', content: this.o.systemPrompt },
      ...input.history.map((h): ChatMessage => ({ role: h.role === 'user' ? 'user' : 'assistant', content: h.content })),
      { role: 'user', content: input.transcript },
    ];
    let first = true;
    let buffer = '';
    yield { kind: 'request-sent' };
    try {
      for await (const fragment of this.o.model.stream({ tier: this.o.tier, messages, signal })) {
        if (first) {
          first = false;
          yield { kind: 'first-byte' };
        }
        buffer += fragment;
        const { sentences, rest } = takeSentences(buffer);
        buffer = rest;
        for (const s of sentences) yield { kind: 'speech', text: s };
      }
    } catch (err) {
      if (signal.aborted) return;
      throw new SilentTurn(`model_error: ${(err as Error).message}`);
    }
    if (buffer.trim()) yield { kind: 'speech', text: buffer.trim() };
    if (first) throw new SilentTurn('model_error: the model answered nothing');
  }
}
