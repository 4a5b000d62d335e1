import { readFileSync } from 'node:fs';
import { projectPath } from './project-root.js';

/**
 * The node arguments of one of package.json's scripts that run node (`start` by default; `cli`), less the leading
 * `node`, so that tests and benchmarks that start the platform or its CLI in a process of their own run what
 * `npm start` and `npm run cli` run, with the same flags (docs/operations.md#node-flags), from the same build
 * (docs/operations.md#the-build).
 */
export function startArgs(script: 'start' | 'cli' = 'start'): string[] {
  const pkg = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [node, ...args] = (pkg.scripts[script] ?? '').split(/\s+/).filter(Boolean);
  if (node !== 'node') throw new Error(`npm run ${script} should run node, not ${node}`);
  return args;
}
