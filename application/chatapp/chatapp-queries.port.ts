import type { TemplateButton, TemplateCategory } from '../../domain/chatapp/template.decider.js';
import type { Page, PageOf } from '../shared/page.js';

/** A connection as the API shows it (docs/chatapp.md#connections): never its token. */
export type ConnectionView = Readonly<{
  id: string;
  accountId: string;
  businessAccountId: string;
  businessName: string | null;
  status: 'pending' | 'active' | 'failed';
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}>;

/** A bound (or binding, or failed) platform number (docs/chatapp.md#numbers). */
export type ChatappNumberView = Readonly<{
  id: string;
  accountId: string;
  connectionId: string;
  phoneNumberId: string;
  phoneNumber: string | null;
  verifiedName: string | null;
  agentId: string | null;
  /** the line's id in conversations and sends (`number_id`): the native number's when dual-channel */
  numberId: string | null;
  nativeNumberId: string | null;
  dualChannel: boolean;
  status: 'pending' | 'bound' | 'failed' | 'unbound';
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}>;

export type TemplateView = Readonly<{
  id: string;
  accountId: string;
  connectionId: string;
  name: string;
  language: string;
  category: TemplateCategory;
  body: string;
  header: string | null;
  buttons: TemplateButton[];
  parameterFormat: 'none' | 'positional' | 'named';
  /** the names of a named template's variables, or `{{1}}`… for a positional one */
  variables: string[];
  status: 'pending' | 'approved' | 'rejected';
  rejectionReason: string | null;
  createdAt: string;
  updatedAt: string;
}>;

export interface ChatappQueries {
  connections(accountId: string, page: Page): Promise<PageOf<ConnectionView>>;
  /** not deleted */
  connection(accountId: string, connectionId: string): Promise<ConnectionView | null>;
  numbers(accountId: string, connectionId: string, page: Page): Promise<PageOf<ChatappNumberView>>;
  number(accountId: string, connectionId: string, bindingId: string): Promise<ChatappNumberView | null>;
  /** the bindings of a connection still bound or binding (any account: a connection has one) */
  heldByConnection(connectionId: string): Promise<{ bindingId: string; accountId: string }[]>;
  /** the bound number whose line this is */
  boundLine(accountId: string, lineId: string): Promise<ChatappNumberView | null>;
  /** the bound chat-only number with this E.164 */
  boundByPhoneNumber(accountId: string, phoneNumber: string): Promise<ChatappNumberView | null>;
  /** the bound numbers on these lines, or chat-only ones of this agent */
  boundLinesOf(accountId: string, o: { lineIds: readonly string[]; agentId: string }): Promise<ChatappNumberView[]>;
  templates(accountId: string, connectionId: string, page: Page): Promise<PageOf<TemplateView>>;
  template(accountId: string, connectionId: string, templateId: string): Promise<TemplateView | null>;
  templatesByPlatformId(platformTemplateId: string): Promise<{ templateId: string; accountId: string }[]>;
  /** when the participant last wrote on the line's chat conversation (it opens the 24-hour window), or null */
  lastInboundAt(accountId: string, lineId: string, participant: string): Promise<string | null>;
}
