import { AREA_CODES } from '../../../domain/phone-number/north-american-area-codes.js';
import type { SandboxCli } from '../shared/cli.js';
import { SANDBOX } from '../tokens.js';

/**
 * `cli sandbox inventory|purchases`: the sandbox carrier's view from the command line, on the same database as the
 * server (with the embedded store, stop the server first: a data directory has one owner).
 */
export function sandboxCarrierCommands({ sandbox, run, print }: SandboxCli): void {
  sandbox
    .command('inventory')
    .description("an area code's numbers: available, purchased (with the purchase key) or quarantined")
    .argument('<areaCode>')
    .action(async (areaCode: string) => {
      if (!AREA_CODES.has(areaCode)) throw new Error(`${areaCode} is not an area code of the US or Canada`);
      print(await run((get) => get(SANDBOX.Carrier).inventory(areaCode)));
    });
  sandbox
    .command('purchases')
    .description('numbers the sandbox carrier has sold and not had back')
    .action(async () => print(await run((get) => get(SANDBOX.Carrier).purchases())));
}
