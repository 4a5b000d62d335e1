import type { Command } from 'commander';
import type { CliSupport, Resolve } from '../capabilities/capability.js';
import { SANDBOX_SMS } from './tokens.js';

/**
 * `cli sandbox inbound|messages`: the sandbox SMS carrier from the command line, on the same database as the
 * server (with the embedded store, stop the server first: a data directory has one owner).
 */
export function sandboxSmsCommands(program: Command, { withRuntime, print }: CliSupport): void {
  const sandbox =
    program.commands.find((c) => c.name() === 'sandbox') ??
    program.command('sandbox').description('the sandbox providers (PROVIDER_MODE=sandbox)');
  // an inbound text runs the projectors too: with the embedded store the server is stopped, so this process is the one to do it
  const run = <T>(f: (get: Resolve) => Promise<T>, projectors = false) =>
    withRuntime(
      async (rt) => {
        if (rt.cfg.PROVIDER_MODE !== 'sandbox') throw new Error('the sandbox commands need PROVIDER_MODE=sandbox');
        return f(rt.get);
      },
      { projectors },
    );

  sandbox
    .command('inbound')
    .description("a text from a phone to one of the platform's numbers, as the carrier would report it")
    .requiredOption('--from <e164>', 'the sender')
    .requiredOption('--to <e164>', "the platform's number")
    .requiredOption('--body <text>', 'the text')
    .option('--media-url <url...>', 'media attached')
    .action(async (o: { from: string; to: string; body: string; mediaUrl?: string[] }) => {
      for (const n of [o.from, o.to]) if (!/^\+[1-9]\d{1,14}$/.test(n)) throw new Error(`${n} is not an E.164 number such as +14155550123`);
      const r = await run(async (get) => {
        const sms = get(SANDBOX_SMS.SandboxCarrier).inbound({
          from: o.from,
          to: o.to,
          body: o.body,
          mediaUrls: o.mediaUrl ?? [],
          group: null,
          reaction: null,
        });
        const stored = await get(SANDBOX_SMS.Events).inbound(sms);
        return stored ? { ...stored, carrierMessageId: sms.carrierMessageId } : null;
      }, true);
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
        await run((get) =>
          get(SANDBOX_SMS.SandboxCarrier).messages({ to: o.to, from: o.from, limit: Math.min(Math.max(o.limit ?? 20, 1), 200) }),
        ),
      ),
    );
}
