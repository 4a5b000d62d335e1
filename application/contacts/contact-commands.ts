import {
  type ContactChanges,
  type ContactFields,
  contactDecider,
  contactExists,
  contactStream,
} from '../../domain/contact/contact.decider.js';
import { contactPhoneDecider, contactPhoneStream } from '../../domain/contact/contact-phone.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { ContactQueries, ContactView } from './contact-queries.port.js';

export type NewContact = ContactFields;

const notFound = () => new DomainError('CONTACT_NOT_FOUND', 'Contact not found');

/**
 * Contact use cases. A phone number belongs to at most one contact of an account: every write that gives a
 * contact a number first claims the number on its own stream, then writes the contact, and a number is released
 * after the contact lets go of it (docs/contacts.md#one-contact-per-number).
 */
export class ContactCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly queries: ContactQueries,
    /** how long a claim whose contact does not show the number yet counts as a write under way (docs/contacts.md#recovering-a-number) */
    private readonly o: { claimGraceMs: number },
  ) {}

  async create(ctx: RequestContext, input: NewContact): Promise<ContactView> {
    const contactId = this.ids.id('ct');
    await this.claim(ctx, input.phoneNumber, contactId);
    try {
      await this.exec.execute(
        contactDecider,
        contactStream(contactId),
        { type: 'CreateContact', data: { contactId, fields: input } },
        ctx,
        {
          readYourWrites: true,
        },
      );
    } catch (err) {
      await this.afterFailedWrite(ctx, contactId, input.phoneNumber, null);
      throw err;
    }
    return this.view(ctx, contactId);
  }

  async update(ctx: RequestContext, contactId: string, changes: ContactChanges): Promise<ContactView> {
    const { state } = await this.exec.state(contactDecider, contactStream(contactId));
    if (state.status !== 'active' || state.accountId !== ctx.accountId) throw notFound();
    const before = state.fields.phoneNumber;
    const moves = changes.phoneNumber !== undefined && changes.phoneNumber !== before;
    if (moves) await this.claim(ctx, changes.phoneNumber!, contactId);
    try {
      await this.exec.execute(contactDecider, contactStream(contactId), { type: 'UpdateContact', data: { contactId, changes } }, ctx, {
        readYourWrites: true,
      });
    } catch (err) {
      if (moves) await this.afterFailedWrite(ctx, contactId, changes.phoneNumber!, before);
      throw err;
    }
    if (moves) await this.release(ctx, before, contactId);
    return this.view(ctx, contactId);
  }

  async delete(ctx: RequestContext, contactId: string): Promise<void> {
    const { events } = await this.exec.execute(
      contactDecider,
      contactStream(contactId),
      { type: 'DeleteContact', data: { contactId } },
      ctx,
      {
        readYourWrites: true,
      },
    );
    for (const e of events) if (e.type === 'ContactDeleted') await this.release(ctx, e.data.phoneNumber, contactId);
  }

  private async view(ctx: RequestContext, contactId: string): Promise<ContactView> {
    const v = await this.queries.get(ctx.accountId, contactId);
    if (!v) throw notFound();
    return v;
  }

  /**
   * Makes `contactId` the holder of the number. A number held by another contact is refused with CONTACT_EXISTS,
   * unless that holder provably no longer uses it (docs/contacts.md#recovering-a-number).
   */
  private async claim(ctx: RequestContext, phoneNumber: string, contactId: string): Promise<void> {
    const stream = contactPhoneStream(ctx.accountId, phoneNumber);
    const { state } = await this.exec.state(contactPhoneDecider, stream);
    let takeOver: string | null = null;
    if (state.status === 'held' && state.contactId !== contactId) {
      if (!(await this.isStale(ctx, phoneNumber, state.contactId, state.since))) throw contactExists(phoneNumber);
      takeOver = state.contactId;
    }
    await this.exec.execute(contactPhoneDecider, stream, { type: 'ClaimContactPhone', data: { phoneNumber, contactId, takeOver } }, ctx);
  }

  /** Whether the contact holding the number no longer uses it: deleted, or (after the grace time) never written or moved to another number. */
  private async isStale(ctx: RequestContext, phoneNumber: string, holderId: string, since: string): Promise<boolean> {
    const holder = (await this.exec.state(contactDecider, contactStream(holderId))).state;
    if (holder.status === 'deleted' || holder.status === 'abandoned') return true;
    if (holder.status === 'active' && holder.fields.phoneNumber === phoneNumber) return false;
    // a create or a number change may be between its two writes right now: give it time
    if (Date.parse(this.exec.now()) - Date.parse(since) < this.o.claimGraceMs) return false;
    if (holder.status === 'active') return true;
    // never written: fence the create, so that it cannot land after the number changes hands
    await this.exec.execute(contactDecider, contactStream(holderId), { type: 'AbandonContact', data: { contactId: holderId } }, ctx);
    const again = (await this.exec.state(contactDecider, contactStream(holderId))).state;
    return !(again.status === 'active' && again.fields.phoneNumber === phoneNumber);
  }

  private async release(ctx: RequestContext, phoneNumber: string, contactId: string): Promise<void> {
    await this.exec.execute(
      contactPhoneDecider,
      contactPhoneStream(ctx.accountId, phoneNumber),
      { type: 'ReleaseContactPhone', data: { phoneNumber, contactId } },
      ctx,
    );
  }

  /**
   * A write that claimed `claimed` failed. If the contact was written all the same (only waiting for the read model
   * failed), its claim stands and the number it left (`left`) is released; if not, the claim is given back. Anything
   * that fails here leaves a claim that goes stale and is recovered later (docs/contacts.md#recovering-a-number).
   */
  private async afterFailedWrite(ctx: RequestContext, contactId: string, claimed: string, left: string | null): Promise<void> {
    try {
      const { state } = await this.exec.state(contactDecider, contactStream(contactId));
      const written = state.status === 'active' && state.fields.phoneNumber === claimed;
      if (!written) await this.release(ctx, claimed, contactId);
      else if (left !== null) await this.release(ctx, left, contactId);
    } catch {
      /* the original error is the one to report */
    }
  }
}
