/**
 * The two halves of every `$all` filter. The server half (`serverFilter`) keeps the traffic small: event types as
 * an anchored regex, categories as stream-name prefixes, system events (`$`-prefixed types) excluded. The client
 * half (`keep`) applies the port's exact meaning again, because the server's filters cannot express all of it
 * (system events written to user-named streams, events in `$`-prefixed streams).
 */
import { eventTypeFilter, type Filter, streamNameFilter } from '@eventstore/db-client';
import type { EventFilter } from '../../../application/ports/event-store.port.js';
import { categoryOf } from '../../../domain/shared/streams.js';
import type { RawEvent } from './event-mapping.js';

const SYSTEM_PREFIX = '$';

export const isSystem = (e: Pick<RawEvent, 'type' | 'streamName'>): boolean =>
  e.type.startsWith(SYSTEM_PREFIX) || e.streamName.startsWith(SYSTEM_PREFIX);

/** The client-side half of the filter (the server did the same, this keeps the port's semantics exact). */
export const keep = (f: EventFilter | undefined, e: RawEvent): boolean =>
  !isSystem(e) && (!f || ('eventTypes' in f ? f.eventTypes.includes(e.type) : f.streamCategories.includes(categoryOf(e.streamName))));

export type WireFilter =
  | Readonly<{ on: 'stream' | 'type'; regex: string }>
  | Readonly<{ on: 'stream' | 'type'; prefixes: readonly string[] }>;

/** `^[^$]`: what the client's `excludeSystemEvents()` sends. */
export const EXCLUDE_SYSTEM_TYPES: WireFilter = { on: 'type', regex: '^[^$]' };

/** Regex metacharacters escaped with a backslash: the same meaning in .NET's regex (the server) and JavaScript's. */
const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Exact event types as an anchored alternation; categories as stream-name prefixes `<category>-` (a stream is
 * named `<category>-<id>`, and a category holds no `-`). 'nothing' when the filter lists no type or category.
 */
export function serverFilter(f: EventFilter | undefined): WireFilter | 'nothing' {
  if (!f) return EXCLUDE_SYSTEM_TYPES;
  if ('eventTypes' in f) return f.eventTypes.length ? { on: 'type', regex: `^(?:${f.eventTypes.map(escapeRegex).join('|')})$` } : 'nothing';
  return f.streamCategories.length ? { on: 'stream', prefixes: f.streamCategories.map((c) => `${c}-`) } : 'nothing';
}

/** The same server-side filter in the client's own form, for `subscribeToAll`. */
export function toClientFilter(w: WireFilter): Filter {
  const make = w.on === 'type' ? eventTypeFilter : streamNameFilter;
  return 'regex' in w ? make({ regex: w.regex }) : make({ prefixes: [...w.prefixes] });
}
