import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { expect } from 'chai';
import { openPglite } from '../../infrastructure/db/pglite-run.js';
import { keepSeed, readSeed, seedFile } from '../../infrastructure/db/pglite-seed.js';

// A new embedded database starts from the kept seed of PGlite's initialised cluster
// (docs/event-store.md#a-new-embedded-database). PGlite's `initdb` makes the same cluster every time, so to tell a
// database made from the seed from one made by `initdb`, these tests keep as the seed a cluster with a table of
// its own, the mark. They keep their seeds in a directory of their own, and only read the installation's seed.
describe('a new embedded database and the seed of its cluster', function () {
  this.timeout(60_000);
  let dir: string;
  let seed: string;
  let plainSeed: Buffer;
  let markedSeed: Buffer;
  let plain: PGlite;
  let withMark: PGlite;
  const opened: PGlite[] = [];
  const open = async (o: Parameters<typeof openPglite>[0]) => {
    const client = await openPglite(o);
    opened.push(client);
    return client;
  };
  const marked = async (client: PGlite) => (await client.query("select 1 from pg_class where relname = 'seed_mark'")).rows.length === 1;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'avp-seed-'));
    // a new cluster (from the installation's seed, or made by initdb if it has none yet), kept as it is and with the mark
    plain = await openPglite({});
    expect(await marked(plain)).to.equal(false);
    await keepSeed(plain, join(dir, 'plain'));
    plainSeed = readFileSync(join(dir, 'plain'));
    withMark = await openPglite({ image: await plain.dumpDataDir('gzip') });
    await withMark.exec('create table seed_mark (a int)');
    await keepSeed(withMark, join(dir, 'marked'));
    markedSeed = readFileSync(join(dir, 'marked'));
  });
  beforeEach(() => {
    seed = join(dir, 'cluster.tar.gz');
    writeFileSync(seed, markedSeed);
  });
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.close().catch(() => undefined);
    for (const f of readdirSync(dir)) if (f !== 'plain' && f !== 'marked') rmSync(join(dir, f), { recursive: true, force: true });
  });
  after(async () => {
    await plain?.close();
    await withMark?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts a new cluster from the seed, in memory and on disk, each a database of its own', async () => {
    const inMemory = await open({ seed });
    const onDisk = await open({ seed, dataDir: join(dir, 'data') });
    expect(await marked(inMemory), 'in memory, from the seed').to.equal(true);
    expect(await marked(onDisk), 'on disk, from the seed').to.equal(true);
    await inMemory.exec('create table only_here (a int)');
    expect((await onDisk.query("select 1 from pg_class where relname = 'only_here'")).rows).to.have.length(0);
    await onDisk.exec('insert into seed_mark values (7)');
    await onDisk.close();
    writeFileSync(seed, plainSeed);
    const again = await open({ seed, dataDir: join(dir, 'data') });
    expect((await again.query<{ a: number }>('select a from seed_mark')).rows, 'reopened, not seeded again').to.deep.equal([{ a: 7 }]);
  });

  it('opens an image as it is, whatever the seed', async () => {
    expect(await marked(await open({ seed, image: await plain.dumpDataDir('gzip') }))).to.equal(false);
    expect(readFileSync(seed).equals(markedSeed), 'the seed kept as it was').to.equal(true);
  });

  it('lets go of a seed whose bytes do not match its digest', () => {
    const changed = Buffer.from(markedSeed);
    changed[changed.length - 100] = changed[changed.length - 100]! ^ 0xff;
    writeFileSync(seed, changed);
    expect(readSeed(seed), 'a changed seed is not read').to.equal(undefined);
    expect(existsSync(seed), 'and is removed, for the next new cluster to be kept in its place').to.equal(false);
    writeFileSync(seed, markedSeed.subarray(0, 64));
    expect(readSeed(seed), 'a digest without a cluster').to.equal(undefined);
    expect(readSeed(join(dir, 'none')), 'no seed').to.equal(undefined);
  });

  it('never replaces a kept seed, and leaves no file of its own beside it', async () => {
    rmSync(seed);
    await Promise.all([keepSeed(plain, seed), keepSeed(withMark, seed), keepSeed(plain, seed)]);
    expect(readdirSync(dir).sort()).to.deep.equal(['cluster.tar.gz', 'marked', 'plain']);
    expect(readSeed(seed)).to.be.instanceOf(Blob);
    const kept = readFileSync(seed);
    await keepSeed(withMark, seed);
    await keepSeed(plain, seed);
    expect(readFileSync(seed).equals(kept)).to.equal(true);
  });

  it("the installation's seed is kept beside the PGlite that made it, named by its version, once a new cluster was made", () => {
    // this file's first new cluster (before) started from it, or made it on a fresh installation
    expect(readSeed(), "the installation's seed").to.be.instanceOf(Blob);
    const version = (JSON.parse(readFileSync('node_modules/@electric-sql/pglite/package.json', 'utf8')) as { version: string }).version;
    expect(seedFile()).to.equal(join(process.cwd(), 'node_modules', '.cache', 'agent-voice-platform', `pglite-${version}-cluster.tar.gz`));
  });
});
