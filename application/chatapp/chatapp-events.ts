import { templateDecider, templateStream } from '../../domain/chatapp/template.decider.js';
import type { EventStorePort } from '../ports/event-store.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { ChatappEventsPort, TemplateReview } from './chat-platform.port.js';
import type { ChatappQueries } from './chatapp-queries.port.js';
import { PLATFORM_ACTOR } from './chatapp-transport.js';

/**
 * What the chat platform reports about the capability's own things (docs/chatapp.md#templates): template reviews.
 * Its messages, reactions and statuses go to the one inbound handler of messaging (docs/messaging.md#receiving).
 */
export class ChatappEventsHandler implements ChatappEventsPort {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly queries: ChatappQueries,
    private readonly readModels: ReadModelsPort,
    private readonly store: EventStorePort,
  ) {}

  async templateReviewed(t: TemplateReview): Promise<void> {
    let found = await this.queries.templatesByPlatformId(t.platformTemplateId);
    if (found.length === 0) {
      await this.readModels.waitFor(await this.store.headCheckpoint(), ['ChatappTemplateSubmitted']);
      found = await this.queries.templatesByPlatformId(t.platformTemplateId);
    }
    if (found.length === 0) throw new Error(`no template with platform id ${t.platformTemplateId} yet`);
    for (const f of found)
      await this.exec.execute(
        templateDecider,
        templateStream(f.templateId),
        {
          type: 'RecordTemplateReviewed',
          data: { templateId: f.templateId, platformTemplateId: t.platformTemplateId, approved: t.approved, reason: t.reason },
        },
        { accountId: f.accountId, requestId: null, correlationId: t.platformTemplateId, actor: PLATFORM_ACTOR },
      );
  }
}
