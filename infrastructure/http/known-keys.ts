import type { AccountQueries } from '../../application/accounts/account-queries.port.js';

type Found = Awaited<ReturnType<AccountQueries['keyWithAccount']>>;

/**
 * The API keys that authentication found, each with its account, kept until the read model they come from moves
 * (docs/accounts.md#api-keys). Only where this process runs that read model's projector and hears every batch it
 * commits (embedded): any batch forgets every key, so a key revoked or an account closed is refused as soon as the
 * read model says so, as without this. A look-up that was under way when a batch came is not kept (it may have read
 * the rows before the batch). A key that was not found is not kept; nor is any key longer than `maxAgeMs`, and at
 * most `maxKeys` are (the oldest go first).
 */
export class KnownKeys {
  private readonly kept = new Map<string, { found: NonNullable<Found>; at: number }>();
  /** how many batches of the read model have been heard: a look-up is kept only if none came while it ran */
  private generation = 0;

  constructor(
    private readonly queries: Pick<AccountQueries, 'keyWithAccount'>,
    private readonly o: { maxKeys: number; maxAgeMs: number; now: () => number },
  ) {}

  /** Told after every batch the read model's projector commits. */
  moved(): void {
    this.generation++;
    this.kept.clear();
  }

  async keyWithAccount(keyHash: string): Promise<Found> {
    const now = this.o.now();
    const k = this.kept.get(keyHash);
    if (k && now - k.at < this.o.maxAgeMs) return k.found;
    const generation = this.generation;
    const found = await this.queries.keyWithAccount(keyHash);
    if (found && generation === this.generation) {
      this.kept.delete(keyHash);
      if (this.kept.size >= this.o.maxKeys) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(keyHash, { found, at: now });
    }
    return found;
  }
}
