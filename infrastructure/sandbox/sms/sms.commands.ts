import { MESSAGING } from '../../messaging/tokens.js';
import type { SandboxCli } from '../shared/cli.js';
import { e164Arg } from '../shared/cli.js';
import { SANDBOX } from '../tokens.js';

/**
 * `cli sandbox inbound|messages`: the sandbox SMS carrier from the command line, on the same database as the
 * server (with the embedded store, stop the server first: a data directory has one owner).
 */
export function sandboxSmsCommands({ sandbox, run, print }: SandboxCli): void {
  sandbox
    .command('inbound')
    .description("a text from a phone to one of the platform's numbers, as the carrier would report it")
    .requiredOption('--from <e164>', 'the sender')
    .requiredOption('--to <e164>', "the platform's number")
    .requiredOption('--body <text>', 'the text')
    .option('--media-url <url...>', 'media attached')
    .action(async (o: { from: string; to: string; body: string; mediaUrl?: string[] }) => {
      for (const n of [o.from, o.to]) e164Arg(n);
      const r = await run(
        async (get) => {
          const sms = get(SANDBOX.SmsCarrier).inbound({
            from: o.from,
            to: o.to,
            body: o.body,
            mediaUrls: o.mediaUrl ?? [],
            group: null,
            reaction: null,
          });
          const stored = await get(MESSAGING.Inbound).message(sms);
          return stored ? { ...stored, carrierMessageId: sms.providerMessageId } : null;
        },
        { projectors: true },
      );
      if (!r) throw new Error(`${o.to} is not an active number of the platform: the text was dropped`);
      print(r);
    });
  sandbox
    .command('messages')
    .description('texts the sandbox carrier was asked to send, newest first, with their receipts')
    .option('--to <e164>')
    .option('--from <e164>')
    .option('--limit <n>', '1-200 (default 20)', (v) => Number.parseInt(v, 10))
    .action(async (o: { to?: string; from?: string; limit?: number }) =>
      print(
        await run((get) => get(SANDBOX.SmsCarrier).messages({ to: o.to, from: o.from, limit: Math.min(Math.max(o.limit ?? 20, 1), 200) })),
      ),
    );
}
