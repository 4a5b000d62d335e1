import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { sandboxGuard } from '../http/guards.js';
import type { SandboxSipTrunks } from '../providers/sandbox/sandbox-sip-trunks.js';

/** The sandbox SIP provider's view of its trunks (mounted only with PROVIDER_MODE=sandbox; docs/sandbox.md). */
export function sandboxSipTrunkRoutes(api: Api, { trunks, adminToken }: { trunks: SandboxSipTrunks; adminToken: string | undefined }): void {
  api.router.use('/sandbox/sip-trunks', sandboxGuard(adminToken));
  const tag = 'sandbox';
  api.route({
    method: 'get', path: '/sandbox/sip-trunks', tag, auth: false, summary: 'Trunks as the sandbox SIP provider sees them', errors: [401, 403],
    response: z.object({ data: z.array(z.object({ providerRef: z.string(), trunkId: z.string(), accountId: z.string(), config: z.unknown(), terminationUri: z.string(), deletedAt: z.string().nullable() })) }),
    handler: async () => ({ data: await trunks.list() }),
  });
}
