import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };

export const ErrorEnvelope = z
  .object({
    error: z.object({
      message: z.string(),
      code: z.string(),
      type: z.string(),
      details: z.array(z.object({ field: z.string(), message: z.string(), type: z.string() })),
    }),
    request_id: z.string(),
  })
  .openapi('ErrorEnvelope');

export const ValidationErrorBody = ErrorEnvelope.extend({
  detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() })),
}).openapi('HTTPValidationError');

export const PlainError = z.object({ detail: z.string(), request_id: z.string() }).openapi('PlainError');

/** Operator and sandbox operations: listed after the public API's (docs/api.md#the-api-description-openapijson-and-docs). */
const OPERATOR_TAGS = new Set(['admin', 'sandbox']);

export function buildDocument(registry: OpenAPIRegistry, serverUrl: string | undefined) {
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Agent voice and messaging platform',
      version: '0.1.0',
      description:
        'Phone numbers, agents, calls, messages and webhooks for AI agents. Every write is an event; reads come from projections.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearerAuth: [] }],
  });
  // the docs page opens on the public API: its paths and tags first, the operator's and the sandbox's last
  const tagsOf = (item: object) => Object.values(item).flatMap((op) => ((op as { tags?: string[] }).tags ?? []) as string[]);
  const operatorOnly = (item: object) => tagsOf(item).some((t) => OPERATOR_TAGS.has(t));
  const entries = Object.entries(doc.paths ?? {});
  doc.paths = Object.fromEntries([...entries.filter(([, i]) => !operatorOnly(i)), ...entries.filter(([, i]) => operatorOnly(i))]);
  const tags = [...new Set(entries.flatMap(([, i]) => tagsOf(i)))];
  doc.tags = [...tags.filter((t) => !OPERATOR_TAGS.has(t)), ...tags.filter((t) => OPERATOR_TAGS.has(t))].map((name) => ({ name }));
  return doc;
}

/** The paths (`/v1/calls/{id}`) and methods of the routes declared in the registry, as the document lists them. */
export function routesOf(registry: OpenAPIRegistry): { path: string; method: string }[] {
  return registry.definitions.flatMap((d) => (d.type === 'route' ? [{ path: d.route.path, method: d.route.method }] : []));
}

export { OpenAPIRegistry };
