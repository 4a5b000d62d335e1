import { PLATFORM } from '../../platform/tokens.js';
import { RICH } from '../../rich/tokens.js';
import { e164Arg, type SandboxCli } from '../shared/cli.js';
import { SANDBOX } from '../tokens.js';
import { sandboxRichRules } from './rich.routes.js';

/**
 * `cli sandbox rich …`: the sandbox rich-messaging provider from the command line, on the same database as the server
 * (with the embedded store, stop the server first: a data directory has one owner).
 */
export function sandboxRichCommands({ sandbox, run, print }: SandboxCli): void {
  const rich = sandbox
    .command('rich')
    .description('the sandbox rich-messaging provider (docs/sandbox.md#rich-messaging-the-sandbox-provider)');
  const part = 'rich';

  rich
    .command('lines')
    .description('the numbers the provider serves')
    .action(async () => print(await run((get) => get(SANDBOX.RichProvider).lines(), { part })));
  rich
    .command('add-line <phoneNumber>')
    .description('the provider starts serving a number (a native number of the platform becomes a rich line)')
    .action(async (phoneNumber: string) =>
      print(
        await run(
          async (get) => {
            await get(SANDBOX.RichProvider).addLine(e164Arg(phoneNumber, '+14155550100'));
            return { phoneNumber, numberId: (await get(RICH.Events).lineActivated(phoneNumber))?.numberId ?? null };
          },
          { part, projectors: true },
        ),
      ),
    );
  rich
    .command('remove-line <phoneNumber>')
    .description('the provider stops serving a number')
    .action(async (phoneNumber: string) =>
      print(
        await run(
          async (get) => {
            const removed = await get(SANDBOX.RichProvider).removeLine(e164Arg(phoneNumber, '+14155550100'));
            return { phoneNumber, removed, numberId: (await get(RICH.Events).lineDeactivated(phoneNumber))?.numberId ?? null };
          },
          { part, projectors: true },
        ),
      ),
    );
  rich
    .command('messages')
    .description('messages the provider was given, newest first, with their statuses')
    .option('--to <e164>', 'only those to this number')
    .action(async (o: { to?: string }) => print(await run((get) => get(SANDBOX.RichProvider).messages({ to: o.to, limit: 50 }), { part })));
  rich
    .command('rules')
    .description('the number rules: capabilities, magic recipients, contacts sharing a location (where they are now)')
    .action(async () => print(await run(async (get) => sandboxRichRules(get(PLATFORM.Clock).now()), { part })));
}
