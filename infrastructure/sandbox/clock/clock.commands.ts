import type { SandboxCli } from '../shared/cli.js';
import { SANDBOX } from '../tokens.js';
import { MAX_ADVANCE_SECONDS } from './clock.js';

/**
 * `cli sandbox clock` and `cli sandbox clock advance <seconds>` (docs/sandbox.md#sandbox-clock). The offset lives
 * in the database, so with DATABASE_URL a running server follows an advance within SANDBOX_CLOCK_REFRESH_MS;
 * with the embedded store stop the server first (one owner per data directory).
 */
export function sandboxClockCommands({ sandbox, run, print }: SandboxCli): void {
  const clock = sandbox
    .command('clock')
    .description("the sandbox clock: the platform's time and its offset (moves forward only)")
    .action(async () => print(await run((get) => get(SANDBOX.Clock).refresh())));
  clock
    .command('advance')
    .description(`move the sandbox clock forward by 1 to ${MAX_ADVANCE_SECONDS} seconds`)
    .argument('<seconds>')
    .action(async (seconds: string) => {
      const n = /^\d+$/.test(seconds) ? Number(seconds) : Number.NaN;
      if (!Number.isInteger(n) || n < 1 || n > MAX_ADVANCE_SECONDS)
        throw new Error(`seconds must be an integer from 1 to ${MAX_ADVANCE_SECONDS}`);
      print(await run((get) => get(SANDBOX.Clock).advance(n)));
    });
}
