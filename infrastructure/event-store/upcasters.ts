/**
 * Upcasters run on read in every event-store adapter, so the domain only ever sees the newest shape of an
 * event (docs/event-store.md#aggregates-and-events). Keyed by event type; each receives the stored data and its schema version.
 * No event has changed shape yet: the table is empty, and an event type without an entry is passed through.
 */
export const upcasters: Readonly<Record<string, (data: Record<string, unknown>, version: number) => Record<string, unknown>>> = {};

export const upcast = (type: string, data: Record<string, unknown>, version: number): Record<string, unknown> => {
  const up = upcasters[type];
  return up ? up(data, version) : data;
};
