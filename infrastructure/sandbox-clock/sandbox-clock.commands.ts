import type { Command } from 'commander';
import type { CliSupport } from '../capabilities/capability.js';
import { MAX_ADVANCE_SECONDS, type SandboxClock } from './sandbox-clock.js';
import { SANDBOX_CLOCK } from './tokens.js';

/**
 * `cli sandbox clock` and `cli sandbox clock advance <seconds>` (docs/sandbox.md#sandbox-clock). The offset lives
 * in the database, so with DATABASE_URL a running server follows an advance within SANDBOX_CLOCK_REFRESH_MS;
 * with the embedded store stop the server first (one owner per data directory).
 */
export function sandboxClockCommands(program: Command, { withRuntime, print }: CliSupport): void {
  // the numbers capability declares `sandbox` first; this adds to it (or declares it when alone)
  const sandbox =
    program.commands.find((c) => c.name() === 'sandbox') ??
    program.command('sandbox').description('sandbox control (PROVIDER_MODE=sandbox)');
  const withClock = <T>(f: (clock: SandboxClock) => Promise<T>) =>
    withRuntime(
      async (rt) => {
        if (rt.cfg.PROVIDER_MODE !== 'sandbox') throw new Error('the sandbox commands need PROVIDER_MODE=sandbox');
        return f(rt.get(SANDBOX_CLOCK.Clock));
      },
      { projectors: false },
    );

  const clock = sandbox
    .command('clock')
    .description("the sandbox clock: the platform's time and its offset (moves forward only)")
    .action(async () => print(await withClock((c) => c.refresh())));
  clock
    .command('advance')
    .description(`move the sandbox clock forward by 1 to ${MAX_ADVANCE_SECONDS} seconds`)
    .argument('<seconds>')
    .action(async (seconds: string) => {
      const n = /^\d+$/.test(seconds) ? Number(seconds) : Number.NaN;
      if (!Number.isInteger(n) || n < 1 || n > MAX_ADVANCE_SECONDS)
        throw new Error(`seconds must be an integer from 1 to ${MAX_ADVANCE_SECONDS}`);
      print(await withClock((c) => c.advance(n)));
    });
}
