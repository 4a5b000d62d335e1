import { MESSAGING } from '../../messaging/tokens.js';
import { e164Arg, type SandboxCli } from '../shared/cli.js';
import { SANDBOX } from '../tokens.js';

/**
 * `cli sandbox chatapp …`: the sandbox chat platform from the command line, on the same database as the server
 * (with the embedded store, stop the server first: a data directory has one owner).
 */
export function sandboxChatappCommands({ sandbox, run, print }: SandboxCli): void {
  const chatapp = sandbox.command('chatapp').description('the sandbox chat platform (docs/sandbox.md#chat-app-the-sandbox-chat-platform)');
  const part = 'chatapp';

  chatapp
    .command('business-accounts')
    .description("the sandbox platform's business accounts and their numbers")
    .action(async () => print(await run((get) => get(SANDBOX.ChatPlatform).businessAccounts(), { part })));
  chatapp
    .command('inbound')
    .description('a chat message from a person to a bound number, as the platform would report it')
    .requiredOption('--phone-number-id <id>', "the platform's id of the number written to")
    .requiredOption('--from <e164>', 'the person writing')
    .option('--body <text>', 'the text', '')
    .option('--media-url <url...>', 'media attached')
    .action(async (o: { phoneNumberId: string; from: string; body: string; mediaUrl?: string[] }) => {
      e164Arg(o.from, '+447700900123');
      if (!o.body && !o.mediaUrl?.length) throw new Error('give --body or --media-url');
      const r = await run(
        async (get) => {
          const m = await get(SANDBOX.ChatPlatform).inbound({
            to: o.phoneNumberId,
            from: o.from,
            body: o.body,
            mediaUrls: o.mediaUrl ?? [],
            reaction: null,
          });
          const stored = await get(MESSAGING.Inbound).message(m);
          return stored ? { ...stored, platformMessageId: m.providerMessageId } : null;
        },
        { part, projectors: true },
      );
      if (!r)
        throw new Error(
          `the platform number ${o.phoneNumberId} is not bound here (or the channel is switched off): the message was dropped`,
        );
      print(r);
    });
  chatapp
    .command('messages')
    .description('messages the sandbox platform was asked to send, newest first, with their statuses')
    .option('--to <e164>')
    .option('--limit <n>', '1-200 (default 20)', (v) => Number.parseInt(v, 10))
    .action(async (o: { to?: string; limit?: number }) =>
      print(
        await run((get) => get(SANDBOX.ChatPlatform).messages({ to: o.to, limit: Math.min(Math.max(o.limit ?? 20, 1), 200) }), { part }),
      ),
    );
}
