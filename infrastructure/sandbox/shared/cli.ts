import type { Command } from 'commander';
import type { CliSupport, Resolve } from '../../capabilities/capability.js';
import { type SandboxPart, sandboxParts } from '../../config/providers.js';

const NEEDS: Record<SandboxPart, string> = {
  telecom: 'the sandbox commands need PROVIDER_MODE=sandbox',
  chatapp: 'the sandbox chat platform needs PROVIDER_MODE=sandbox (and CHATAPP_PROVIDER unset or sandbox)',
  rich: 'the sandbox rich provider needs PROVIDER_MODE=sandbox (and RICH_PROVIDER unset or sandbox)',
};

/** What each part of the kit's CLI gets: the `sandbox` command to add to, the printer, and a runner on the configured stores. */
export type SandboxCli = Readonly<{
  sandbox: Command;
  print: CliSupport['print'];
  /**
   * Runs `f` on a runtime over the configured stores, refusing unless `part` of the kit runs. With `projectors`, the
   * runtime runs the projectors too: a command that records something (an inbound message) is, with the embedded
   * store, the only process on the data directory (the server is stopped), so it is the one to project it.
   */
  run: <T>(f: (get: Resolve) => Promise<T>, o?: { part?: SandboxPart; projectors?: boolean }) => Promise<T>;
}>;

export function sandboxCli(program: Command, cli: CliSupport): SandboxCli {
  return {
    sandbox: program.command('sandbox').description('the sandbox kit: simulated upstreams and their controls (PROVIDER_MODE=sandbox)'),
    print: cli.print,
    run: (f, o = {}) =>
      cli.withRuntime(
        async (rt) => {
          const part = o.part ?? 'telecom';
          if (!sandboxParts(rt.cfg)[part]) throw new Error(NEEDS[part]);
          return f(rt.get);
        },
        { projectors: o.projectors ?? false },
      ),
  };
}

/** An E.164 number given on the command line, or an error saying what one looks like. */
export const e164Arg = (v: string, example = '+14155550123'): string => {
  if (!/^\+[1-9]\d{1,14}$/.test(v)) throw new Error(`${v} is not an E.164 number such as ${example}`);
  return v;
};
