import { spawnSync } from 'node:child_process';

/**
 * Mocha's global setup (.mocharc.cjs), once per run in the main process before any worker starts: builds the server
 * into `dist/` with `npm run build`, which the tests that start the platform or its CLI in a process of their own run,
 * as `npm start` and `npm run cli` do (docs/operations.md#the-build).
 */
export function mochaGlobalSetup(): void {
  const r = spawnSync('npm', ['run', '-s', 'build'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`npm run build failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
}
