import type { SignUpQueries } from '../../../projections/signup/signup.queries.js';
import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { sandboxRoute } from '../shared/http.js';

/** Sandbox control: the e-mails the sandbox mailer "sent" to an address, newest first, with the code pulled out. */
export function sandboxOutboxRoutes(api: Api, d: { queries: SignUpQueries }): void {
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/outbox',
    summary: 'Sandbox only: e-mails sent to an address (sign-up codes), newest first',
    query: z.object({ email: z.email(), limit: z.coerce.number().int().min(1).max(50).default(5) }),
    response: z.object({
      data: z.array(z.object({ subject: z.string(), body: z.string(), sentAt: z.string(), code: z.string().nullable() })),
    }),
    handler: async ({ query }) => ({
      data: (await d.queries.outbox(query.email, query.limit)).map((m) => ({ ...m, code: /\b(\d{6})\b/.exec(m.subject)?.[1] ?? null })),
    }),
  });
}
