import { type Kysely, sql } from 'kysely';
import { defineHistory } from '../../application/audit/history.js';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { IdsPort } from '../../application/ports/ids.port.js';
import type { RequestContext } from '../../application/shared/context.js';
import type { CommandExecutor } from '../../application/shared/execute.js';
import { ProcessManager } from '../../application/shared/process-manager.js';
import type { WebhookMapping } from '../../application/webhooks/registry.js';
import { DomainError } from '../../domain/shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../../domain/shared/types.js';
import { type Capability, token } from '../../infrastructure/capabilities/capability.js';
import type { Api } from '../../infrastructure/http/api.js';
import { z } from '../../infrastructure/http/openapi.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { guardedRow } from '../../projections/shared/guarded.js';
import { defineProjector, rowRevision } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

/**
 * A toy capability, "notes", built by following docs/adding-a-capability.md, each part under the heading of the file
 * it would be in. test/integration/adding-a-capability.int.spec.ts registers it beside the service's own and checks that
 * every part the guide names is picked up from its module alone: nothing else in the platform names it.
 */

// ---- domain/note/note.decider.ts ---------------------------------------------------------------------------------

export type NoteCommand = Command<'CreateNote', { noteId: string; text: string }> | Command<'AcknowledgeNote', { noteId: string }>;
export type NoteEvent =
  | Event<'NoteCreated', { noteId: string; accountId: string; text: string; createdAt: string }>
  | Event<'NoteAcknowledged', { noteId: string; acknowledgedAt: string }>;
type NoteState = { status: 'none' } | { status: 'created' | 'acknowledged'; accountId: string; text: string };

/** its stream name beside its decider: `<category>-<id>`, the category snake_case */
export const noteStream = (id: string) => `toy_note-${id}`;

export const noteDecider: Decider<NoteCommand, NoteEvent, NoteState> = {
  initialState: () => ({ status: 'none' }),
  decide: (cmd, s) => {
    switch (cmd.type) {
      case 'CreateNote':
        if (s.status !== 'none') return [];
        return [
          {
            type: 'NoteCreated',
            data: { noteId: cmd.data.noteId, accountId: cmd.metadata.accountId, text: cmd.data.text, createdAt: cmd.metadata.now },
          },
        ];
      case 'AcknowledgeNote':
        if (s.status !== 'created') return [];
        return [{ type: 'NoteAcknowledged', data: { noteId: cmd.data.noteId, acknowledgedAt: cmd.metadata.now } }];
      default:
        return assertNever(cmd);
    }
  },
  evolve: (s, e) => {
    switch (e.type) {
      case 'NoteCreated':
        return { status: 'created', accountId: e.data.accountId, text: e.data.text };
      case 'NoteAcknowledged':
        return s.status === 'none' ? s : { ...s, status: 'acknowledged' };
    }
  },
};

// ---- application/notes/note-queries.port.ts, note-commands.ts, note-acknowledger.ts, note.mappings.ts, note.history.ts

export type NoteView = Readonly<{ id: string; text: string; status: string }>;
export interface NoteQueries {
  get(accountId: string, noteId: string): Promise<NoteView | null>;
}

export class NoteCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly queries: NoteQueries,
  ) {}

  async create(ctx: RequestContext, text: string): Promise<NoteView> {
    const noteId = this.ids.id('note');
    await this.exec.execute(noteDecider, noteStream(noteId), { type: 'CreateNote', data: { noteId, text } }, ctx, { readYourWrites: true });
    const note = await this.queries.get(ctx.accountId, noteId);
    if (!note) throw new Error('the note is not in the read model yet');
    return note;
  }
}

type Created = Extract<NoteEvent, { type: 'NoteCreated' }>;

/** Work that leaves the request: a process manager, each step idempotent and recorded as a fact. */
export class NoteAcknowledger extends ProcessManager<Created> {
  readonly name = 'toy_note_acknowledger';
  readonly handles = ['NoteCreated'] as const;

  constructor(private readonly exec: CommandExecutor) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Created>): string {
    return e.data.noteId;
  }

  protected async react(e: RecordedEvent<Created>, ctx: RequestContext): Promise<void> {
    await this.exec.execute(noteDecider, noteStream(e.data.noteId), { type: 'AcknowledgeNote', data: { noteId: e.data.noteId } }, ctx);
  }
}

export const noteWebhookMappings: readonly WebhookMapping[] = [
  {
    domainEvent: 'NoteCreated',
    event: 'toy.note_created',
    describe: (raw) => {
      const e = raw as RecordedEvent<Created>;
      return { agentId: null, channel: null, messageId: null, conversationId: null, data: { noteId: e.data.noteId, text: e.data.text } };
    },
  },
];

type NoteHistoryView = { noteId: string; text: string | null; status: string | null };
export const noteHistory = defineHistory<NoteEvent, NoteState, NoteHistoryView>({
  kind: 'toy_note',
  what: 'Note',
  notFound: 'NOT_FOUND',
  stream: noteStream,
  decider: noteDecider,
  accountOf: (s) => (s.status === 'none' ? null : s.accountId),
  initial: (noteId) => ({ noteId, text: null, status: null }),
  step: (v, _e, s) => (s.status === 'none' ? v : { ...v, text: s.text, status: s.status }),
  status: (v) => v.status,
});

// ---- projections/notes/tables.ts, notes.projector.ts, note.queries.ts ----------------------------------------------

type ToyNotesTable = { account_id: string; note_id: string; text: string; status: string; revision: string | bigint };
declare module '../../projections/shared/read-db.js' {
  interface ReadDb {
    toy_notes: ToyNotesTable;
  }
}

const note = guardedRow(
  (db) => db.updateTable('toy_notes'),
  (e: RecordedEvent<NoteEvent>) => ({ note_id: e.data.noteId }),
);

export const notesProjector = defineProjector<NoteEvent>({
  name: 'toy_notes_v1',
  tables: ['toy_notes'],
  on: {
    async NoteCreated(db, e) {
      await db
        .insertInto('toy_notes')
        .values({ account_id: e.data.accountId, note_id: e.data.noteId, text: e.data.text, status: 'created', revision: rowRevision(e) })
        .onConflict((oc) => oc.column('note_id').doNothing())
        .execute();
    },
    NoteAcknowledged: (db, e) => note(db, e, { status: 'acknowledged' }),
  },
});

export class KyselyNoteQueries implements NoteQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async get(accountId: string, noteId: string): Promise<NoteView | null> {
    const r = await this.db
      .selectFrom('toy_notes')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('note_id', '=', noteId)
      .executeTakeFirst();
    return r ? { id: r.note_id, text: r.text, status: r.status } : null;
  }
}

// ---- infrastructure/db/migrations/900-toy-notes.ts -----------------------------------------------------------------

export const TOY_MIGRATION = '900-toy-notes';
const m900 = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`create table toy_notes (account_id text not null, note_id text primary key, text text not null, status text not null, revision bigint not null)`.execute(
      db,
    );
  },
};

// ---- infrastructure/notes/tokens.ts, notes.routes.ts, module.ts -----------------------------------------------------

export const NOTES = {
  Queries: token<NoteQueries>('ToyNoteQueries'),
  Commands: token<NoteCommands>('ToyNoteCommands'),
} as const;

const NoteResponse = z.object({ id: z.string(), text: z.string(), status: z.string() }).openapi('ToyNote');

function noteRoutes(api: Api, d: { commands: NoteCommands; queries: NoteQueries }): void {
  api.route({
    method: 'post',
    path: '/v1/toy-notes',
    tag: 'toy-notes',
    summary: 'Create a note',
    body: z.object({ text: z.string().min(1).max(200) }),
    status: 201,
    response: NoteResponse,
    handler: ({ body, ctx }) => d.commands.create(ctx, body.text),
  });
  api.route({
    method: 'get',
    path: '/v1/toy-notes/:note_id',
    tag: 'toy-notes',
    summary: 'A note',
    params: z.object({ note_id: z.string().min(1).max(100) }),
    response: NoteResponse,
    errors: [404],
    handler: async ({ params, ctx }) => {
      const note = await d.queries.get(ctx.accountId, params.note_id);
      if (!note) throw new DomainError('NOT_FOUND', 'Note not found');
      return note;
    },
  });
}

export const notes = {
  name: 'toy-notes',
  bind: (b) => {
    b.factory(NOTES.Queries, (r) => new KyselyNoteQueries(r(PLATFORM.ReadDb)));
    b.factory(NOTES.Commands, (r) => new NoteCommands(r(PLATFORM.Executor), r(PLATFORM.Ids), r(NOTES.Queries)));
  },
  routes: { v1: (api, r) => noteRoutes(api, { commands: r(NOTES.Commands), queries: r(NOTES.Queries) }) },
  projectors: [notesProjector],
  reactors: (r) => [new NoteAcknowledger(r(PLATFORM.Executor))],
  webhookMappings: noteWebhookMappings,
  histories: () => [{ view: noteHistory, path: '/v1/toy-notes/:note_id/history', param: 'note_id', what: 'a note' }],
  migrations: { [TOY_MIGRATION]: m900 },
} as const satisfies Capability;
