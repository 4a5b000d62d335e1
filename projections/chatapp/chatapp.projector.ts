import { sql } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { ChatappNumberEvent } from '../../domain/chatapp/chatapp-number.decider.js';
import type { ConnectionEvent } from '../../domain/chatapp/connection.decider.js';
import type { TemplateEvent } from '../../domain/chatapp/template.decider.js';
import type { ConversationEvent } from '../../domain/conversation/conversation.decider.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import './tables.js';
import { guardedRow } from '../shared/guarded.js';

type Inbound = Extract<ConversationEvent, { type: 'InboundMessageReceived' }>;
export type ChatappProjected = ConnectionEvent | ChatappNumberEvent | TemplateEvent | Inbound;

const connection = guardedRow(
  (db) => db.updateTable('chatapp_connections'),
  (e: RecordedEvent<ConnectionEvent>) => ({ connection_id: e.data.connectionId }),
);
const binding = guardedRow(
  (db) => db.updateTable('chatapp_numbers'),
  (e: RecordedEvent<ChatappNumberEvent>) => ({ binding_id: e.data.bindingId }),
);
const template = guardedRow(
  (db) => db.updateTable('chatapp_templates'),
  (e: RecordedEvent<TemplateEvent>) => ({ template_id: e.data.templateId }),
);

/**
 * The chat-application channel's read models (docs/chatapp.md): connections, numbers, templates, each row guarded by
 * the revision of its own stream (a replay changes nothing), and `chatapp_windows`, the last inbound message of each
 * chat conversation, guarded by the conversation stream's revision.
 */
export const chatappProjector = defineProjector<ChatappProjected>({
  name: 'chatapp_v1',
  // it writes without reading first; on a text's path its batches are the checkpoint alone (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['chatapp_connections', 'chatapp_numbers', 'chatapp_templates', 'chatapp_windows'],
  on: {
    async ChatappConnectionRequested(db, e) {
      const d = e.data;
      const values = {
        business_account_id: d.businessAccountId,
        status: 'pending',
        failure_reason: null,
        updated_at: d.requestedAt,
        revision: rowRevision(e),
      };
      await db
        .insertInto('chatapp_connections')
        .values({ connection_id: d.connectionId, account_id: d.accountId, business_name: null, created_at: d.requestedAt, ...values })
        .onConflict((oc) =>
          oc
            .column('connection_id')
            .doUpdateSet({
              ...values,
              // a connection made again after its deletion starts anew
              created_at: sql`case when chatapp_connections.status = 'deleted' then ${d.requestedAt}::timestamptz else chatapp_connections.created_at end`,
            })
            .where('chatapp_connections.revision', '<', rowRevision(e)),
        )
        .execute();
    },
    ChatappConnectionActivated: (db, e) =>
      connection(db, e, { status: 'active', business_name: e.data.businessName, updated_at: e.data.activatedAt }),
    ChatappConnectionFailed: (db, e) => connection(db, e, { status: 'failed', failure_reason: e.data.reason, updated_at: e.data.failedAt }),
    ChatappConnectionDeleted: (db, e) => connection(db, e, { status: 'deleted', updated_at: e.data.deletedAt }),

    async ChatappNumberBindRequested(db, e) {
      const d = e.data;
      const values = {
        account_id: d.accountId,
        connection_id: d.connectionId,
        phone_number_id: d.phoneNumberId,
        agent_id: d.agentId,
        status: 'pending',
        failure_reason: null,
        phone_number: null,
        verified_name: null,
        line_id: null,
        native_number_id: null,
        created_at: d.requestedAt,
        updated_at: d.requestedAt,
        revision: rowRevision(e),
      };
      await db
        .insertInto('chatapp_numbers')
        .values({ binding_id: d.bindingId, ...values })
        .onConflict((oc) => oc.column('binding_id').doUpdateSet(values).where('chatapp_numbers.revision', '<', rowRevision(e)))
        .execute();
    },
    async ChatappNumberBound(db, e) {
      const d = e.data;
      await binding(db, e, {
        status: 'bound',
        phone_number: d.phoneNumber,
        verified_name: d.verifiedName,
        line_id: d.lineId,
        native_number_id: d.nativeNumberId,
        updated_at: d.boundAt,
      });
    },
    ChatappNumberBindFailed: (db, e) => binding(db, e, { status: 'failed', failure_reason: e.data.reason, updated_at: e.data.failedAt }),
    ChatappNumberAgentSet: (db, e) => binding(db, e, { agent_id: e.data.agentId, updated_at: e.data.setAt }),
    ChatappNumberUnbound: (db, e) => binding(db, e, { status: 'unbound', updated_at: e.data.unboundAt }),

    async ChatappTemplateCreated(db, e) {
      const d = e.data;
      const values = {
        account_id: d.accountId,
        connection_id: d.connectionId,
        name: d.name,
        language: d.language,
        category: d.category,
        body: d.body,
        header: d.header,
        buttons: JSON.stringify(d.buttons),
        parameter_format: d.variables.format,
        variables: JSON.stringify(d.variables),
        status: 'pending',
        rejection_reason: null,
        platform_template_id: null,
        submission: d.submission,
        created_at: d.createdAt,
        updated_at: d.createdAt,
        revision: rowRevision(e),
      };
      await db
        .insertInto('chatapp_templates')
        .values({ template_id: d.templateId, ...values })
        .onConflict((oc) => oc.column('template_id').doUpdateSet(values).where('chatapp_templates.revision', '<', rowRevision(e)))
        .execute();
    },
    ChatappTemplateSubmitted: (db, e) =>
      template(db, e, { platform_template_id: e.data.platformTemplateId, updated_at: e.data.submittedAt }),
    ChatappTemplateApproved: (db, e) => template(db, e, { status: 'approved', updated_at: e.data.approvedAt }),
    ChatappTemplateRejected: (db, e) =>
      template(db, e, { status: 'rejected', rejection_reason: e.data.reason, updated_at: e.data.rejectedAt }),

    async InboundMessageReceived(db, e) {
      const d = e.data;
      if (d.channel !== 'chatapp') return;
      const values = {
        last_inbound_at: sql<string>`greatest(chatapp_windows.last_inbound_at, ${d.receivedAt}::timestamptz)`,
        revision: rowRevision(e),
      };
      await db
        .insertInto('chatapp_windows')
        .values({
          conversation_id: d.conversationId,
          account_id: e.metadata.accountId,
          line_id: d.numberId,
          participant: d.from,
          last_inbound_at: d.receivedAt,
          revision: rowRevision(e),
        })
        .onConflict((oc) => oc.column('conversation_id').doUpdateSet(values).where('chatapp_windows.revision', '<', rowRevision(e)))
        .execute();
    },
  },
});
