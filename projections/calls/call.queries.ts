import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely, Selectable } from 'kysely';
import type {
  CallListFilter,
  CallPhase,
  CallProgressView,
  CallQueries,
  CallStatus,
  CallSummaryView,
  CallTranscriptView,
  CallTurnView,
  CallView,
  TranscriptPairView,
  TurnActionView,
} from '../../application/calls/call-queries.port.js';
import type { Page, PageOf } from '../../application/shared/page.js';
import type { AnsweredBy, LegMedia } from '../../domain/call/call.js';
import type { ReadDb } from '../shared/read-db.js';
import type { CallsTable, CallTurnsTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

/** `%`, `_` and the escape character itself match literally in a LIKE pattern once escaped. */
const likeContains = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Resolves after `ms`, or at once when `signal` aborts (the timer is cleared then too). */
const pause = (ms: number, signal: AbortSignal | undefined) => sleep(ms, undefined, signal ? { signal } : {}).catch(() => undefined);

/** The calls of one account: where every query of a call starts. */
const accountCalls = (db: Kysely<ReadDb>, accountId: string) => db.selectFrom('calls').where('account_id', '=', accountId);

const toSummary = (r: Selectable<CallsTable>): CallSummaryView => ({
  id: r.call_id,
  agentId: r.agent_id,
  phoneNumberId: r.phone_number_id,
  phoneNumber: r.phone_number,
  fromNumber: r.from_number,
  toNumber: r.to_number,
  direction: r.direction,
  status: r.status,
  startedAt: iso(r.started_at),
  endedAt: isoOrNull(r.ended_at),
  durationSeconds: r.duration_seconds,
  lastTranscriptSnippet: r.last_transcript_snippet,
  type: r.type,
  disconnectionReason: r.disconnection_reason,
  recordingAvailable: r.recording_available,
});

const toTurn = (r: Selectable<CallTurnsTable>): CallTurnView => {
  const agent = r.role === 'agent';
  return {
    id: r.turn_id,
    seq: r.seq,
    role: agent ? 'agent' : 'user',
    content: r.spoken,
    text: r.text,
    spoken: r.spoken,
    interrupted: r.interrupted,
    source: r.source,
    confidence: r.confidence,
    replyTo: r.reply_to,
    silentReason: r.silent_reason,
    latency:
      agent && (r.request_ms !== null || r.first_byte_ms !== null || r.speech_start_ms !== null)
        ? {
            recognitionMs: r.recognition_ms,
            requestMs: r.request_ms,
            firstByteMs: r.first_byte_ms,
            speechStartMs: r.speech_start_ms,
            synthesisMs: r.synthesis_ms,
          }
        : null,
    actions: json<TurnActionView[]>(r.actions) ?? [],
    startedAt: iso(r.started_at),
    endedAt: iso(r.ended_at),
  };
};

/**
 * The public `transcripts`: one entry per caller turn, with what the agent said in reply as heard. An agent turn
 * replies to the caller turn it names (`replyTo`), else to the latest caller turn before it; agent turns before
 * the caller first speaks (the greeting) and turns that said nothing are not replies.
 */
export function transcriptPairs(turns: readonly CallTurnView[]): TranscriptPairView[] {
  const replies = new Map<string, string[]>();
  let latestCaller: string | null = null;
  for (const t of turns) {
    if (t.role === 'user') {
      latestCaller = t.id;
      continue;
    }
    const to = t.replyTo ?? latestCaller;
    if (to === null || t.spoken.trim() === '') continue;
    replies.set(to, [...(replies.get(to) ?? []), t.spoken]);
  }
  return turns
    .filter((t) => t.role === 'user')
    .map((t) => ({ id: t.id, transcript: t.text, response: replies.get(t.id)?.join(' ') ?? null, createdAt: t.startedAt }));
}

const PHASES: ReadonlySet<string> = new Set<CallPhase>(['placed', 'ringing', 'answered', 'recording', 'ended']);
const phaseOf = (p: string): CallPhase => (PHASES.has(p) ? (p as CallPhase) : 'ended');
const statusOf = (s: string): CallStatus => (s === 'completed' || s === 'failed' ? s : 'in-progress');

/** Calls, their turns and transcripts from the calls read model (docs/calls.md); every query filters on the account. */
export class KyselyCallQueries implements CallQueries {
  private readonly pollMs: number;

  constructor(
    private readonly db: Kysely<ReadDb>,
    o: { pollMs?: number } = {},
  ) {
    this.pollMs = o.pollMs ?? 200;
  }

  list(accountId: string, filter: CallListFilter, page: Page): Promise<PageOf<CallSummaryView>> {
    let q = accountCalls(this.db, accountId);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.direction) q = q.where('direction', '=', filter.direction);
    if (filter.type) q = q.where('type', '=', filter.type);
    if (filter.agentId) q = q.where('agent_id', '=', filter.agentId);
    if (filter.search) {
      const pattern = likeContains(filter.search);
      q = q.where((eb) => eb.or([eb('from_number', 'like', pattern), eb('to_number', 'like', pattern)]));
    }
    return this.page(q, page);
  }

  calls(accountId: string, numberId: string, page: Page): Promise<PageOf<CallSummaryView>> {
    return this.page(accountCalls(this.db, accountId).where('phone_number_id', '=', numberId), page);
  }

  private async page(base: ReturnType<typeof accountCalls>, page: Page): Promise<PageOf<CallSummaryView>> {
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('started_at', 'desc').orderBy('call_id', 'desc').limit(page.limit).offset(page.offset).execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { total: Number(count.n), data: rows.map(toSummary) };
  }

  private row(accountId: string, callId: string) {
    return accountCalls(this.db, accountId).selectAll().where('call_id', '=', callId).executeTakeFirst();
  }

  async get(accountId: string, callId: string): Promise<CallView | null> {
    const r = await this.row(accountId, callId);
    if (!r) return null;
    const turns = await this.turns(accountId, callId, 0);
    return {
      ...toSummary(r),
      mode: r.mode,
      phase: phaseOf(r.phase),
      voice: r.voice,
      answeredAt: isoOrNull(r.answered_at),
      answeredBy: r.answered_by as AnsweredBy | null,
      disconnectionDetail: r.disconnection_detail,
      summary: r.summary,
      userSentiment: r.user_sentiment,
      callSuccessful: r.call_successful,
      recordingEnabled: r.recording_enabled,
      recordingDurationMs: r.recording_duration_ms,
      transferredTo: r.transferred_to,
      sipUri: r.sip_uri,
      sipTrunkId: r.sip_trunk_id,
      sipFailures: json<{ sipUri: string; error: string }[]>(r.sip_failures) ?? [],
      sipCallId: r.sip_call_id,
      media: r.media === null ? null : json<LegMedia>(r.media),
      digitsReceived: r.digits_received ?? '',
      unknownVariables: json<string[]>(r.unknown_variables) ?? [],
      metadata: r.metadata === null ? null : json<Record<string, unknown>>(r.metadata),
      lastActivityAt: iso(r.last_activity_at ?? r.updated_at),
      transcripts: transcriptPairs(turns),
      turns,
    };
  }

  async transcript(accountId: string, callId: string): Promise<CallTranscriptView | null> {
    const p = await this.progress(accountId, callId);
    if (!p) return null;
    const turns = await this.turns(accountId, callId, 0);
    return {
      callId,
      status: p.status,
      transcript: turns.filter((t) => t.content.trim() !== '').map((t) => ({ role: t.role, content: t.content, at: t.startedAt })),
      turns,
      transcripts: transcriptPairs(turns),
    };
  }

  async turns(accountId: string, callId: string, afterSeq: number): Promise<CallTurnView[]> {
    const rows = await this.db
      .selectFrom('call_turns')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('call_id', '=', callId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .execute();
    return rows.map(toTurn);
  }

  async progress(accountId: string, callId: string): Promise<CallProgressView | null> {
    const r = await accountCalls(this.db, accountId)
      .select(['status', 'phase', 'ended_at', 'duration_seconds', 'disconnection_reason', 'turn_count'])
      .where('call_id', '=', callId)
      .executeTakeFirst();
    if (!r) return null;
    return {
      callId,
      status: statusOf(r.status),
      phase: phaseOf(r.phase),
      endedAt: isoOrNull(r.ended_at),
      durationSeconds: r.duration_seconds,
      disconnectionReason: r.disconnection_reason,
      turnCount: r.turn_count,
    };
  }

  async waitForEnd(accountId: string, callId: string, timeoutMs: number, o: { signal?: AbortSignal } = {}): Promise<CallView | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const p = await this.progress(accountId, callId);
      if (!p) return null;
      const left = deadline - Date.now();
      if (p.status !== 'in-progress' || left <= 0 || o.signal?.aborted) return this.get(accountId, callId);
      await pause(Math.min(this.pollMs, left), o.signal);
    }
  }
}
