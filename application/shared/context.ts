import type { EventMetadata } from '../ports/event-store.port.js';

/** Who is acting, for which account, on which request: becomes every event's metadata. */
export type RequestContext = Readonly<{
  accountId: string;
  requestId: string | null;
  correlationId: string;
  actor: string;
  /** the event that caused this work, when a process manager acts on it */
  causationId?: string | null;
}>;

export const metadataOf = (ctx: RequestContext, accountId = ctx.accountId): EventMetadata => ({
  accountId,
  correlationId: ctx.correlationId,
  causationId: ctx.causationId ?? null,
  requestId: ctx.requestId,
  actor: ctx.actor,
});
