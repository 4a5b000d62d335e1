import { Command } from 'commander';
import cliProgress from 'cli-progress';
import type { AccountCommands } from '../../application/accounts/account-commands.js';
import { START } from '../../application/ports/event-store.port.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { allProjectors } from '../../projections/index.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import type { Kysely } from 'kysely';
import { loadConfig, type Config } from '../config/config.js';
import { withLocalSecrets } from '../config/local-secrets.js';
import { createLogger } from '../logger.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { sandboxTelecomCommands } from './sandbox-telecom.commands.js';

/**
 * Operator CLI: `npm run cli -- <command>`. It opens the same stores as the server (PGlite in DATA_DIR, or
 * DATABASE_URL / EVENTSTORE_URL). With PGlite, stop the server first: the data directory has one owner.
 */
const cliCtx = { accountId: 'system', requestId: null, correlationId: `cli-${Date.now()}`, actor: 'cli' };

async function withRuntime<T>(f: (rt: Runtime) => Promise<T>, o: { projectors?: boolean } = {}): Promise<T> {
  const base = withLocalSecrets(loadConfig()).cfg;
  const cfg: Config = { ...base, LOG_LEVEL: process.env.LOG_LEVEL ? base.LOG_LEVEL : 'warn', ROLE: o.projectors === false ? 'api' : 'all' };
  const rt = await createRuntime(cfg, createLogger(cfg.LOG_LEVEL));
  try {
    return await f(rt);
  } finally {
    await rt.close();
  }
}

const print = (v: unknown) => process.stdout.write(`${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x), 2)}\n`);

const program = new Command().name('cli').description('Operator commands for the agent platform');

const accounts = program.command('accounts').description('accounts and their keys');
accounts.command('create').description('create an account and its first API key (printed once)')
  .requiredOption('--name <name>', 'account name')
  .option('--parent <accountId>', 'make it a sub-account of this account')
  .option('--number-limit <n>', 'self-serve phone number limit', (v) => Number.parseInt(v, 10))
  .action(async (o: { name: string; parent?: string; numberLimit?: number }) => {
    await withRuntime(async (rt) => {
      const r = await rt.get<AccountCommands>(TOKENS.AccountCommands).open(cliCtx, {
        name: o.name, ...(o.parent ? { parentAccountId: o.parent } : {}), ...(o.numberLimit !== undefined ? { numberLimit: o.numberLimit } : {}),
      });
      print({ accountId: r.accountId, apiKey: r.apiKey });
    });
  });
accounts.command('credit').description('add credit in integer micro-dollars')
  .argument('<accountId>')
  .requiredOption('--amount-micros <n>', 'amount, e.g. 5000000 for $5.00', (v) => Number(v))
  .action(async (accountId: string, o: { amountMicros: number }) => {
    await withRuntime(async (rt) => {
      const v = await rt.get<AccountCommands>(TOKENS.AccountCommands).credit(cliCtx, accountId, o.amountMicros, 'top-up (cli)');
      print({ accountId: v.accountId, balanceMicros: v.balanceMicros });
    });
  });

program.command('history').description("print a stream's events in order (the audit trail of any aggregate)")
  .argument('<stream>', 'stream name, e.g. agent-agt_… or account-acc_…')
  .option('--json', 'one JSON object per line')
  .action(async (stream: string, o: { json?: boolean }) => {
    await withRuntime(async (rt) => {
      const events = await rt.store.readStream(stream);
      if (events.length === 0) { process.stderr.write(`stream ${stream} has no events\n`); process.exitCode = 1; return; }
      for (const e of events) {
        const row = { revision: e.streamRevision.toString(), type: e.type, at: e.createdAt, id: e.id, metadata: e.metadata, data: e.data };
        process.stdout.write(o.json ? `${JSON.stringify(row)}\n` : `#${row.revision}  ${row.at}  ${row.type}  by ${e.metadata.actor}${e.metadata.requestId ? ` (${e.metadata.requestId})` : ''}\n    ${JSON.stringify(e.data)}\n`);
      }
    }, { projectors: false });
  });

const projections = program.command('projections').description('read models');
projections.command('list').description('projectors and their checkpoints').action(async () => {
  await withRuntime(async (rt) => {
    const db = rt.database.db as unknown as Kysely<ReadDb>;
    const rows = await db.selectFrom('projection_checkpoints').selectAll().execute();
    print({ head: await rt.store.headCheckpoint(), projectors: allProjectors.map((p) => ({ name: p.name, tables: p.tables, checkpoint: rows.find((r) => r.name === p.name)?.checkpoint ?? START })) });
  }, { projectors: false });
});

program.command('rebuild').description('replay a projector from position zero into fresh tables, compare with the live ones, and swap them in')
  .argument('<projector>', `one of: ${allProjectors.map((p) => p.name).join(', ')}`)
  .option('--check-only', 'compare only; leave the live tables as they are')
  .action(async (name: string, o: { checkOnly?: boolean }) => {
    const p = allProjectors.find((x) => x.name === name || x.name.replace(/_v\d+$/, '') === name);
    if (!p) { process.stderr.write(`unknown projector ${name}; known: ${allProjectors.map((x) => x.name).join(', ')}\n`); process.exitCode = 2; return; }
    await withRuntime(async (rt) => {
      const bar = new cliProgress.SingleBar({ format: `${p.name} [{bar}] {percentage}% | {value}/{total} events`, stream: process.stderr, noTTYOutput: true, notTTYSchedule: 1000 }, cliProgress.Presets.shades_classic);
      bar.start(1, 0);
      const report = await rebuildProjector(rt.database.db as unknown as Kysely<ReadDb>, rt.store, p, {
        ...(o.checkOnly ? { checkOnly: true } : {}),
        onProgress: (done, total) => { bar.setTotal(Math.max(total, 1)); bar.update(done); },
      });
      bar.stop();
      print(report);
      if (report.equal === false) process.exitCode = 3;
    }, { projectors: false });
  });

sandboxTelecomCommands(program, withRuntime, print);

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
