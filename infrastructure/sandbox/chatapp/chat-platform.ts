import type { Kysely, Transaction } from 'kysely';
import {
  ChatPlatformError,
  type ChatPlatformPort,
  type OutboundChat,
  type PlatformAuth,
  type PlatformNumber,
  type TemplateSubmission,
} from '../../../application/chatapp/chat-platform.port.js';
import type { InboundMessage } from '../../../application/messaging/delivery/transport.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { IdsPort } from '../../../application/ports/ids.port.js';
import type { TemplateContent } from '../../../domain/chatapp/template.decider.js';
import { DomainError } from '../../../domain/shared/errors.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';
import { iso, isoOrNull, json } from '../shared/rows.js';
import { SandboxUpstream } from '../shared/upstream.js';
import type { SandboxChatappDb } from './db.js';
import {
  INVALID_TOKEN_PREFIX,
  planFor,
  REJECTED_TEMPLATE_PREFIX,
  SANDBOX_BUSINESS_ACCOUNTS,
  type SandboxBusinessAccount,
} from './magic.js';

/** A status or template review the sandbox will report, as stored in `sandbox_chatapp_reports.payload`. */
export type SandboxReport =
  | Readonly<{
      kind: 'status';
      platformMessageId: string;
      statusId: string;
      status: 'sent' | 'delivered' | 'read' | 'failed';
      at: string;
      error: { code: number; detail: string } | null;
    }>
  | Readonly<{ kind: 'template'; platformTemplateId: string; approved: boolean; reason: string | null }>;

/**
 * The sandbox chat platform (docs/sandbox.md#chat-app-the-sandbox-chat-platform): a business messaging API that
 * behaves like the real one. It has a few business accounts with numbers (magic.ts), accepts any
 * access token for them except ones starting with `invalid`, registers numbers, reviews templates asynchronously
 * (`SANDBOX_CHATAPP_TEMPLATE_REVIEW_SECONDS` after submission, on the Clock: a name starting with `reject_` is
 * rejected, every other approved), and reports each sent message's statuses later (sent, delivered, read), or the
 * failure that the recipient's magic number or the business account calls for. What it will report are rows due on
 * the Clock (`sandbox_chatapp_reports`), reported by SandboxChatappReportWorker; nothing here waits on a timer.
 */
export class SandboxChatPlatform extends SandboxUpstream<SandboxChatappDb> implements ChatPlatformPort {
  constructor(
    db: Kysely<ReadDb>,
    clock: ClockPort,
    private readonly ids: IdsPort,
    private readonly o: Readonly<{ reviewMs: number; statusDelayMs: number }>,
  ) {
    super(db, clock);
  }

  private checkToken(token: string): void {
    if (token.startsWith(INVALID_TOKEN_PREFIX)) throw new ChatPlatformError(190, 'Error validating access token: the session is invalid.');
  }

  private account(id: string): SandboxBusinessAccount {
    const ba = SANDBOX_BUSINESS_ACCOUNTS.find((a) => a.id === id);
    if (!ba) throw new ChatPlatformError(100, `Unsupported get request. Object with ID '${id}' does not exist or cannot be loaded.`);
    return ba;
  }

  async businessAccount(a: PlatformAuth): Promise<{ id: string; name: string | null }> {
    this.checkToken(a.accessToken);
    const ba = this.account(a.businessAccountId);
    return { id: ba.id, name: ba.name };
  }

  async phoneNumbers(a: PlatformAuth): Promise<PlatformNumber[]> {
    this.checkToken(a.accessToken);
    return (await this.numbersOf(this.account(a.businessAccountId))).map(({ phoneNumberId, phoneNumber, verifiedName }) => ({
      phoneNumberId,
      phoneNumber,
      verifiedName,
    }));
  }

  private async numbersOf(ba: SandboxBusinessAccount) {
    const added = await this.db
      .selectFrom('sandbox_chatapp_numbers')
      .selectAll()
      .where('business_account_id', '=', ba.id)
      .orderBy('created_at')
      .execute();
    return [
      ...ba.numbers.map((n) => ({ ...n, added: false })),
      ...added.map((r) => ({ phoneNumberId: r.phone_number_id, phoneNumber: r.phone_number, verifiedName: r.verified_name, added: true })),
    ];
  }

  /** The business account a platform number belongs to, or null. */
  private async ownerOf(phoneNumberId: string): Promise<SandboxBusinessAccount | null> {
    const fixed = SANDBOX_BUSINESS_ACCOUNTS.find((a) => a.numbers.some((n) => n.phoneNumberId === phoneNumberId));
    if (fixed) return fixed;
    const r = await this.db
      .selectFrom('sandbox_chatapp_numbers')
      .select('business_account_id')
      .where('phone_number_id', '=', phoneNumberId)
      .executeTakeFirst();
    return r ? (SANDBOX_BUSINESS_ACCOUNTS.find((a) => a.id === r.business_account_id) ?? null) : null;
  }

  async registerNumber(a: Readonly<{ accessToken: string; phoneNumberId: string; pin: string | null }>): Promise<void> {
    this.checkToken(a.accessToken);
    if (!(await this.ownerOf(a.phoneNumberId)))
      throw new ChatPlatformError(100, `Unsupported post request. Object with ID '${a.phoneNumberId}' does not exist.`);
    await this.db
      .insertInto('sandbox_chatapp_registrations')
      .values({ phone_number_id: a.phoneNumberId, registered_at: this.now().toISOString() })
      .onConflict((oc) => oc.column('phone_number_id').doNothing())
      .execute();
  }

  async submitTemplate(a: PlatformAuth & Readonly<{ template: TemplateContent }>): Promise<TemplateSubmission> {
    this.checkToken(a.accessToken);
    const ba = this.account(a.businessAccountId);
    const t = a.template;
    return this.db.transaction().execute(async (trx) => {
      // a template of that name and language under review or approved is the one submitted before (a retry)
      const existing = await trx
        .selectFrom('sandbox_chatapp_templates')
        .selectAll()
        .where('business_account_id', '=', ba.id)
        .where('name', '=', t.name)
        .where('language', '=', t.language)
        .where('status', '!=', 'REJECTED')
        .executeTakeFirst();
      if (existing && existing.body === t.body)
        return { platformTemplateId: existing.platform_template_id, status: 'pending', reason: null };
      if (existing)
        throw new ChatPlatformError(
          100,
          `Invalid parameter: a template named ${t.name} (${t.language}) already exists with other content.`,
        );
      const now = this.now();
      const decidesAt = new Date(now.getTime() + this.o.reviewMs);
      const id = this.numericId('4');
      const approved = !t.name.startsWith(REJECTED_TEMPLATE_PREFIX);
      const reason = approved ? null : `INVALID_FORMAT: the sandbox rejects templates whose name starts with ${REJECTED_TEMPLATE_PREFIX}`;
      await trx
        .insertInto('sandbox_chatapp_templates')
        .values({
          platform_template_id: id,
          business_account_id: ba.id,
          name: t.name,
          language: t.language,
          category: t.category.toUpperCase(),
          body: t.body,
          status: approved ? 'APPROVED' : 'REJECTED',
          reason,
          submitted_at: now.toISOString(),
          decides_at: decidesAt.toISOString(),
        })
        .execute();
      await this.report(trx, id, decidesAt, { kind: 'template', platformTemplateId: id, approved, reason });
      return { platformTemplateId: id, status: 'pending', reason: null };
    });
  }

  async send(m: OutboundChat): Promise<{ platformMessageId: string }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await this.db
        .selectFrom('sandbox_chatapp_messages')
        .selectAll()
        .where('idempotency_key', '=', m.idempotencyKey)
        .executeTakeFirst();
      if (existing) {
        if (existing.status === 'refused') throw new ChatPlatformError(existing.error_code ?? 100, 'the message was refused');
        return { platformMessageId: existing.platform_message_id };
      }
      this.checkToken(m.accessToken);
      const ba = await this.ownerOf(m.phoneNumberId);
      const registered = await this.db
        .selectFrom('sandbox_chatapp_registrations')
        .select('phone_number_id')
        .where('phone_number_id', '=', m.phoneNumberId)
        .executeTakeFirst();
      if (!ba || !registered) throw new ChatPlatformError(133010, 'Account not registered: register the number for the cloud API first.');
      const plan = planFor(m.to, { template: m.content.kind === 'template', paymentMethod: ba.paymentMethod });
      const id = this.ids.id('chm');
      const now = this.now();
      const stored = await this.db.transaction().execute(async (trx) => {
        const r = await trx
          .insertInto('sandbox_chatapp_messages')
          .values({
            idempotency_key: m.idempotencyKey,
            platform_message_id: id,
            phone_number_id: m.phoneNumberId,
            to_number: m.to,
            kind: m.content.kind,
            body: m.content.kind === 'text' ? m.content.body : m.content.kind === 'media' ? m.content.caption : m.content.name,
            template:
              m.content.kind === 'template'
                ? JSON.stringify({ name: m.content.name, language: m.content.language, values: m.content.values })
                : null,
            status: plan.kind === 'refuse' ? 'refused' : 'accepted',
            error_code: plan.kind === 'refuse' ? plan.code : null,
            submitted_at: now.toISOString(),
          })
          .onConflict((oc) => oc.column('idempotency_key').doNothing())
          .returning('idempotency_key')
          .executeTakeFirst();
        if (!r || plan.kind === 'refuse') return r !== undefined;
        let step = 0;
        for (const status of plan.statuses) {
          step += 1;
          const at = new Date(now.getTime() + step * this.o.statusDelayMs);
          await this.report(trx, id, at, {
            kind: 'status',
            platformMessageId: id,
            statusId: this.ids.id('chs'),
            status,
            at: at.toISOString(),
            error: null,
          });
        }
        if (plan.failure !== null) {
          const at = new Date(now.getTime() + (step + 1) * this.o.statusDelayMs);
          await this.report(trx, id, at, {
            kind: 'status',
            platformMessageId: id,
            statusId: this.ids.id('chs'),
            status: 'failed',
            at: at.toISOString(),
            error: { code: plan.failure, detail: 'reported by the sandbox platform' },
          });
        }
        return true;
      });
      if (!stored) continue; // another process stored this key meanwhile: answer what it stored
      if (plan.kind === 'refuse') throw new ChatPlatformError(plan.code, `(#${plan.code}) Invalid parameter`);
      return { platformMessageId: id };
    }
    throw new Error(`sandbox chat platform: the send ${m.idempotencyKey} kept racing another one`);
  }

  private async report(trx: Transaction<ReadDb & SandboxChatappDb>, subject: string, due: Date, payload: SandboxReport): Promise<void> {
    await trx
      .insertInto('sandbox_chatapp_reports')
      .values({
        report_id: this.ids.id('rpt'),
        kind: payload.kind,
        subject,
        payload: JSON.stringify(payload),
        due_at: due.toISOString(),
        claimed_by: null,
        claimed_until: null,
        attempts: 0,
        last_error: null,
        reported_at: null,
      })
      .execute();
  }

  /** A numeric id as the platform gives them: a prefix digit and 14 digits. */
  private numericId(prefix: string): string {
    const digits = [...this.ids.uuid().replace(/-/g, '')].map((c) => (Number.parseInt(c, 16) % 10).toString()).join('');
    return `${prefix}${digits.slice(0, 14)}`;
  }

  // --- the sandbox control API's view --------------------------------------------------------------------

  async businessAccounts() {
    const registered = new Set(
      (await this.db.selectFrom('sandbox_chatapp_registrations').select('phone_number_id').execute()).map((r) => r.phone_number_id),
    );
    return Promise.all(
      SANDBOX_BUSINESS_ACCOUNTS.map(async (ba) => ({
        businessAccountId: ba.id,
        name: ba.name,
        paymentMethod: ba.paymentMethod,
        numbers: (await this.numbersOf(ba)).map((n) => ({
          phoneNumberId: n.phoneNumberId,
          phoneNumber: n.phoneNumber,
          verifiedName: n.verifiedName,
          registered: registered.has(n.phoneNumberId),
        })),
      })),
    );
  }

  /** Adds a number to a business account (to make a native number dual-channel); the same E.164 again answers the same number. */
  async addNumber(businessAccountId: string, phoneNumber: string, verifiedName: string | null) {
    const ba = SANDBOX_BUSINESS_ACCOUNTS.find((a) => a.id === businessAccountId);
    if (!ba) throw new DomainError('NOT_FOUND', `The sandbox platform has no business account ${businessAccountId}`);
    const taken = SANDBOX_BUSINESS_ACCOUNTS.flatMap((a) => a.numbers).find((n) => n.phoneNumber === phoneNumber);
    if (taken)
      throw new DomainError('VALIDATION_ERROR', `${phoneNumber} is a fixed number of the sandbox platform`, [
        { field: 'phone_number', message: 'a fixed number of the sandbox platform', type: 'value_error' },
      ]);
    const phoneNumberId = `9${phoneNumber.replace(/\D/g, '')}`;
    await this.db
      .insertInto('sandbox_chatapp_numbers')
      .values({
        phone_number_id: phoneNumberId,
        business_account_id: ba.id,
        phone_number: phoneNumber,
        verified_name: verifiedName,
        created_at: this.now().toISOString(),
      })
      .onConflict((oc) => oc.column('phone_number').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('sandbox_chatapp_numbers')
      .selectAll()
      .where('phone_number', '=', phoneNumber)
      .executeTakeFirstOrThrow();
    if (row.business_account_id !== ba.id)
      throw new DomainError('VALIDATION_ERROR', `${phoneNumber} is a number of business account ${row.business_account_id}`, [
        { field: 'phone_number', message: 'already a number of another business account', type: 'value_error' },
      ]);
    return { businessAccountId: ba.id, phoneNumberId: row.phone_number_id, phoneNumber: row.phone_number, verifiedName: row.verified_name };
  }

  /** An inbound message to a number (`to`: its `phone_number_id`) as the platform would report it (`POST /sandbox/chatapp/inbound`). */
  async inbound(m: Pick<InboundMessage, 'to' | 'from' | 'body' | 'mediaUrls' | 'reaction'>): Promise<InboundMessage> {
    if (!(await this.ownerOf(m.to))) throw new DomainError('NOT_FOUND', `The sandbox platform has no number ${m.to}`);
    return { ...m, channel: 'chatapp', providerMessageId: this.ids.id('chm'), receivedAt: this.now().toISOString(), group: null };
  }

  /** What the platform was asked to send, newest first, with the statuses it reported or will report. */
  async messages(q: { to?: string | undefined; limit: number }) {
    let s = this.db.selectFrom('sandbox_chatapp_messages').selectAll();
    if (q.to) s = s.where('to_number', '=', q.to);
    const rows = await s.orderBy('submitted_at', 'desc').orderBy('platform_message_id', 'desc').limit(q.limit).execute();
    const ids = rows.map((r) => r.platform_message_id);
    const reports = ids.length
      ? await this.db
          .selectFrom('sandbox_chatapp_reports')
          .selectAll()
          .where('subject', 'in', ids)
          .orderBy('due_at')
          .orderBy('report_id')
          .execute()
      : [];
    return rows.map((r) => ({
      platformMessageId: r.platform_message_id,
      idempotencyKey: r.idempotency_key,
      phoneNumberId: r.phone_number_id,
      to: r.to_number,
      kind: r.kind,
      body: r.body,
      template: r.template === null ? null : json<Record<string, unknown>>(r.template),
      status: r.status,
      errorCode: r.error_code,
      submittedAt: iso(r.submitted_at),
      statuses: reports
        .filter((x) => x.subject === r.platform_message_id)
        .map((x) => {
          const p = json<Extract<SandboxReport, { kind: 'status' }>>(x.payload);
          return { status: p.status, errorCode: p.error?.code ?? null, dueAt: iso(x.due_at), reportedAt: isoOrNull(x.reported_at) };
        }),
    }));
  }

  /** The templates submitted for review, newest first. */
  async templates(limit: number) {
    const rows = await this.db.selectFrom('sandbox_chatapp_templates').selectAll().orderBy('submitted_at', 'desc').limit(limit).execute();
    const now = this.now().getTime();
    return rows.map((r) => ({
      platformTemplateId: r.platform_template_id,
      businessAccountId: r.business_account_id,
      name: r.name,
      language: r.language,
      category: r.category,
      // the outcome is known to the sandbox from the start, but the platform says it only once reviewed
      status: new Date(r.decides_at).getTime() <= now ? r.status : 'PENDING',
      reason: new Date(r.decides_at).getTime() <= now ? r.reason : null,
      submittedAt: iso(r.submitted_at),
      decidesAt: iso(r.decides_at),
    }));
  }
}
