import { DomainError } from '../shared/errors.js';
import { platformCodeText } from './platform-codes.js';
import { type TemplateValues, type TemplateVariables, variablesMismatch } from './template-body.js';

/**
 * The chat platform's session rules (docs/chatapp.md#the-24-hour-window), decided by the conversation before a
 * message is accepted: a free-form message only within SESSION_WINDOW_HOURS of the recipient's last inbound
 * message; outside it only an approved template, whose variables match its shape. Pure: the time is the command's.
 */
export const SESSION_WINDOW_HOURS = 24;

export type TemplateStatus = 'pending' | 'approved' | 'rejected';

/** A template as a send names it, with the facts the rules need (read from the template's own stream). */
export type TemplateUse = Readonly<{
  name: string;
  language: string;
  status: TemplateStatus;
  variables: TemplateVariables;
  values: TemplateValues | null;
}>;

/** What a chat send asks of its conversation: the window's length, and the template when it is one. */
export type SessionSend = Readonly<{ windowHours: number; template: TemplateUse | null }>;

/** When the window that the recipient's last inbound message opened ends (null: they never wrote). */
export function windowExpiresAt(lastInboundAt: string | null, hours = SESSION_WINDOW_HOURS): string | null {
  return lastInboundAt === null ? null : new Date(Date.parse(lastInboundAt) + hours * 3_600_000).toISOString();
}

export const windowOpen = (lastInboundAt: string | null, now: string, hours = SESSION_WINDOW_HOURS): boolean => {
  const end = windowExpiresAt(lastInboundAt, hours);
  return end !== null && Date.parse(now) < Date.parse(end);
};

/** Why a chat send may not be accepted now (code 131047, 100, or a template not approved), or null when it may. */
export function sessionSendRefusal(lastInboundAt: string | null, send: SessionSend, now: string): DomainError | null {
  const t = send.template;
  if (t === null) {
    if (windowOpen(lastInboundAt, now, send.windowHours)) return null;
    const why =
      lastInboundAt === null
        ? 'The recipient has not written to this number, so no window is open'
        : `The window closed at ${windowExpiresAt(lastInboundAt, send.windowHours)}, ${send.windowHours} hours after the recipient's last message`;
    return new DomainError('CHATAPP_SEND_REFUSED', `${platformCodeText(131047)} ${why}`, [], {
      platformCode: 131047,
    });
  }
  if (t.status !== 'approved')
    return new DomainError(
      'CHATAPP_TEMPLATE_NOT_APPROVED',
      t.status === 'pending'
        ? `The template ${t.name} (${t.language}) is still in review; it can be sent once the platform approves it`
        : `The template ${t.name} (${t.language}) was rejected by the platform; it cannot be sent`,
    );
  const mismatch = variablesMismatch(t.variables, t.values);
  if (mismatch)
    return new DomainError(
      'CHATAPP_SEND_REFUSED',
      `${platformCodeText(100)} Template ${t.name} (${t.language}): ${mismatch}`,
      [{ field: 'body.template.variables', message: mismatch, type: 'chatapp_100' }],
      { platformCode: 100 },
    );
  return null;
}
