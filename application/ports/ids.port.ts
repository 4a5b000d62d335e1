/** The only source of identifiers and secrets for application code. */
export interface IdsPort {
  /** A prefixed, sortable, opaque id such as `agt_01J…`. */
  id(prefix: string): string;
  /** An RFC 4122 UUID (event ids must be UUIDs for EventStoreDB). */
  uuid(): string;
}
