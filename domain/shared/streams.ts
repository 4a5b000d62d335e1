/**
 * Stream names are `<category>-<id>`; the category is snake_case without `-`, because EventStoreDB's
 * `$by_category` and our PostgreSQL `stream_category` split on the first `-` (docs/event-store.md#aggregates-and-events).
 */

export const categoryOf = (stream: string): string => {
  const i = stream.indexOf('-');
  return i < 0 ? stream : stream.slice(0, i);
};
