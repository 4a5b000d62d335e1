import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { RegistrationQueries } from './registration-queries.port.js';
import type { Registrations } from './registrations.js';

/**
 * The sandbox's carrier review (docs/registration.md, "Sandbox"): a pending registration is approved once
 * `approvalSeconds` have passed on the Clock since it was submitted. What is due is the Clock's call, never a
 * timer's, so a test or the sandbox clock moves time and runs a pass.
 */
export class SandboxRegistrationReview {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly queries: RegistrationQueries,
    private readonly registrations: Registrations,
    private readonly o: { approvalSeconds: number; batch?: number },
  ) {}

  async approveDue(): Promise<{ approved: number }> {
    const cutoff = new Date(Date.parse(this.exec.now()) - this.o.approvalSeconds * 1000).toISOString();
    let approved = 0;
    for (const p of await this.queries.pendingSubmittedBy(cutoff, this.o.batch ?? 100)) {
      const ctx: RequestContext = {
        accountId: p.accountId,
        requestId: null,
        correlationId: `registration-review:${p.accountId}:${p.submission}`,
        actor: 'system:sandbox-registration-review',
      };
      if (await this.registrations.approve(ctx, p.accountId, p.submission)) approved += 1;
    }
    return { approved };
  }
}
