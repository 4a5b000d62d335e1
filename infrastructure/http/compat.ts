import type { z } from 'zod';
import type { DeliveryView } from '../../application/webhooks/webhook.port.js';
import type { WebhookTestResult } from '../../application/webhooks/webhook-commands.js';
import { z as zo } from './openapi.js';

/**
 * What the HTTP edge does so that the public API's existing clients run unchanged (docs/compatibility.md):
 * request aliases, the field list a strict (paid) request accepts, and the extra answer names older
 * clients read.
 */

type Aliases = Readonly<Record<string, string>>;
const aliasesOf = new WeakMap<z.core.$ZodType, Aliases>();

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Accepts each `alias` as another name of its canonical field (`{ area_code: 'areaCode' }`). The alias is
 * moved onto the canonical name before the schema runs, so handlers only see the canonical one. Both given
 * with different values is a 422 on the alias: the server never guesses which one the client meant.
 */
export function withAliases<S extends z.ZodType>(schema: S, aliases: Aliases) {
  const wrapped = zo.preprocess((input, ctx) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
    const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
    for (const [alias, canonical] of Object.entries(aliases)) {
      if (!(alias in out)) continue;
      const value = out[alias];
      delete out[alias];
      if (value === undefined) continue;
      if (out[canonical] !== undefined && !same(out[canonical], value)) {
        ctx.addIssue({
          code: 'custom',
          path: [alias],
          input: value,
          message: `is another name for ${canonical}, and the two disagree (${canonical} is ${JSON.stringify(out[canonical])}); send only one of them`,
        });
        continue;
      }
      out[canonical] = value;
    }
    return out;
  }, schema);
  aliasesOf.set(wrapped, aliases);
  return wrapped;
}

/**
 * The top-level field names an object schema accepts, aliases included; null when the schema is not an
 * object (a strict request needs a fixed list of names, so such a schema cannot be used strictly).
 */
export function acceptedKeys(schema: z.core.$ZodType): Set<string> | null {
  const own = aliasesOf.get(schema);
  let keys: Set<string> | null = null;
  if (schema instanceof zo.ZodObject) keys = new Set(Object.keys(schema.shape));
  else if (schema instanceof zo.ZodPipe)
    keys = (schema.in instanceof zo.ZodTransform ? null : acceptedKeys(schema.in)) ?? acceptedKeys(schema.out);
  else if (
    schema instanceof zo.ZodOptional ||
    schema instanceof zo.ZodNullable ||
    schema instanceof zo.ZodDefault ||
    schema instanceof zo.ZodPrefault ||
    schema instanceof zo.ZodReadonly ||
    schema instanceof zo.ZodCatch
  )
    keys = acceptedKeys(schema.def.innerType);
  if (keys && own) for (const alias of Object.keys(own)) keys.add(alias);
  return keys;
}

/** Fields of a request part that its schema does not know (only for plain objects; anything else is the schema's to reject). */
export function unknownKeys(input: unknown, accepted: ReadonlySet<string>): string[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return [];
  return Object.keys(input).filter((k) => !accepted.has(k));
}

// --- answer names older clients read --------------------------------------------------------------------------

/** The webhook test result under the specification's names and the names the public MCP server reads. */
export const testResultCompat = (r: WebhookTestResult) => ({
  ...r,
  statusCode: r.httpStatus,
  responseMs: r.responseTimeMs,
  error: r.errorMessage,
});

/**
 * A delivery with the item fields the public MCP server reads, derived from the specification's ones:
 * `event` is the event type, `statusCode` the last HTTP status, `responseMs` the last attempt's duration,
 * `deliveredAt` the time of the successful attempt (null while not delivered).
 */
export const deliveryCompat = (d: DeliveryView) => {
  const last = d.attempts.reduce<DeliveryView['attempts'][number] | undefined>((a, b) => (a && a.attempt > b.attempt ? a : b), undefined);
  const delivered = d.attempts.find((a) => a.status === 'success');
  return {
    ...d,
    event: d.eventType,
    success: d.status === 'success',
    statusCode: d.httpStatus,
    responseMs: last ? last.responseTimeMs : null,
    deliveredAt: delivered ? delivered.attemptedAt : null,
  };
};
