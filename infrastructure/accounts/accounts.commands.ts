import type { Command } from 'commander';
import type { CliSupport } from '../capabilities/capability.js';
import { ACCOUNTS } from './tokens.js';

/** `cli accounts create|credit`: accounts and their keys from the command line. */
export function accountCliCommands(program: Command, { withRuntime, print, ctx }: CliSupport): void {
  const accounts = program.command('accounts').description('accounts and their keys');
  accounts
    .command('create')
    .description('create an account and its first API key (printed once)')
    .requiredOption('--name <name>', 'account name')
    .option('--parent <accountId>', 'make it a sub-account of this account')
    .option('--number-limit <n>', 'self-serve phone number limit', (v) => Number.parseInt(v, 10))
    .action(async (o: { name: string; parent?: string; numberLimit?: number }) => {
      await withRuntime(async (rt) => {
        const r = await rt.get(ACCOUNTS.Commands).open(ctx, {
          name: o.name,
          ...(o.parent ? { parentAccountId: o.parent } : {}),
          ...(o.numberLimit !== undefined ? { numberLimit: o.numberLimit } : {}),
        });
        print({ accountId: r.accountId, apiKey: r.apiKey });
      });
    });
  accounts
    .command('credit')
    .description('add credit in integer micro-dollars')
    .argument('<accountId>')
    .requiredOption('--amount-micros <n>', 'amount, e.g. 5000000 for $5.00', (v) => Number(v))
    .action(async (accountId: string, o: { amountMicros: number }) => {
      await withRuntime(async (rt) => {
        const v = await rt.get(ACCOUNTS.Commands).credit(ctx, accountId, o.amountMicros, 'top-up (cli)');
        print({ accountId: v.accountId, balanceMicros: v.balanceMicros });
      });
    });
}
