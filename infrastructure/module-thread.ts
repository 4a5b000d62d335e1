import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread that runs the module at `entry` (a file URL). From TypeScript sources the thread loads it through
 * tsx's API, since a worker does not inherit tsx's loader; from the built JavaScript it imports it.
 */
export function moduleThread(entry: string, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const load = entry.endsWith('.ts')
    ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => tsx.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`
    : `import(${JSON.stringify(entry)})`;
  return new Worker(load, { ...options, eval: true });
}
