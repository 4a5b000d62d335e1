import nodemailer, { type Transporter } from 'nodemailer';
import type { Mail, MailerPort } from '../../application/signup/mailer.port.js';
import { DomainError } from '../../domain/shared/errors.js';

/** Real e-mail through SMTP: `SMTP_URL` such as `smtps://user:pass@smtp.example.com:465`, sender `MAIL_FROM`. */
export class SmtpMailer implements MailerPort {
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(smtpUrl);
  }

  async send(mail: Mail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
  }
}

/**
 * PROVIDER_MODE=live without SMTP_URL: there is no mailbox to fall back on (the sandbox outbox keeps codes readable,
 * which live mode must not), so nothing is sent and nothing is kept: sign-up answers 503 naming the missing setting.
 */
export class UnconfiguredMailer implements MailerPort {
  ready(): void {
    throw new DomainError(
      'EMAIL_NOT_CONFIGURED',
      'E-mail is not configured: set SMTP_URL (PROVIDER_MODE=live keeps no sandbox mailbox), so no verification code can be sent',
    );
  }

  async send(): Promise<void> {
    this.ready();
  }
}
