import nodemailer, { type Transporter } from 'nodemailer';
import type { Mail, MailerPort } from '../../application/signup/mailer.port.js';

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
