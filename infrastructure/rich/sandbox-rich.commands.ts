import type { Command } from 'commander';
import type { CliSupport, Resolve } from '../capabilities/capability.js';
import { PLATFORM } from '../platform/tokens.js';
import { sandboxRichRules } from './sandbox-rich.routes.js';
import { RICH } from './tokens.js';

/**
 * `cli sandbox rich …`: the sandbox rich-messaging provider from the command line, on the same database as the server
 * (with the embedded store, stop the server first: a data directory has one owner).
 */
export function sandboxRichCommands(program: Command, { withRuntime, print }: CliSupport): void {
  const sandbox =
    program.commands.find((c) => c.name() === 'sandbox') ??
    program.command('sandbox').description('the sandbox providers (PROVIDER_MODE=sandbox)');
  const rich = sandbox
    .command('rich')
    .description('the sandbox rich-messaging provider (docs/sandbox.md#rich-messaging-the-sandbox-provider)');
  const run = <T>(f: (get: Resolve) => Promise<T>, projectors = false) =>
    withRuntime(
      async (rt) => {
        if (rt.cfg.PROVIDER_MODE !== 'sandbox' || (rt.cfg.RICH_PROVIDER ?? 'sandbox') !== 'sandbox')
          throw new Error('the sandbox rich provider needs PROVIDER_MODE=sandbox (and RICH_PROVIDER unset or sandbox)');
        return f(rt.get);
      },
      { projectors },
    );
  const e164 = (v: string) => {
    if (!/^\+[1-9]\d{1,14}$/.test(v)) throw new Error(`${v} is not an E.164 number such as +14155550100`);
    return v;
  };

  rich
    .command('lines')
    .description('the numbers the provider serves')
    .action(async () => print(await run((get) => get(RICH.SandboxProvider).lines())));
  rich
    .command('add-line <phoneNumber>')
    .description('the provider starts serving a number (a native number of the platform becomes a rich line)')
    .action(async (phoneNumber: string) =>
      print(
        await run(async (get) => {
          await get(RICH.SandboxProvider).addLine(e164(phoneNumber));
          return { phoneNumber, numberId: (await get(RICH.Events).lineActivated(phoneNumber))?.numberId ?? null };
        }, true),
      ),
    );
  rich
    .command('remove-line <phoneNumber>')
    .description('the provider stops serving a number')
    .action(async (phoneNumber: string) =>
      print(
        await run(async (get) => {
          const removed = await get(RICH.SandboxProvider).removeLine(e164(phoneNumber));
          return { phoneNumber, removed, numberId: (await get(RICH.Events).lineDeactivated(phoneNumber))?.numberId ?? null };
        }, true),
      ),
    );
  rich
    .command('messages')
    .description('messages the provider was given, newest first, with their statuses')
    .option('--to <e164>', 'only those to this number')
    .action(async (o: { to?: string }) => print(await run((get) => get(RICH.SandboxProvider).messages({ to: o.to, limit: 50 }))));
  rich
    .command('rules')
    .description('the number rules: capabilities, magic recipients, contacts sharing a location (where they are now)')
    .action(async () => print(await run(async (get) => sandboxRichRules(get(PLATFORM.Clock).now()))));
}
