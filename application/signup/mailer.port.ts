export type Mail = Readonly<{ to: string; subject: string; text: string }>;

/** Sends e-mail. Adapters: SMTP (SMTP_URL) and the sandbox outbox (readable through /sandbox/outbox). */
export interface MailerPort {
  send(mail: Mail): Promise<void>;
  /** refuses (throws) when no mail can be sent at all, before anything is recorded (live mode without SMTP_URL) */
  ready?(): void;
}
