import cliProgress from 'cli-progress';
import { Command } from 'commander';
import { START } from '../../application/ports/event-store.port.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import type { CliSupport } from '../capabilities/capability.js';
import { allProjectors, capabilities } from '../capabilities/index.js';
import { type Config, loadConfig } from '../config/config.js';
import { withLocalSecrets } from '../config/local-secrets.js';
import { createLogger } from '../logger.js';
import { PLATFORM } from '../platform/tokens.js';
import { WorkIsolation } from '../reactors/isolation.js';
import { createRuntime, type Runtime } from '../runtime.js';

/**
 * Operator CLI: `npm run cli -- <command>`. It opens the same stores as the server (PGlite in DATA_DIR, or
 * DATABASE_URL / EVENTSTORE_URL). With PGlite, stop the server first: the data directory has one owner.
 */
const cliCtx = { accountId: 'system', requestId: null, correlationId: `cli-${Date.now()}`, actor: 'cli' };

async function withRuntime<T>(f: (rt: Runtime) => Promise<T>, o: { projectors?: boolean } = {}): Promise<T> {
  const base = withLocalSecrets(loadConfig()).cfg;
  const cfg: Config = {
    ...base,
    LOG_LEVEL: process.env.LOG_LEVEL ? base.LOG_LEVEL : 'warn',
    ROLE: o.projectors === false ? 'api' : 'worker',
  };
  const rt = await createRuntime(cfg, createLogger(cfg.LOG_LEVEL));
  try {
    return await f(rt);
  } finally {
    await rt.close();
  }
}

const print = (v: unknown) =>
  process.stdout.write(`${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x), 2)}\n`);

const program = new Command().name('cli').description('Operator commands for the agent platform');

const projections = program.command('projections').description('read models');
projections
  .command('list')
  .description('projectors and their checkpoints')
  .action(async () => {
    await withRuntime(
      async (rt) => {
        const db = rt.get(PLATFORM.ReadDb);
        const rows = await db.selectFrom('projection_checkpoints').selectAll().execute();
        print({
          head: await rt.store.headCheckpoint(),
          projectors: allProjectors.map((p) => ({
            name: p.name,
            tables: p.tables,
            checkpoint: rows.find((r) => r.name === p.name)?.checkpoint ?? START,
          })),
        });
      },
      { projectors: false },
    );
  });

program
  .command('rebuild')
  .description('replay a projector from position zero into fresh tables, compare with the live ones, and swap them in')
  .argument('<projector>', `one of: ${allProjectors.map((p) => p.name).join(', ')}`)
  .option('--check-only', 'compare only; leave the live tables as they are')
  .action(async (name: string, o: { checkOnly?: boolean }) => {
    const p = allProjectors.find((x) => x.name === name || x.name.replace(/_v\d+$/, '') === name);
    if (!p) {
      process.stderr.write(`unknown projector ${name}; known: ${allProjectors.map((x) => x.name).join(', ')}\n`);
      process.exitCode = 2;
      return;
    }
    await withRuntime(
      async (rt) => {
        const bar = new cliProgress.SingleBar(
          {
            format: `${p.name} [{bar}] {percentage}% | {value}/{total} events`,
            stream: process.stderr,
            noTTYOutput: true,
            notTTYSchedule: 1000,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(1, 0);
        const report = await rebuildProjector(rt.get(PLATFORM.ReadDb), rt.store, p, {
          ...(o.checkOnly ? { checkOnly: true } : {}),
          onProgress: (done, total) => {
            bar.setTotal(Math.max(total, 1));
            bar.update(done);
          },
        });
        bar.stop();
        print(report);
        if (report.equal === false) process.exitCode = 3;
      },
      { projectors: false },
    );
  });

program
  .command('isolated')
  .description('work set aside because handling it failed for good, newest first (docs/operations.md#isolated-work)')
  .option('--limit <n>', 'at most this many items', '100')
  .action(async (o: { limit: string }) => {
    const limit = Number(o.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      process.stderr.write('--limit must be a whole number from 1 to 10000\n');
      process.exitCode = 2;
      return;
    }
    await withRuntime(async (rt) => print(await new WorkIsolation(rt.get(PLATFORM.ReadDb), rt.get(PLATFORM.Logger)).list(limit)), {
      projectors: false,
    });
  });

const cli: CliSupport = { withRuntime, print, ctx: cliCtx };
for (const m of capabilities) if ('cli' in m) m.cli(program, cli);

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
