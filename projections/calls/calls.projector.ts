import { type Kysely, sql } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { AgentEvent } from '../../domain/agent/agent.decider.js';
import type { CallEvent } from '../../domain/call/call.decider.js';
import type { TurnAction, TurnLatency } from '../../domain/call/call.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';
import type { CallTurnsTable } from './tables.js';
import './tables.js';
import { CompiledOnce } from '../shared/compiled-once.js';
import { guarded, guardedRow } from '../shared/guarded.js';

/** The list's `lastTranscriptSnippet` keeps at most this many characters of the latest words. */
export const SNIPPET_LENGTH = 200;
const snippet = (words: string) => (words.length > SNIPPET_LENGTH ? `${words.slice(0, SNIPPET_LENGTH - 1)}…` : words);

/** The call's row, guarded: matches only while it reflects an older revision of the call's stream. */
const call = guardedRow(
  (db) => db.updateTable('calls'),
  (e: RecordedEvent<CallEvent>) => ({ call_id: e.data.callId }),
);

/** A fact that changes nothing shown but the call's latest activity. */
const activity = async (db: Kysely<ReadDb>, e: RecordedEvent<Extract<CallEvent, { data: { at: string } }>>) => {
  await call(db, e, { updated_at: e.data.at, last_activity_at: e.data.at });
};

const ms = (v: number | null) => (v === null ? null : Math.round(v));
const latencyColumns = (l: TurnLatency | null) => ({
  recognition_ms: ms(l?.recognitionMs ?? null),
  request_ms: ms(l?.requestMs ?? null),
  first_byte_ms: ms(l?.firstByteMs ?? null),
  speech_start_ms: ms(l?.speechStartMs ?? null),
  synthesis_ms: ms(l?.synthesisMs ?? null),
});

type Turn = Extract<CallEvent, { type: 'CallerTurnRecorded' | 'AgentTurnRecorded' }>;

/** A value of the turn's row as a column of the select it is inserted from, cast to the column's type. */
const as = <T>(value: unknown, type: 'text' | 'boolean' | 'integer' | 'double precision' | 'jsonb' | 'timestamptz' | 'bigint') =>
  sql<T>`cast(${value} as ${sql.raw(type)})`;

type TurnValues = {
  callId: string;
  turnId: string;
  role: string;
  text: string;
  spoken: string;
  /** the call's latest words after the turn; null: as they were (a turn that said nothing) */
  snippet: string | null;
  interrupted: boolean;
  source: string | null;
  confidence: number | null;
  replyTo: string | null;
  silentReason: string | null;
  recognitionMs: number | null;
  requestMs: number | null;
  firstByteMs: number | null;
  speechStartMs: number | null;
  synthesisMs: number | null;
  actions: string;
  startedAt: string;
  endedAt: string;
  revision: string;
};

/**
 * Records a turn, in one statement: the call's row takes the next sequence number (guarded by the revision, so a
 * replayed turn matches no row and inserts nothing), and the turn's row is inserted with it from what the update
 * answered. One statement and no answer read back, so a batch of turns goes as one message embedded
 * (docs/event-store.md#pipelined-batches). A call's every turn runs it, so it is compiled once
 * (docs/event-store.md#compiled-once).
 */
const turnStatement = new CompiledOnce<ReadDb, TurnValues, unknown>(null, (db, v) =>
  db
    .with('moved', (qb) =>
      guarded(qb.updateTable('calls'), { call_id: v.callId }, v.revision)
        .set((eb) => ({
          turn_count: eb('turn_count', '+', 1),
          last_transcript_snippet: sql<string | null>`coalesce(${as(v.snippet, 'text')}, last_transcript_snippet)`,
          updated_at: v.endedAt,
          last_activity_at: v.endedAt,
          revision: v.revision,
        }))
        .returning(['turn_count', 'account_id']),
    )
    .insertInto('call_turns')
    .columns([
      'account_id',
      'call_id',
      'seq',
      'turn_id',
      'role',
      'text',
      'spoken',
      'interrupted',
      'source',
      'confidence',
      'reply_to',
      'silent_reason',
      'recognition_ms',
      'request_ms',
      'first_byte_ms',
      'speech_start_ms',
      'synthesis_ms',
      'actions',
      'started_at',
      'ended_at',
      'revision',
    ])
    .expression((eb) =>
      eb
        .selectFrom('moved')
        .select([
          'moved.account_id',
          as<string>(v.callId, 'text').as('call_id'),
          'moved.turn_count',
          as<string>(v.turnId, 'text').as('turn_id'),
          as<string>(v.role, 'text').as('role'),
          as<string>(v.text, 'text').as('text'),
          as<string>(v.spoken, 'text').as('spoken'),
          as<boolean>(v.interrupted, 'boolean').as('interrupted'),
          as<string | null>(v.source, 'text').as('source'),
          as<number | null>(v.confidence, 'double precision').as('confidence'),
          as<string | null>(v.replyTo, 'text').as('reply_to'),
          as<string | null>(v.silentReason, 'text').as('silent_reason'),
          as<number | null>(v.recognitionMs, 'integer').as('recognition_ms'),
          as<number | null>(v.requestMs, 'integer').as('request_ms'),
          as<number | null>(v.firstByteMs, 'integer').as('first_byte_ms'),
          as<number | null>(v.speechStartMs, 'integer').as('speech_start_ms'),
          as<number | null>(v.synthesisMs, 'integer').as('synthesis_ms'),
          as<unknown>(v.actions, 'jsonb').as('actions'),
          as<string>(v.startedAt, 'timestamptz').as('started_at'),
          as<string>(v.endedAt, 'timestamptz').as('ended_at'),
          as<string>(v.revision, 'bigint').as('revision'),
        ]),
    )
    .onConflict((oc) => oc.columns(['call_id', 'seq']).doNothing()),
);

async function turn(
  db: Kysely<ReadDb>,
  e: RecordedEvent<Turn>,
  /** the turn's row as its table has it, with its latency and actions as the event has them */
  row: Readonly<
    Pick<CallTurnsTable, 'text' | 'spoken' | 'interrupted' | 'source' | 'confidence' | 'reply_to' | 'silent_reason'> & {
      role: 'user' | 'agent';
      latency: TurnLatency | null;
      actions: readonly TurnAction[];
    }
  >,
) {
  const d = e.data;
  const l = latencyColumns(row.latency);
  await db.executeQuery(
    turnStatement.compileOn(db, {
      callId: d.callId,
      turnId: d.turnId,
      role: row.role,
      text: row.text,
      spoken: row.spoken,
      // a turn that said nothing leaves the latest words as they were
      snippet: row.spoken.trim() ? snippet(row.spoken) : null,
      interrupted: row.interrupted,
      source: row.source,
      confidence: row.confidence,
      replyTo: row.reply_to,
      silentReason: row.silent_reason,
      recognitionMs: l.recognition_ms,
      requestMs: l.request_ms,
      firstByteMs: l.first_byte_ms,
      speechStartMs: l.speech_start_ms,
      synthesisMs: l.synthesis_ms,
      actions: JSON.stringify(row.actions),
      startedAt: d.startedAt,
      endedAt: d.endedAt,
      revision: rowRevision(e),
    }),
  );
}

type Handled = CallEvent | Extract<AgentEvent, { type: 'AgentDeleted' }>;

/**
 * Calls and their turns (docs/calls.md#the-call-record): one `calls` row per call, from placing to the
 * recording, and one `call_turns` row per caller or agent turn. Every write to a call is guarded by the revision
 * of the call's stream, so a replay changes nothing. A deleted agent's calls are kept with no agent.
 */
export const callsProjector = defineProjector<Handled>({
  name: 'calls_v1',
  tables: ['calls', 'call_turns'],
  // a call's turns come several a second and no request waits on them; every other fact takes them along at once
  // (docs/calls.md#where-the-record-comes-from)
  lagsOn: ['CallerTurnRecorded', 'AgentTurnRecorded'],
  // every write is one statement whose answer is not read (docs/event-store.md#pipelined-batches)
  pipelined: true,
  on: {
    async CallPlaced(db, e) {
      const d = e.data;
      await db
        .insertInto('calls')
        .values({
          account_id: d.accountId,
          call_id: d.callId,
          agent_id: d.agentId,
          phone_number_id: d.numberId,
          phone_number: d.direction === 'outbound' ? d.from : d.direction === 'inbound' ? d.to : null,
          direction: d.direction,
          from_number: d.from,
          to_number: d.to,
          status: 'in-progress',
          started_at: d.placedAt,
          ended_at: null,
          duration_seconds: null,
          disconnection_reason: null,
          last_transcript_snippet: null,
          recording_enabled: d.settings.recording,
          created_at: d.placedAt,
          updated_at: d.placedAt,
          revision: rowRevision(e),
          type: d.direction === 'web' ? 'web' : 'pstn',
          mode: d.settings.mode,
          phase: 'placed',
          voice: d.settings.voice,
          unknown_variables: JSON.stringify(d.settings.unknownVariables),
          metadata: d.settings.metadata === null ? null : JSON.stringify(d.settings.metadata),
          last_activity_at: d.placedAt,
        })
        .onConflict((oc) => oc.column('call_id').doNothing())
        .execute();
    },
    CallRinging: (db, e) => call(db, e, { phase: 'ringing', updated_at: e.data.at, last_activity_at: e.data.at }),
    async CallAnswered(db, e) {
      const d = e.data;
      await call(db, e, {
        phase: 'answered',
        answered_at: d.at,
        answered_by: d.answeredBy,
        engine_call_id: d.engineCallId,
        updated_at: d.at,
        last_activity_at: d.at,
      });
    },
    CallerTurnRecorded: (db, e) =>
      turn(db, e, {
        role: 'user',
        text: e.data.transcript,
        spoken: e.data.transcript,
        interrupted: false,
        source: null,
        confidence: e.data.confidence,
        reply_to: null,
        silent_reason: null,
        latency: null,
        actions: [],
      }),
    AgentTurnRecorded: (db, e) =>
      turn(db, e, {
        role: 'agent',
        text: e.data.text,
        spoken: e.data.spoken,
        interrupted: e.data.interrupted,
        source: e.data.source,
        confidence: null,
        reply_to: e.data.replyTo,
        silent_reason: e.data.silentReason,
        latency: e.data.latency,
        actions: e.data.actions,
      }),
    CallDigitsSent: activity,
    CallDigitsReceived: (db, e) =>
      call(db, e, (eb) => ({
        digits_received: sql<string>`coalesce(${eb.ref('digits_received')}, '') || ${e.data.digits}`,
        updated_at: e.data.at,
        last_activity_at: e.data.at,
      })),
    CallTransferred: (db, e) => call(db, e, { transferred_to: e.data.to, updated_at: e.data.at, last_activity_at: e.data.at }),
    async CallBridged(db, e) {
      await call(db, e, {
        sip_uri: e.data.sipUri,
        ...(e.data.trunkId ? { sip_trunk_id: e.data.trunkId } : {}),
        sip_failures: JSON.stringify(e.data.failed),
        updated_at: e.data.at,
        last_activity_at: e.data.at,
      });
    },
    CallLegReported: (db, e) =>
      call(db, e, {
        sip_call_id: e.data.protocol === 'sip' ? e.data.engineCallId : null,
        media: e.data.media === null ? null : JSON.stringify(e.data.media),
        updated_at: e.data.at,
      }),
    async CallEnded(db, e) {
      const d = e.data;
      await call(db, e, {
        // a recorded call is final once its recording step concluded (docs/calls.md#recordings): until then it is
        // answered as in progress, in the phase `recording`
        status: d.recording ? 'in-progress' : 'completed',
        phase: d.recording ? 'recording' : 'ended',
        ended_at: d.endedAt,
        duration_seconds: d.durationSeconds,
        disconnection_reason: d.reason,
        disconnection_detail: d.detail,
        answered_at: d.answeredAt,
        answered_by: d.answeredBy,
        summary: d.summary,
        user_sentiment: d.userSentiment,
        call_successful: d.callSuccessful,
        recording: d.recording,
        updated_at: d.endedAt,
        last_activity_at: d.endedAt,
      });
    },
    async CallFailed(db, e) {
      const d = e.data;
      await call(db, e, {
        status: 'failed',
        phase: 'ended',
        ended_at: d.endedAt,
        duration_seconds: 0,
        disconnection_reason: d.reason,
        disconnection_detail: d.detail,
        updated_at: d.endedAt,
        last_activity_at: d.endedAt,
      });
    },
    async CallRecordingAvailable(db, e) {
      await call(db, e, {
        status: 'completed',
        phase: 'ended',
        recording_available: true,
        recording_duration_ms: Math.round(e.data.durationMs),
        updated_at: e.data.at,
      });
    },
    CallRecordingUnavailable: (db, e) => call(db, e, { status: 'completed', phase: 'ended', updated_at: e.data.at }),
    async AgentDeleted(db, e) {
      // the spec keeps a deleted agent's calls and clears their agent; setting null twice is the same
      await db
        .updateTable('calls')
        .set({ agent_id: null })
        .where('account_id', '=', e.data.accountId)
        .where('agent_id', '=', e.data.agentId)
        .execute();
    },
  },
});
