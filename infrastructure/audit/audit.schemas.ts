import { z } from '../http/openapi.js';

export const HistoryQuery = z.object({
  at: z.iso.datetime({ offset: true }).optional().openapi({
    description: 'answer the record as it was at this instant: only the events recorded at or before it are folded',
  }),
});

const HistoryEntry = z
  .object({
    seq: z.number().int().openapi({ description: '1, 2, 3, … in the order the facts were recorded' }),
    stream: z.string(),
    revision: z.number().int().openapi({ description: "the event's revision in its stream (0-based)" }),
    eventId: z.string(),
    type: z.string().openapi({ description: 'the event type, e.g. MessageDelivered' }),
    time: z.string().openapi({ description: 'when the fact was recorded' }),
    actor: z.string().openapi({ description: 'who did it: key:<keyId>, admin, cli, system:<component>, anonymous' }),
    requestId: z.string().nullable(),
    correlationId: z.string(),
    causationId: z.string().nullable().openapi({ description: 'the event that caused this one, when a process reacted to it' }),
    status: z.string().openapi({ description: "the resource's status once this step applied" }),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi('HistoryEntry');

/** A history, of one of the kinds the capabilities contribute. */
export const historyResponse = (kinds: readonly string[]) =>
  z
    .object({
      kind: z.enum(Object.fromEntries(kinds.map((k) => [k, k]))),
      id: z.string(),
      stream: z.string(),
      at: z.string().nullable().openapi({ description: 'the instant asked for with ?at=, else null' }),
      status: z.string().nullable().openapi({ description: 'the status as of `at` (now without it); null when it did not exist yet' }),
      record: z
        .record(z.string(), z.unknown())
        .nullable()
        .openapi({ description: 'the record as of `at`, folded from its events; null when it did not exist yet' }),
      events: z.array(HistoryEntry),
    })
    .openapi('HistoryResponse');
