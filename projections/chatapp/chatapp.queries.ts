import type { Kysely, Selectable } from 'kysely';
import type { ChatappNumberView, ChatappQueries, ConnectionView, TemplateView } from '../../application/chatapp/chatapp-queries.port.js';
import type { Page, PageOf } from '../../application/shared/page.js';
import type { TemplateButton, TemplateCategory } from '../../domain/chatapp/template.decider.js';
import type { TemplateVariables } from '../../domain/chatapp/template-body.js';
import { CompiledOnce } from '../shared/compiled-once.js';
import { NOT_KEPT, type ReadKeeper } from '../shared/kept-reads.js';
import { indexed, type ReadDb } from '../shared/read-db.js';
import type { ChatappConnectionsTable, ChatappNumbersTable, ChatappTemplatesTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

const toConnection = (r: Selectable<ChatappConnectionsTable>): ConnectionView => ({
  id: r.connection_id,
  accountId: r.account_id,
  businessAccountId: r.business_account_id,
  businessName: r.business_name,
  status: r.status as ConnectionView['status'],
  failureReason: r.failure_reason,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const toNumber = (r: Selectable<ChatappNumbersTable>): ChatappNumberView => ({
  id: r.binding_id,
  accountId: r.account_id,
  connectionId: r.connection_id,
  phoneNumberId: r.phone_number_id,
  phoneNumber: r.phone_number,
  verifiedName: r.verified_name,
  agentId: r.agent_id,
  numberId: r.line_id,
  nativeNumberId: r.native_number_id,
  dualChannel: r.native_number_id !== null,
  status: r.status as ChatappNumberView['status'],
  failureReason: r.failure_reason,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const toTemplate = (r: Selectable<ChatappTemplatesTable>): TemplateView => {
  const v = json<TemplateVariables>(r.variables);
  return {
    id: r.template_id,
    accountId: r.account_id,
    connectionId: r.connection_id,
    name: r.name,
    language: r.language,
    category: r.category as TemplateCategory,
    body: r.body,
    header: r.header,
    buttons: json<TemplateButton[]>(r.buttons),
    parameterFormat: v.format,
    variables:
      v.format === 'named' ? [...v.names] : v.format === 'positional' ? Array.from({ length: v.count }, (_, i) => String(i + 1)) : [],
    status: r.status as TemplateView['status'],
    rejectionReason: r.rejection_reason,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
};

/** The chat-application channel's read models (docs/chatapp.md); every query of an account's rows filters on it. */
export class KyselyChatappQueries implements ChatappQueries {
  /** asked on every send, for the channels available on its line (docs/event-store.md#compiled-once) */
  private readonly bound;

  constructor(
    private readonly db: Kysely<ReadDb>,
    /** this read model's answers kept until its next batch, where every batch is heard (docs/event-store.md#kept-reads) */
    private readonly kept: ReadKeeper = NOT_KEPT,
  ) {
    this.bound = new CompiledOnce(db, (db, v: { accountId: string; lineId: string }) =>
      db
        .selectFrom('chatapp_numbers')
        .selectAll()
        .where('account_id', '=', v.accountId)
        .where('line_id', '=', v.lineId)
        .where('status', '=', indexed('bound')),
    );
  }

  async connections(accountId: string, page: Page): Promise<PageOf<ConnectionView>> {
    const q = this.db.selectFrom('chatapp_connections').where('account_id', '=', accountId).where('status', '!=', 'deleted');
    const [rows, n] = await Promise.all([
      q.selectAll().orderBy('created_at').orderBy('connection_id').limit(page.limit).offset(page.offset).execute(),
      q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toConnection), total: Number(n.n) };
  }

  async connection(accountId: string, connectionId: string): Promise<ConnectionView | null> {
    const r = await this.db
      .selectFrom('chatapp_connections')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('connection_id', '=', connectionId)
      .where('status', '!=', 'deleted')
      .executeTakeFirst();
    return r ? toConnection(r) : null;
  }

  async numbers(accountId: string, connectionId: string, page: Page): Promise<PageOf<ChatappNumberView>> {
    const q = this.db.selectFrom('chatapp_numbers').where('account_id', '=', accountId).where('connection_id', '=', connectionId);
    const [rows, n] = await Promise.all([
      q.selectAll().orderBy('created_at').orderBy('binding_id').limit(page.limit).offset(page.offset).execute(),
      q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toNumber), total: Number(n.n) };
  }

  async number(accountId: string, connectionId: string, bindingId: string): Promise<ChatappNumberView | null> {
    const r = await this.db
      .selectFrom('chatapp_numbers')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('connection_id', '=', connectionId)
      .where('binding_id', '=', bindingId)
      .executeTakeFirst();
    return r ? toNumber(r) : null;
  }

  async heldByConnection(connectionId: string): Promise<{ bindingId: string; accountId: string }[]> {
    const rows = await this.db
      .selectFrom('chatapp_numbers')
      .select(['binding_id', 'account_id'])
      .where('connection_id', '=', connectionId)
      .where('status', 'in', ['pending', 'bound'])
      .execute();
    return rows.map((r) => ({ bindingId: r.binding_id, accountId: r.account_id }));
  }

  async boundLine(accountId: string, lineId: string): Promise<ChatappNumberView | null> {
    const look = async () => {
      const r = await this.bound.executeTakeFirst({ accountId, lineId });
      return r ? toNumber(r) : null;
    };
    // most sending lines are not bound to the chat app: "none" is kept too
    return this.kept.read(`bound\u0000${accountId}\u0000${lineId}`, look, { keepMissing: true });
  }

  async boundByPhoneNumber(accountId: string, phoneNumber: string): Promise<ChatappNumberView | null> {
    const r = await this.db
      .selectFrom('chatapp_numbers')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('phone_number', '=', phoneNumber)
      .where('status', '=', indexed('bound'))
      .where('native_number_id', 'is', null)
      .executeTakeFirst();
    return r ? toNumber(r) : null;
  }

  async boundLinesOf(accountId: string, o: { lineIds: readonly string[]; agentId: string }): Promise<ChatappNumberView[]> {
    // every send by agent asks it (its chat-app lines, mostly none): "none" is kept too
    const key = `lines\u0000${accountId}\u0000${o.agentId}\u0000${o.lineIds.join(',')}`;
    return (await this.kept.read(key, () => this.lookBoundLinesOf(accountId, o), { keepMissing: true })) ?? [];
  }

  private async lookBoundLinesOf(accountId: string, o: { lineIds: readonly string[]; agentId: string }): Promise<ChatappNumberView[]> {
    const rows = await this.db
      .selectFrom('chatapp_numbers')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('status', '=', indexed('bound'))
      .where((eb) =>
        eb.or([
          eb.and([eb('native_number_id', 'is', null), eb('agent_id', '=', o.agentId)]),
          ...(o.lineIds.length ? [eb('native_number_id', 'in', [...o.lineIds])] : []),
        ]),
      )
      .orderBy('created_at')
      .orderBy('binding_id')
      .execute();
    return rows.map(toNumber);
  }

  async templates(accountId: string, connectionId: string, page: Page): Promise<PageOf<TemplateView>> {
    const q = this.db.selectFrom('chatapp_templates').where('account_id', '=', accountId).where('connection_id', '=', connectionId);
    const [rows, n] = await Promise.all([
      q.selectAll().orderBy('created_at').orderBy('template_id').limit(page.limit).offset(page.offset).execute(),
      q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toTemplate), total: Number(n.n) };
  }

  async template(accountId: string, connectionId: string, templateId: string): Promise<TemplateView | null> {
    const r = await this.db
      .selectFrom('chatapp_templates')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('connection_id', '=', connectionId)
      .where('template_id', '=', templateId)
      .executeTakeFirst();
    return r ? toTemplate(r) : null;
  }

  async templatesByPlatformId(platformTemplateId: string): Promise<{ templateId: string; accountId: string }[]> {
    const rows = await this.db
      .selectFrom('chatapp_templates')
      .select(['template_id', 'account_id'])
      .where('platform_template_id', '=', platformTemplateId)
      .execute();
    return rows.map((r) => ({ templateId: r.template_id, accountId: r.account_id }));
  }

  async lastInboundAt(accountId: string, lineId: string, participant: string): Promise<string | null> {
    const r = await this.db
      .selectFrom('chatapp_windows')
      .select('last_inbound_at')
      .where('account_id', '=', accountId)
      .where('line_id', '=', lineId)
      .where('participant', '=', participant)
      .executeTakeFirst();
    return r ? iso(r.last_inbound_at) : null;
  }
}
