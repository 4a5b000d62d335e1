import { readFileSync } from 'node:fs';

/**
 * The node arguments of `npm start` (its script in package.json, less the leading `node`), so that tests and
 * benchmarks that start the platform in a process of its own run it with the same flags (docs/operations.md#node-flags).
 */
export function startArgs(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const [node, ...args] = pkg.scripts.start.split(/\s+/).filter(Boolean);
  if (node !== 'node') throw new Error(`npm start should run node, not ${node}`);
  return args;
}
