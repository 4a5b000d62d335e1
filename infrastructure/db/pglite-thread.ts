import type { Worker } from 'node:worker_threads';
import { types } from '@electric-sql/pglite';
import { moduleThread } from '../module-thread.js';
import type { Parsers, PgliteRunner } from './pglite-driver.js';

/** How the thread opens PGlite: a data directory, a dump to start from (in memory), or neither (in memory, empty). */
export type ThreadStart = Readonly<{ dataDir?: string; image?: Blob | File; freeLeases?: string }>;
export type ThreadRequest = { id: number; op: 'run' | 'dump' | 'close'; message?: Uint8Array };
export type ThreadError = { message: string; name: string; fields: Record<string, string | number> };
/** an array type of the database and the type of its elements (PGlite's parsers know arrays by these) */
export type ArrayType = { oid: number; typarray: number };
export type ThreadReply =
  | { id: number; ok: true; raw?: Uint8Array; blob?: Blob | File; arrays?: ArrayType[] }
  | { id: number; ok: false; error: ThreadError };

/**
 * The buffers a message may move to the other thread instead of copying: a byte array's own buffer, never one it
 * only views a part of (a serializer's reused buffer, which moving would take away from its owner).
 */
export const movable = (bytes: Uint8Array | undefined): ArrayBuffer[] =>
  bytes && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
    ? [bytes.buffer]
    : [];

/**
 * The bytes of a byte array that only views part of a buffer, in a buffer of their own. A message clones a view with
 * the whole buffer under it, and node's `Buffer.concat` and `Buffer.from` give arrays under 4 KB as views of its shared
 * 8 KB pool: most statements crossed to the database's thread as 8 KB each (docs/event-store.md#pglite-on-its-own-thread).
 */
const ownBytes = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

/** An error from the database thread, with the fields PostgreSQL gave it (`code`, `detail`, `constraint`…). */
const rebuilt = (e: ThreadError): Error => Object.assign(new Error(e.message), e.fields, { name: e.name });

/**
 * PGlite on a worker thread of its own (docs/event-store.md#pglite-on-its-own-thread): this thread sends each
 * statement as its wire-protocol message and gets PGlite's raw answer back, both moved between the threads, not
 * copied; building the rows is done here, so the database's thread does only the database's work.
 */
export class PgliteThread implements PgliteRunner {
  private readonly worker: Worker;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (r: ThreadReply & { ok: true }) => void; reject: (e: Error) => void }>();
  private ended: Error | null = null;
  private parsersOfDb: Parsers = types.parsers;
  /** resolves once PGlite is open on the thread, rejects if it could not be */
  readonly ready: Promise<void>;

  constructor(start: ThreadStart) {
    const fromSources = import.meta.url.endsWith('.ts');
    this.worker = moduleThread(new URL(`./pglite-thread.worker.${fromSources ? 'ts' : 'js'}`, import.meta.url).href, {
      workerData: start,
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.pending.set(0, {
        resolve: (r) => {
          // PGlite's own parsers for the database's array types, as PGlite sets them up when it opens
          const parsers: Parsers = { ...types.parsers };
          for (const a of r.arrays ?? []) parsers[a.typarray] = (x: string) => types.arrayParser(x, parsers[a.oid]!, a.typarray);
          this.parsersOfDb = parsers;
          resolve();
        },
        reject,
      });
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

  private send(m: Omit<ThreadRequest, 'id'>, moved: ArrayBuffer[] = []): Promise<ThreadReply & { ok: true }> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...m, id } satisfies ThreadRequest, moved);
    });
  }

  async run(message: Uint8Array): Promise<Uint8Array> {
    // a buffer of its own is moved; a view crosses as a copy of its own bytes (cloning a few hundred bytes cost the
    // process's thread no more than moving them)
    const moved = movable(message);
    return (await this.send({ op: 'run', message: moved.length > 0 ? message : ownBytes(message) }, moved)).raw ?? new Uint8Array(0);
  }

  parsers(): Parsers {
    return this.parsersOfDb;
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
