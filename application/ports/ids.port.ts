/** The only source of identifiers and secrets for application code. */
export interface IdsPort {
  /** A prefixed, sortable, opaque id such as `agt_01J…`. */
  id(prefix: string): string;
  /** An RFC 4122 UUID (event ids must be UUIDs for EventStoreDB). */
  uuid(): string;
  /**
   * A prefixed id that the same parts always give (e.g. a conversation's id from its number and participant, a
   * message's id from the carrier's id of an inbound text): concurrent and repeated writers meet on one stream.
   */
  derived(prefix: string, ...parts: string[]): string;
}
