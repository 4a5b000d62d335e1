import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { sandboxRoute } from '../shared/http.js';
import type { SandboxSipTrunks } from './sip-trunks.js';

/** The sandbox SIP provider's view of its trunks (mounted only with PROVIDER_MODE=sandbox, behind the admin token; docs/sandbox.md). */
export function sandboxSipTrunkRoutes(api: Api, { trunks }: { trunks: SandboxSipTrunks }): void {
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/sip-trunks',
    summary: 'Trunks as the sandbox SIP provider sees them',
    response: z.object({
      data: z.array(
        z.object({
          providerRef: z.string(),
          trunkId: z.string(),
          accountId: z.string(),
          config: z.unknown(),
          terminationUri: z.string(),
          deletedAt: z.string().nullable(),
        }),
      ),
    }),
    handler: async () => ({ data: await trunks.list() }),
  });
}
