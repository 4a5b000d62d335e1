import type { Command } from 'commander';
import { AREA_CODES } from '../../domain/phone-number/north-american-area-codes.js';
import type { CliSupport } from '../capabilities/capability.js';
import type { SandboxCarrier } from '../providers/sandbox/sandbox-carrier.js';
import {
  FAULT_ERRORS,
  FAULT_OPERATIONS,
  type FaultError,
  type FaultOperation,
  type SandboxFaults,
} from '../providers/sandbox/sandbox-faults.js';
import { NUMBERS } from './tokens.js';

/**
 * `cli sandbox …`: the sandbox carrier's control from the command line, on the same database as the server.
 * Faults live in the database, so with DATABASE_URL they reach a running server at once; with the embedded
 * store (one owner per data directory) stop the server first, and the faults wait for its next start.
 */
export function sandboxTelecomCommands(program: Command, { withRuntime, print }: CliSupport): void {
  const sandbox = program
    .command('sandbox')
    .description('sandbox carrier and SIP provider: inventory, purchases, injected faults (PROVIDER_MODE=sandbox)');
  const api = <T>(f: (carrier: SandboxCarrier, faults: SandboxFaults) => Promise<T>) =>
    withRuntime(
      async (rt) => {
        if (rt.cfg.PROVIDER_MODE !== 'sandbox') throw new Error('the sandbox commands need PROVIDER_MODE=sandbox');
        return f(rt.get(NUMBERS.SandboxCarrier), rt.get(NUMBERS.SandboxFaults));
      },
      { projectors: false },
    );

  sandbox
    .command('inventory')
    .description("an area code's numbers: available, purchased (with the purchase key) or quarantined")
    .argument('<areaCode>')
    .action(async (areaCode: string) => {
      if (!AREA_CODES.has(areaCode)) throw new Error(`${areaCode} is not an area code of the US or Canada`);
      print(await api((carrier) => carrier.inventory(areaCode)));
    });
  sandbox
    .command('purchases')
    .description('numbers the sandbox carrier has sold and not had back')
    .action(async () => print(await api((carrier) => carrier.purchases())));

  const faults = sandbox.command('faults').description('injected upstream failures');
  faults.command('list').action(async () => print(await api((_c, f) => f.list())));
  faults.command('clear').action(async () => print({ removed: await api((_c, f) => f.clear()) }));
  faults
    .command('add')
    .description('the next call(s) of an operation fail (502) or answer late')
    .requiredOption('--operation <op>', FAULT_OPERATIONS.join(', '))
    .option('--error <code>', FAULT_ERRORS.join(' or '))
    .option('--delay-ms <n>', 'answer this much later', (v) => Number.parseInt(v, 10))
    .option('--after-effect', 'the operation takes effect before it fails or answers late')
    .option('--times <n>', 'how many calls it affects (default 1)', (v) => Number.parseInt(v, 10))
    .action(async (o: { operation: string; error?: string; delayMs?: number; afterEffect?: boolean; times?: number }) => {
      if (!(FAULT_OPERATIONS as readonly string[]).includes(o.operation))
        throw new Error(`unknown operation ${o.operation}; one of ${FAULT_OPERATIONS.join(', ')}`);
      if (o.error && !(FAULT_ERRORS as readonly string[]).includes(o.error))
        throw new Error(`unknown error ${o.error}; one of ${FAULT_ERRORS.join(', ')}`);
      print(
        await api((_c, f) =>
          f.add({
            operation: o.operation as FaultOperation,
            error: o.error as FaultError | undefined,
            delayMs: o.delayMs,
            afterEffect: o.afterEffect,
            times: o.times,
          }),
        ),
      );
    });
}
