import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import type { TemplateStatus } from './session-window.js';
import type { TemplateVariables } from './template-body.js';

/**
 * A message template of one connection, `chatapp_template-<id>` (docs/chatapp.md#templates). Its id derives from
 * the connection, the name and the language, so one name and language exists once per connection. The platform
 * reviews it asynchronously: status moves pending -> approved | rejected, each a fact; a rejected template may be
 * created again with new content (a new submission).
 */
export const templateStream = (templateId: string) => `chatapp_template-${templateId}`;

export const TEMPLATE_CATEGORIES = ['marketing', 'utility', 'authentication'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

export type TemplateButton =
  | Readonly<{ type: 'quick_reply'; text: string }>
  | Readonly<{ type: 'url'; text: string; url: string }>
  | Readonly<{ type: 'phone_number'; text: string; phoneNumber: string }>;

export type TemplateContent = Readonly<{
  name: string;
  language: string;
  category: TemplateCategory;
  body: string;
  header: string | null;
  buttons: readonly TemplateButton[];
  variables: TemplateVariables;
  /** example values the platform's reviewers see (one per variable), or null */
  examples: readonly string[] | Readonly<Record<string, string>> | null;
}>;

type Ref = { templateId: string };

export type TemplateCommand =
  | Command<'CreateTemplate', Ref & { connectionId: string } & TemplateContent>
  | Command<'RecordTemplateSubmitted', Ref & { submission: number; platformTemplateId: string }>
  | Command<
      'RecordTemplateReviewed',
      Ref & { platformTemplateId: string | null; submission?: number; approved: boolean; reason: string | null }
    >;

export type TemplateEvent =
  | Event<
      'ChatappTemplateCreated',
      Ref & TemplateContent & { accountId: string; connectionId: string; submission: number; createdAt: string }
    >
  | Event<'ChatappTemplateSubmitted', Ref & { submission: number; platformTemplateId: string; submittedAt: string }>
  | Event<'ChatappTemplateApproved', Ref & { submission: number; approvedAt: string }>
  | Event<'ChatappTemplateRejected', Ref & { submission: number; reason: string; rejectedAt: string }>;

export const templateEventTypes = [
  'ChatappTemplateCreated',
  'ChatappTemplateSubmitted',
  'ChatappTemplateApproved',
  'ChatappTemplateRejected',
] as const satisfies readonly TemplateEvent['type'][];

export type TemplateState =
  | { exists: false }
  | {
      exists: true;
      templateId: string;
      accountId: string;
      connectionId: string;
      status: TemplateStatus;
      submission: number;
      platformTemplateId: string | null;
      content: TemplateContent;
    };

export const templateDecider: Decider<TemplateCommand, TemplateEvent, TemplateState> = {
  initialState: () => ({ exists: false }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'CreateTemplate': {
        const { templateId, connectionId, ...content } = cmd.data;
        if (s.exists && s.status !== 'rejected')
          throw new DomainError(
            'CHATAPP_TEMPLATE_EXISTS',
            `The template ${content.name} (${content.language}) exists on this connection (${s.status}); use another name or language`,
          );
        return [
          {
            type: 'ChatappTemplateCreated',
            data: {
              templateId,
              accountId: cmd.metadata.accountId,
              connectionId,
              ...content,
              submission: s.exists ? s.submission + 1 : 1,
              createdAt: now,
            },
          },
        ];
      }
      case 'RecordTemplateSubmitted': {
        const d = cmd.data;
        if (!s.exists || s.submission !== d.submission || s.platformTemplateId !== null) return [];
        return [
          {
            type: 'ChatappTemplateSubmitted',
            data: { templateId: d.templateId, submission: d.submission, platformTemplateId: d.platformTemplateId, submittedAt: now },
          },
        ];
      }
      case 'RecordTemplateReviewed': {
        const d = cmd.data;
        // a review of an earlier submission, or of this one a second time, changes nothing
        if (!s.exists || s.status !== 'pending') return [];
        if (d.submission !== undefined && d.submission !== s.submission) return [];
        if (d.platformTemplateId !== null && s.platformTemplateId !== null && d.platformTemplateId !== s.platformTemplateId) return [];
        return d.approved
          ? [{ type: 'ChatappTemplateApproved', data: { templateId: d.templateId, submission: s.submission, approvedAt: now } }]
          : [
              {
                type: 'ChatappTemplateRejected',
                data: {
                  templateId: d.templateId,
                  submission: s.submission,
                  reason: d.reason ?? 'rejected by the platform',
                  rejectedAt: now,
                },
              },
            ];
      }
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'ChatappTemplateCreated': {
        const { templateId, accountId, connectionId, submission, createdAt: _c, ...content } = e.data;
        return { exists: true, templateId, accountId, connectionId, status: 'pending', submission, platformTemplateId: null, content };
      }
      case 'ChatappTemplateSubmitted':
        return s.exists ? { ...s, platformTemplateId: e.data.platformTemplateId } : s;
      case 'ChatappTemplateApproved':
        return s.exists ? { ...s, status: 'approved' } : s;
      case 'ChatappTemplateRejected':
        return s.exists ? { ...s, status: 'rejected' } : s;
      default:
        return assertNever(e);
    }
  },
};
