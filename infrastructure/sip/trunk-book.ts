import { timingSafeEqual } from 'node:crypto';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { TrunkTerminationQueries } from '../../application/sip-trunks/sip-trunk-queries.port.js';
import { inBlocks } from './carriers.js';

/**
 * A SIP trunk's termination side as the engine holds it (docs/sip.md#calls-from-your-pbx): who may send calls out
 * through it, by source address or by digest credentials (passwords opened).
 */
export type TrunkTermination = Readonly<{
  trunkId: string;
  accountId: string;
  addresses: readonly string[];
  credentials: readonly Readonly<{ username: string; password: string }>[];
}>;

/** Where the engine reads the trunks' termination sides from. */
export interface TrunkDirectory {
  list(): Promise<readonly TrunkTermination[]>;
}

/**
 * The termination sides of every account's trunks, from the trunks' read model, passwords opened. A trunk whose
 * password cannot be opened (SECRETS_KEY changed) keeps its addresses and loses its credentials, with a log line.
 */
export class TrunkBook implements TrunkDirectory {
  constructor(
    private readonly queries: TrunkTerminationQueries,
    private readonly open: (sealed: string) => string,
    private readonly log: LoggerPort,
  ) {}

  async list(): Promise<readonly TrunkTermination[]> {
    return (await this.queries.terminations()).map((t) => {
      let credentials: TrunkTermination['credentials'] = [];
      try {
        credentials = t.termination.credentials.map((c) => ({ username: c.username, password: this.open(c.passwordSealed) }));
      } catch (err) {
        this.log.error({ trunkId: t.trunkId, err: (err as Error).message }, "a trunk's credentials are left out: they cannot be opened");
      }
      return { trunkId: t.trunkId, accountId: t.accountId, addresses: t.termination.addresses, credentials };
    });
  }
}

/** The trunks a PBX at `address` may send calls out through, by its source (docs/sip.md#calls-from-your-pbx). */
export const trunksByAddress = (trunks: readonly TrunkTermination[], address: string): TrunkTermination[] =>
  trunks.filter((t) => inBlocks(t.addresses, address));

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * The trunks whose credentials are `username` and `password` given in the clear (the sandbox's PBX,
 * docs/sandbox.md#calls-from-a-pbx; the SIP engine checks a digest instead, inbound-digest.ts).
 */
export const trunksByCredentials = (trunks: readonly TrunkTermination[], username: string, password: string): TrunkTermination[] =>
  trunks.filter((t) => t.credentials.some((c) => c.username === username && same(c.password, password)));
