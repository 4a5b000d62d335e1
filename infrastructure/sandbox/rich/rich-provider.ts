import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { InboundMessage } from '../../../application/messaging/delivery/transport.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { IdsPort } from '../../../application/ports/ids.port.js';
import { RICH_CHANNEL } from '../../../application/rich/rich-commands.js';
import {
  type RichImage,
  type RichLocation,
  RichProviderError,
  type RichProviderPort,
} from '../../../application/rich/rich-provider.port.js';
import type { CardNames } from '../../../domain/rich/contact-card.decider.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';
import { iso, isoOrNull, json } from '../shared/rows.js';
import { SandboxUpstream } from '../shared/upstream.js';
import type { SandboxRichDb } from './db.js';
import { positionAt, RICH_MAGIC, SHARING_CONTACTS, sandboxCapabilities } from './rules.js';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/**
 * The sandbox rich-messaging provider (docs/sandbox.md#rich-messaging-the-sandbox-provider): it serves the numbers
 * added to it through its control API, answers capability checks by the number rules, takes messages from lines it
 * serves and reports them delivered and then read (after SANDBOX_RICH_DELIVERY_DELAY_MS and
 * SANDBOX_RICH_READ_DELAY_SECONDS on the platform's Clock), keeps the contact cards and chat backgrounds it is given,
 * and knows a few contacts who share their location with every line. Its state lives in its own tables.
 */
export class SandboxRichProvider extends SandboxUpstream<SandboxRichDb> implements RichProviderPort {
  constructor(
    db: Kysely<ReadDb>,
    clock: ClockPort,
    private readonly ids: IdsPort,
    private readonly o: Readonly<{ deliveryMs: number; readMs: number }>,
  ) {
    super(db, clock);
  }

  private async requireLine(line: string) {
    const r = await this.db.selectFrom('sandbox_rich_lines').select('phone_number').where('phone_number', '=', line).executeTakeFirst();
    if (!r) throw new RichProviderError(`the provider does not serve ${line}`);
  }

  // --- the control API ---

  async addLine(phoneNumber: string): Promise<void> {
    await this.db
      .insertInto('sandbox_rich_lines')
      .values({ phone_number: phoneNumber, added_at: this.now().toISOString() })
      .onConflict((oc) => oc.column('phone_number').doNothing())
      .execute();
  }

  async removeLine(phoneNumber: string): Promise<boolean> {
    const r = await this.db.deleteFrom('sandbox_rich_lines').where('phone_number', '=', phoneNumber).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  async lines(): Promise<{ phoneNumber: string; addedAt: string }[]> {
    const rows = await this.db.selectFrom('sandbox_rich_lines').selectAll().orderBy('added_at').execute();
    return rows.map((r) => ({ phoneNumber: r.phone_number, addedAt: iso(r.added_at) }));
  }

  async messages(o: { to?: string | undefined; limit: number }) {
    let q = this.db.selectFrom('sandbox_rich_messages').selectAll().orderBy('submitted_at', 'desc').limit(o.limit);
    if (o.to) q = q.where('to_number', '=', o.to);
    const rows = await q.execute();
    const reports = rows.length
      ? await this.db
          .selectFrom('sandbox_rich_reports')
          .selectAll()
          .where(
            'provider_message_id',
            'in',
            rows.map((r) => r.provider_message_id),
          )
          .orderBy('due_at')
          .execute()
      : [];
    return rows.map((r) => ({
      providerMessageId: r.provider_message_id,
      idempotencyKey: r.idempotency_key,
      from: r.from_number,
      to: r.to_number,
      body: r.body,
      mediaUrls: json<string[]>(r.media_urls),
      sendStyle: r.send_style,
      replyTo: r.reply_to,
      submittedAt: iso(r.submitted_at),
      statuses: reports
        .filter((x) => x.provider_message_id === r.provider_message_id)
        .map((x) => ({ status: x.status, dueAt: iso(x.due_at), reportedAt: isoOrNull(x.reported_at) })),
    }));
  }

  async contactCard(line: string) {
    const r = await this.db.selectFrom('sandbox_rich_contact_cards').selectAll().where('line', '=', line).executeTakeFirst();
    if (!r) return null;
    return {
      line: r.line,
      version: r.version,
      card: json<CardNames | null>(r.card),
      avatar: r.avatar_type ? { contentType: r.avatar_type, bytes: r.avatar_bytes!, sha256: r.avatar_sha256! } : null,
      updatedAt: iso(r.updated_at),
    };
  }

  async backgrounds(line?: string) {
    let q = this.db.selectFrom('sandbox_rich_backgrounds').selectAll().orderBy('updated_at', 'desc');
    if (line) q = q.where('line', '=', line);
    return (await q.execute()).map((r) => ({
      line: r.line,
      participant: r.participant,
      status: r.status,
      contentType: r.content_type,
      bytes: r.bytes,
      sha256: r.sha256,
      updatedAt: iso(r.updated_at),
    }));
  }

  async actions(limit: number) {
    const rows = await this.db
      .selectFrom('sandbox_rich_actions')
      .selectAll()
      .orderBy('at', 'desc')
      .orderBy('action_id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      kind: r.kind,
      from: r.from_number,
      to: r.to_number,
      detail: json<Record<string, unknown>>(r.detail),
      at: iso(r.at),
    }));
  }

  private async act(kind: string, from: string, to: string, detail: Record<string, unknown>) {
    await this.db
      .insertInto('sandbox_rich_actions')
      .values({
        action_id: this.ids.id('rac'),
        kind,
        from_number: from,
        to_number: to,
        detail: JSON.stringify(detail),
        at: this.now().toISOString(),
      })
      .execute();
  }

  /** A person writes to a line: the provider's id of the message, logged as an action. */
  async inbound(m: Pick<InboundMessage, 'to' | 'from' | 'body' | 'mediaUrls'>): Promise<InboundMessage> {
    await this.requireLine(m.to);
    const providerMessageId = `IM${this.ids.uuid().replace(/-/g, '')}`;
    await this.act('inbound', m.from, m.to, { providerMessageId, body: m.body, mediaUrls: m.mediaUrls });
    return { ...m, channel: RICH_CHANNEL, providerMessageId, receivedAt: this.now().toISOString(), group: null, reaction: null };
  }

  // --- the provider ---

  async checkCapabilities(q: { line: string; phoneNumber: string }): Promise<{ imessage: boolean; sms: boolean }> {
    await this.requireLine(q.line);
    if (RICH_MAGIC[q.phoneNumber]?.outcome === 'check-fails') throw new RichProviderError('the provider could not reach its directory');
    return sandboxCapabilities(q.phoneNumber);
  }

  async send(m: Parameters<RichProviderPort['send']>[0]): Promise<{ providerMessageId: string }> {
    const known = await this.db
      .selectFrom('sandbox_rich_messages')
      .select('provider_message_id')
      .where('idempotency_key', '=', m.idempotencyKey)
      .executeTakeFirst();
    if (known) return { providerMessageId: known.provider_message_id };
    await this.requireLine(m.from);
    if (RICH_MAGIC[m.to]?.outcome === 'send-refused') throw new RichProviderError('the recipient device is unreachable');
    if (!sandboxCapabilities(m.to).imessage) throw new RichProviderError(`${m.to} is not reachable by imessage`);
    if (m.mediaUrls.length >= 2 && m.body.trim() !== '') throw new RichProviderError('a carousel carries no text');
    const providerMessageId = `IM${this.ids.uuid().replace(/-/g, '')}`;
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('sandbox_rich_messages')
        .values({
          idempotency_key: m.idempotencyKey,
          provider_message_id: providerMessageId,
          from_number: m.from,
          to_number: m.to,
          body: m.body,
          media_urls: JSON.stringify(m.mediaUrls),
          send_style: m.sendStyle,
          reply_to: m.replyToProviderMessageId,
          submitted_at: now.toISOString(),
        })
        .onConflict((oc) => oc.column('idempotency_key').doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 0n) return;
      for (const [status, after] of [
        ['delivered', this.o.deliveryMs],
        ['read', this.o.deliveryMs + this.o.readMs],
      ] as const)
        await trx
          .insertInto('sandbox_rich_reports')
          .values({
            report_id: `${providerMessageId}:${status}`,
            message_id: m.idempotencyKey,
            provider_message_id: providerMessageId,
            status,
            due_at: new Date(now.getTime() + after).toISOString(),
            attempts: 0,
          })
          .execute();
    });
    const stored = await this.db
      .selectFrom('sandbox_rich_messages')
      .select('provider_message_id')
      .where('idempotency_key', '=', m.idempotencyKey)
      .executeTakeFirstOrThrow();
    return { providerMessageId: stored.provider_message_id };
  }

  async react(r: Parameters<RichProviderPort['react']>[0]): Promise<void> {
    await this.requireLine(r.from);
    await this.act('reaction', r.from, r.to, {
      idempotencyKey: r.idempotencyKey,
      providerMessageId: r.providerMessageId,
      reaction: r.reaction,
    });
  }

  async typing(t: { from: string; to: string }): Promise<void> {
    await this.requireLine(t.from);
    await this.act('typing', t.from, t.to, {});
  }

  async publishContactCard(c: { line: string; version: number; card: (CardNames & { avatar: RichImage | null }) | null }): Promise<void> {
    await this.requireLine(c.line);
    const avatar = c.card?.avatar ?? null;
    const card = c.card ? { firstName: c.card.firstName, lastName: c.card.lastName, displayName: c.card.displayName } : null;
    const values = {
      version: c.version,
      card: card ? JSON.stringify(card) : null,
      avatar_type: avatar?.contentType ?? null,
      avatar_bytes: avatar ? avatar.data.length : null,
      avatar_sha256: avatar ? sha256(avatar.data) : null,
      updated_at: this.now().toISOString(),
    };
    await this.db
      .insertInto('sandbox_rich_contact_cards')
      .values({ line: c.line, ...values })
      .onConflict((oc) => oc.column('line').doUpdateSet(values).where('sandbox_rich_contact_cards.version', '<', c.version))
      .execute();
  }

  async setBackground(b: { idempotencyKey: string; line: string; participant: string; image: RichImage }): Promise<void> {
    await this.requireLine(b.line);
    const values = {
      idempotency_key: b.idempotencyKey,
      content_type: b.image.contentType,
      bytes: b.image.data.length,
      sha256: sha256(b.image.data),
      status: 'set',
      updated_at: this.now().toISOString(),
    };
    await this.db
      .insertInto('sandbox_rich_backgrounds')
      .values({ line: b.line, participant: b.participant, ...values })
      .onConflict((oc) => oc.columns(['line', 'participant']).doUpdateSet(values))
      .execute();
  }

  async clearBackground(b: { line: string; participant: string; version: number }): Promise<void> {
    await this.requireLine(b.line);
    await this.db
      .updateTable('sandbox_rich_backgrounds')
      .set({ status: 'cleared', updated_at: this.now().toISOString() })
      .where('line', '=', b.line)
      .where('participant', '=', b.participant)
      .execute();
  }

  async locations(q: { lines: readonly string[] }): Promise<RichLocation[]> {
    if (q.lines.length === 0) return [];
    const served = await this.db
      .selectFrom('sandbox_rich_lines')
      .select('phone_number')
      .where('phone_number', 'in', [...q.lines])
      .execute();
    const at = this.now();
    return served.flatMap(({ phone_number: line }) =>
      SHARING_CONTACTS.map((c) => {
        const p = positionAt(c, at);
        return {
          line,
          phoneNumber: c.phoneNumber,
          sharing: p !== null,
          latitude: p?.latitude ?? null,
          longitude: p?.longitude ?? null,
          fixAt: p ? at.toISOString() : null,
        };
      }),
    );
  }
}
