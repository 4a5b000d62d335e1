import type { SandboxCli } from '../shared/cli.js';
import { SANDBOX } from '../tokens.js';
import { FAULT_ERRORS, FAULT_OPERATIONS, type FaultError, type FaultOperation } from './faults.js';

const isOperation = (v: string): v is FaultOperation => (FAULT_OPERATIONS as readonly string[]).includes(v);
const isError = (v: string): v is FaultError => (FAULT_ERRORS as readonly string[]).includes(v);

/**
 * `cli sandbox faults list|clear|add`. Faults live in the database, so with DATABASE_URL they reach a running server
 * at once; with the embedded store (one owner per data directory) stop the server first, and the faults wait for its
 * next start.
 */
export function sandboxFaultCommands({ sandbox, run, print }: SandboxCli): void {
  const faults = sandbox.command('faults').description('injected upstream failures');
  faults.command('list').action(async () => print(await run((get) => get(SANDBOX.Faults).list())));
  faults.command('clear').action(async () => print({ removed: await run((get) => get(SANDBOX.Faults).clear()) }));
  faults
    .command('add')
    .description('the next call(s) of an operation fail (502) or answer late')
    .requiredOption('--operation <op>', FAULT_OPERATIONS.join(', '))
    .option('--error <code>', FAULT_ERRORS.join(' or '))
    .option('--delay-ms <n>', 'answer this much later', (v) => Number.parseInt(v, 10))
    .option('--after-effect', 'the operation takes effect before it fails or answers late')
    .option('--times <n>', 'how many calls it affects (default 1)', (v) => Number.parseInt(v, 10))
    .action(async (o: { operation: string; error?: string; delayMs?: number; afterEffect?: boolean; times?: number }) => {
      const { operation, error } = o;
      if (!isOperation(operation)) throw new Error(`unknown operation ${operation}; one of ${FAULT_OPERATIONS.join(', ')}`);
      if (error !== undefined && !isError(error)) throw new Error(`unknown error ${error}; one of ${FAULT_ERRORS.join(', ')}`);
      print(
        await run((get) => get(SANDBOX.Faults).add({ operation, error, delayMs: o.delayMs, afterEffect: o.afterEffect, times: o.times })),
      );
    });
}
