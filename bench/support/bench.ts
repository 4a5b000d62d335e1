import { randomBytes, randomUUID } from 'node:crypto';
import type { EventMetadata } from '../../application/ports/event-store.port.js';
import { type Config, loadConfig } from '../../infrastructure/config/config.js';

/** Runs a bench and ends the process: 0 once it printed its figures, 1 with the error when it failed. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** The metadata of events a bench appends itself, as the system's (`system:bench`). */
export const benchMetadata = (accountId = 'acc_bench', correlationId: string = randomUUID()): EventMetadata => ({
  accountId,
  correlationId,
  causationId: null,
  requestId: null,
  actor: 'system:bench',
});

/**
 * The configuration of a platform a bench runs in its own process (API, projectors, reactors and workers): the sandbox
 * upstreams, nothing logged, no development account, no throttle on its requests; `env` adds the bench's own settings
 * and its target's (docs/testing.md#benchmarks).
 */
export const benchConfig = (adminToken: string, env: Record<string, string>): Config =>
  loadConfig({
    LOG_LEVEL: 'silent',
    DEV_ACCOUNT: 'false',
    ROLE: 'all',
    ADMIN_TOKEN: adminToken,
    SECRETS_KEY: randomBytes(32).toString('hex'),
    PROVIDER_MODE: 'sandbox',
    THROTTLE_MAX_REQUESTS: '1000000',
    // where embedded PGlite runs: the platform's default unless the bench is told (docs/event-store.md#pglite-on-its-own-thread)
    ...(process.env.PGLITE_THREAD ? { PGLITE_THREAD: process.env.PGLITE_THREAD } : {}),
    ...env,
  });

/**
 * Texts at the pipeline's own speed: the per-number send rate and burst and the sandbox carrier's rate raised
 * (docs/messaging.md#caps), and the sandbox carrier reporting its receipts at once, so the sends' asynchronous tail
 * settles quickly (docs/sandbox.md). A bench measures the pipeline, not the caps.
 */
export const UNCAPPED_TEXTS: Readonly<Record<string, string>> = {
  MESSAGE_SEND_RATE_PER_SECOND: '10000',
  MESSAGE_SEND_BURST: '100000',
  SANDBOX_SMS_RATE_PER_MINUTE: '1000000',
  SANDBOX_SMS_SENT_DELAY_MS: '0',
  SANDBOX_SMS_DELIVERY_DELAY_MS: '0',
};
