import { inject, injectable } from 'inversify';
import type { Kysely } from 'kysely';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { IdsPort } from '../../../application/ports/ids.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import type { Mail, MailerPort } from '../../../application/signup/mailer.port.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';
import { PLATFORM } from '../../platform/tokens.js';

/**
 * The sandbox e-mail provider: nothing leaves the machine. Each mail is kept in `sandbox_outbox`, the sandbox's
 * documented mail outbox (readable through `GET /sandbox/outbox?email=`, docs/sandbox.md), so sign-up works end to
 * end on one machine. Bound only with PROVIDER_MODE=sandbox; the log names the recipient, never the mail.
 */
@injectable()
export class OutboxMailer implements MailerPort {
  constructor(
    @inject(PLATFORM.ReadDb) private readonly db: Kysely<ReadDb>,
    @inject(PLATFORM.Clock) private readonly clock: ClockPort,
    @inject(PLATFORM.Ids) private readonly ids: IdsPort,
    @inject(PLATFORM.Logger) private readonly log: LoggerPort,
  ) {}

  async send(mail: Mail): Promise<void> {
    await this.db
      .insertInto('sandbox_outbox')
      .values({
        message_id: this.ids.id('mail'),
        to_address: mail.to.toLowerCase(),
        subject: mail.subject,
        body: mail.text,
        sent_at: this.clock.now(),
      })
      .execute();
    // the code is read from the outbox (GET /sandbox/outbox), never from the log (docs/security.md)
    this.log.info({ to: mail.to }, 'sandbox mail kept in the outbox (not sent: PROVIDER_MODE=sandbox)');
  }
}
