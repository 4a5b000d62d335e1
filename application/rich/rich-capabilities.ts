import { capabilityCheckDecider, capabilityCheckStream } from '../../domain/rich/capability-check.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import { awaitOutcome } from '../shared/await-outcome.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { CapabilityView, RichLineView, RichQueries } from './rich-queries.port.js';

export type RichOptions = Readonly<{
  /** how long a capability check answers later questions about the same number (docs/rich-messaging.md#capabilities) */
  capabilityCacheSeconds: number;
  /** how long a request waits for the provider's answer */
  providerTimeoutMs: number;
  /** what `POST /v1/location/refresh` tells callers to wait before reading */
  pollAfterSeconds: number;
}>;

const MEMO_SIZE = 5000;

/**
 * The account's rich lines and the live capability check of a number (docs/rich-messaging.md#capabilities): a check is
 * a process (requested, answered by the provider through the process manager) the request waits for; its answer is
 * kept for `capabilityCacheSeconds`, in the read model and in a small memo of this process (a send asks twice: to
 * choose its channel, then to record on it).
 */
export class RichCapabilities {
  private readonly memo = new Map<string, CapabilityView>();

  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly queries: RichQueries,
    private readonly numbers: NumberQueries,
    private readonly o: RichOptions,
  ) {}

  /** The account's numbers the provider serves and that are still the account's. */
  async activeLines(accountId: string): Promise<RichLineView[]> {
    const lines = await this.queries.lines(accountId);
    const numbers = await Promise.all(lines.map((l) => this.numbers.get(accountId, l.numberId)));
    return lines.filter((_, i) => numbers[i]?.status === 'active');
  }

  async activeLine(accountId: string, numberId: string): Promise<RichLineView | null> {
    // most lines are not rich ones: the number is looked up only for a line that is (one statement on every send)
    const line = await this.queries.line(accountId, numberId);
    if (!line) return null;
    return (await this.numbers.get(accountId, numberId))?.status === 'active' ? line : null;
  }

  /** `GET /v1/contacts/capabilities`: through the account's first rich line; refused when it has none. */
  async ofNumber(ctx: RequestContext, phoneNumber: string): Promise<CapabilityView> {
    const [line] = await this.activeLines(ctx.accountId);
    if (!line)
      throw new DomainError(
        'RICH_CHANNEL_UNAVAILABLE',
        'No number of this account is on the rich-messaging (iMessage) channel, so capabilities cannot be checked. A number joins it when the provider serves it (docs/rich-messaging.md#lines).',
      );
    return this.check(ctx, line, phoneNumber);
  }

  /** A fresh answer from the cache, else a live check (a provider failure or no answer in time is RICH_PROVIDER_ERROR). */
  async check(ctx: RequestContext, line: { numberId: string; phoneNumber: string }, phoneNumber: string): Promise<CapabilityView> {
    const key = `${ctx.accountId}|${phoneNumber}`;
    const fresh = (v: CapabilityView | null | undefined) =>
      v && this.exec.now() < new Date(Date.parse(v.checkedAt) + this.o.capabilityCacheSeconds * 1000).toISOString() ? v : null;
    const cached = fresh(this.memo.get(key)) ?? fresh(await this.queries.capability(ctx.accountId, phoneNumber));
    if (cached) return cached;

    const checkId = this.ids.id('rcc');
    const stream = capabilityCheckStream(checkId);
    await this.exec.execute(
      capabilityCheckDecider,
      stream,
      { type: 'RequestCapabilityCheck', data: { checkId, phoneNumber, lineNumberId: line.numberId, linePhoneNumber: line.phoneNumber } },
      ctx,
    );
    const { state, timedOut } = await awaitOutcome(
      this.exec,
      capabilityCheckDecider,
      stream,
      (s) => s.status === 'checked' || s.status === 'failed',
      this.o.providerTimeoutMs,
    );
    if (timedOut || state.status === 'requested' || state.status === 'none')
      throw new DomainError(
        'RICH_PROVIDER_ERROR',
        'The rich-messaging provider did not answer the capability check in time; retry shortly.',
      );
    if (state.status === 'failed') throw new DomainError('RICH_PROVIDER_ERROR', `The capability check failed: ${state.reason}`);
    const view = { phoneNumber, imessage: state.imessage, sms: state.sms, checkedAt: state.checkedAt };
    if (this.memo.size >= MEMO_SIZE) this.memo.delete(this.memo.keys().next().value!);
    this.memo.set(key, view);
    return view;
  }
}
