import { Worker } from 'node:worker_threads';
import type { PgliteRunner, StatementResult } from './pglite-driver.js';

/** How the thread opens PGlite: a data directory, a dump to start from (in memory), or neither (in memory, empty). */
export type ThreadStart = Readonly<{ dataDir?: string; image?: Blob | File; freeLeases?: string }>;
export type ThreadRequest = { id: number; op: 'run' | 'dump' | 'close'; sql?: string; params?: readonly unknown[] };
export type ThreadError = { message: string; name: string; fields: Record<string, string | number> };
export type ThreadReply =
  | { id: number; ok: true; result?: StatementResult; blob?: Blob | File }
  | { id: number; ok: false; error: ThreadError };

/** An error from the database thread, with the fields PostgreSQL gave it (`code`, `detail`, `constraint`…). */
const rebuilt = (e: ThreadError): Error => Object.assign(new Error(e.message), e.fields, { name: e.name });

/**
 * PGlite on a worker thread of its own (docs/event-store.md#pglite-on-its-own-thread): this thread sends statements
 * and gets their rows back (structured clones: dates, bigints and bytes arrive as they left), so HTTP, voice turns
 * and timers run while the database works, on the machine's other core.
 */
export class PgliteThread implements PgliteRunner {
  private readonly worker: Worker;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (r: ThreadReply & { ok: true }) => void; reject: (e: Error) => void }>();
  private ended: Error | null = null;
  /** resolves once PGlite is open on the thread, rejects if it could not be */
  readonly ready: Promise<void>;

  constructor(start: ThreadStart) {
    // from TypeScript sources the thread loads its file through tsx (a worker does not inherit tsx's loader)
    const fromSources = import.meta.url.endsWith('.ts');
    const entry = new URL(`./pglite-thread.worker.${fromSources ? 'ts' : 'js'}`, import.meta.url).href;
    const load = fromSources
      ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => tsx.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`
      : `import(${JSON.stringify(entry)})`;
    this.worker = new Worker(load, { eval: true, workerData: start });
    this.ready = new Promise<void>((resolve, reject) => {
      this.pending.set(0, { resolve: () => resolve(), reject });
    });
    this.worker.on('message', (r: ThreadReply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (r.ok) p.resolve(r);
      else p.reject(rebuilt(r.error));
    });
    const fail = (err: Error) => {
      this.ended ??= err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the database thread ended (exit code ${code})`)));
  }

  private send(m: Omit<ThreadRequest, 'id'>): Promise<ThreadReply & { ok: true }> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...m, id } satisfies ThreadRequest);
    });
  }

  async run(sql: string, params: readonly unknown[]): Promise<StatementResult> {
    return (await this.send({ op: 'run', sql, params })).result ?? { rows: [] };
  }

  async dump(): Promise<Blob | File> {
    const r = await this.send({ op: 'dump' });
    if (!r.blob) throw new Error('the database thread sent no dump');
    return r.blob;
  }

  async close(): Promise<void> {
    if (this.ended) return;
    await this.send({ op: 'close' }).catch(() => undefined);
    await this.worker.terminate();
  }
}
