import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

/**
 * Contract mocks (docs/testing.md#contract-mocks): Stoplight Prism's mock server (`@stoplight/prism-cli`, run from
 * node_modules) generated from a vendor's published OpenAPI document, behind a recording front on a free port. Prism
 * validates every request against the document; the front records each one with the operation it was checked against
 * and what the document refused in it, so that a suite can fail the test that sent a refused request
 * (`useContractMock`) and count the operations it exercised.
 */

export type ContractMockOptions = Readonly<{
  /** what summaries and failures call the mock */
  name: string;
  /** the OpenAPI document (YAML or JSON), absolute or from the repository root */
  document: string;
  /**
   * The operations (operationIds) the adapter under test speaks. When given, the mock serves only those: a vendor
   * document may declare one path shape many times (`GET /{Version}/{WABA-ID}` and a dozen other `GET /{Version}/{…}`),
   * and Prism would check the request against whichever its router prefers (the last declared); a request for any
   * other operation is refused.
   * Without it, the whole document is served and a request that fits several operations equally is refused as ambiguous.
   */
  operations?: readonly string[];
}>;

export type ValidatedRequest = Readonly<{
  method: string;
  /** the path and query as sent */
  url: string;
  headers: IncomingHttpHeaders;
  /** parsed when JSON */
  body: unknown;
  /** the operationId (or `METHOD /path` when it has none) of the document's operation the request was checked against */
  operation: string | null;
  /** Prism's answer */
  status: number;
  /** what the document refuses in the request (Prism's request validation at error severity, or its refusal to route
   * it); empty when the document accepts it */
  violations: readonly string[];
  /** what Prism found wrong in its own answer, made from the document's examples (the document's business, not the
   * request's) */
  answerViolations: readonly string[];
}>;

export type ContractMock = Readonly<{
  /** `http://127.0.0.1:<port>`: the document's paths hang from it */
  url: string;
  name: string;
  /** every request in the order received */
  requests: readonly ValidatedRequest[];
  /** the distinct operations among the requests the document accepted, sorted */
  operationsExercised(): string[];
  /** the operations the mock serves */
  operationsServed(): string[];
  /** how many operations the published document declares */
  operationsInDocument: number;
  stop(): Promise<void>;
}>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const PRISM_ERROR = 'https://stoplight.io/prism/errors#';
/** a cold Prism reads a document of a megabyte in 2-3 s on an idle core: allow for a machine several times busier */
const START_DEADLINE_MS = 90_000;

type Operation = Readonly<{ id: string; method: string; pattern: RegExp; literals: number }>;
type OpenApi = { paths?: Record<string, Record<string, unknown>> } & Record<string, unknown>;

async function readDocument(path: string): Promise<OpenApi> {
  const text = await readFile(path, 'utf8');
  return (extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: -1 })) as OpenApi;
}

/** The document with only the listed operations in its paths (everything else as published). */
function narrowed(doc: OpenApi, operationIds: readonly string[]): OpenApi {
  const wanted = new Set(operationIds);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    const kept = METHODS.filter((m) => wanted.has((item[m] as { operationId?: string } | undefined)?.operationId ?? ''));
    if (!kept.length) continue;
    paths[template] = Object.fromEntries(
      Object.entries(item).filter(([k]) => !(METHODS as readonly string[]).includes(k) || (kept as string[]).includes(k)),
    );
    for (const m of kept) wanted.delete((item[m] as { operationId: string }).operationId);
  }
  if (wanted.size) throw new Error(`the document has no operation ${[...wanted].join(', ')}`);
  return { ...doc, paths };
}

type FormContent = { schema?: { properties?: Record<string, { type?: string }> }; encoding?: Record<string, unknown> };

/**
 * The document with OpenAPI's default written out where Prism needs it: an array property of a form body
 * (`application/x-www-form-urlencoded`) is sent as its key repeated (`MediaUrl=a&MediaUrl=b`: style `form`, explode
 * true, the default), but Prism reads a form property as an array only when the document states its encoding. The
 * same document when there is nothing to add.
 */
function withFormArrayDefaults(doc: OpenApi): OpenApi {
  let changed = false;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    const copy: Record<string, unknown> = { ...item };
    for (const m of METHODS) {
      const form = (item[m] as { requestBody?: { content?: Record<string, FormContent> } } | undefined)?.requestBody?.content?.[
        'application/x-www-form-urlencoded'
      ];
      const arrays = Object.entries(form?.schema?.properties ?? {})
        .filter(([name, p]) => p.type === 'array' && !form?.encoding?.[name])
        .map(([name]) => name);
      if (!form || !arrays.length) continue;
      changed = true;
      const op = item[m] as { requestBody: { content: Record<string, FormContent> } };
      const encoding = { ...form.encoding, ...Object.fromEntries(arrays.map((name) => [name, { style: 'form', explode: true }])) };
      copy[m] = {
        ...op,
        requestBody: {
          ...op.requestBody,
          content: { ...op.requestBody.content, 'application/x-www-form-urlencoded': { ...form, encoding } },
        },
      };
    }
    paths[template] = copy;
  }
  return changed ? { ...doc, paths } : doc;
}

/** The document's operations, each with a matcher for its path template (`{x}` stands for one segment or part of one). */
function operationsOf(doc: OpenApi): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths ?? {}))
    for (const m of METHODS) {
      const op = item[m] as { operationId?: string } | undefined;
      if (!op) continue;
      const segments = template.split('/');
      const source = segments
        .map((s) =>
          s
            .split(/\{[^}]+\}/)
            .map((lit) => lit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('[^/]+'),
        )
        .join('/');
      out.push({
        id: op.operationId ?? `${m.toUpperCase()} ${template}`,
        method: m.toUpperCase(),
        pattern: new RegExp(`^${source}$`),
        literals: segments.filter((s) => s && !s.includes('{')).length,
      });
    }
  return out;
}

/** The operation a request is checked against: the one whose template fits with the most literal segments (Prism's rule). */
function route(ops: readonly Operation[], method: string, path: string): { operation: Operation | null; ambiguous: Operation[] } {
  const fits = ops.filter((o) => o.method === method && o.pattern.test(path));
  const best = Math.max(...fits.map((o) => o.literals));
  const top = fits.filter((o) => o.literals === best);
  return top.length === 1 ? { operation: top[0]!, ambiguous: [] } : { operation: null, ambiguous: top };
}

type Violation = { location?: string[]; severity?: string; message?: string };

/** Deepest location first: of the many lines a failed `oneOf` gives (one per branch), the deepest is usually the cause. */
const lines = (list: readonly Violation[]): string[] =>
  list
    .filter((v) => v.severity === 'Error')
    .map((v) => ({ depth: v.location?.length ?? 0, line: `${(v.location ?? []).join('.')}: ${v.message ?? ''}` }))
    .sort((a, b) => b.depth - a.depth)
    .map((v) => v.line)
    .filter((line, i, all) => all.indexOf(line) === i);

/** What Prism found wrong, from its `sl-violations` header or its own problem answer. */
function verdict(status: number, headers: IncomingHttpHeaders, text: string): { request: string[]; answer: string[] } {
  const request: Violation[] = [];
  const answer: Violation[] = [];
  const notes: string[] = [];
  const header = headers['sl-violations'];
  if (typeof header === 'string') {
    try {
      for (const v of JSON.parse(header) as Violation[]) (v.location?.[0] === 'response' ? answer : request).push(v);
    } catch {
      notes.push(header); // Prism cut a very long list short
    }
  }
  if (String(headers['content-type'] ?? '').includes('application/problem+json')) {
    let problem: { type?: string; title?: string; detail?: string; validation?: Violation[] } = {};
    try {
      problem = JSON.parse(text);
    } catch {
      /* not Prism's */
    }
    if (problem.type?.startsWith(PRISM_ERROR)) {
      const found = (problem.validation ?? []).filter((v) => v.severity === 'Error');
      for (const v of found) request.push({ ...v, location: ['request', ...(v.location ?? [])] });
      if (!found.length) notes.push(`${status} ${problem.type.slice(PRISM_ERROR.length)}: ${problem.detail ?? problem.title ?? ''}`);
    }
  }
  return { request: [...lines(request), ...notes], answer: lines(answer) };
}

/** Starts Prism on the document (narrowed to `operations`), and the recording front before it, each on a free port. */
export async function startContractMock(o: ContractMockOptions): Promise<ContractMock> {
  const documentPath = resolve(o.document);
  const published = await readDocument(documentPath);
  const narrowedDoc = o.operations ? narrowed(published, o.operations) : published;
  const served = withFormArrayDefaults(narrowedDoc);
  const ops = operationsOf(served);
  let scratch: string | null = null;
  let prismDocument = documentPath;
  if (o.operations || served !== narrowedDoc) {
    scratch = await mkdtemp(join(tmpdir(), 'contract-mock-'));
    prismDocument = join(scratch, 'document.json');
    await writeFile(prismDocument, JSON.stringify(served));
  }

  let prism: Awaited<ReturnType<typeof startPrism>>;
  try {
    prism = await startPrism(prismDocument);
  } catch (err) {
    if (scratch) await rm(scratch, { recursive: true, force: true });
    throw err;
  }
  const requests: ValidatedRequest[] = [];

  const front: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const method = (req.method ?? 'GET').toUpperCase();
      const url = req.url ?? '/';
      const path = new URL(url, 'http://mock').pathname;
      const { operation, ambiguous } = route(ops, method, path);
      const text = raw.toString('utf8');
      let body: unknown = text || null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        /* kept as text */
      }
      const record = (status: number, violations: string[], answerViolations: string[]) =>
        requests.push({ method, url, headers: req.headers, body, operation: operation?.id ?? null, status, violations, answerViolations });
      const forward = httpRequest(
        { host: '127.0.0.1', port: prism.port, method, path: url, headers: { ...req.headers, host: `127.0.0.1:${prism.port}` } },
        (answer) => {
          const out: Buffer[] = [];
          answer.on('data', (c: Buffer) => out.push(c));
          answer.on('end', () => {
            const status = answer.statusCode ?? 0;
            const answerText = Buffer.concat(out);
            const v = verdict(status, answer.headers, answerText.toString('utf8'));
            const violations = ambiguous.length
              ? [
                  `the document declares ${method} ${path} as ${ambiguous.length} operations (${ambiguous.map((a) => a.id).join(', ')}): name the one meant in the mock's operations`,
                  ...v.request,
                ]
              : v.request;
            record(status, violations, v.answer);
            res.writeHead(status, answer.headers);
            res.end(answerText);
          });
        },
      );
      forward.on('error', (err) => {
        record(502, [`the mock did not answer: ${err.message}`], []);
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(err.message);
      });
      forward.end(raw);
    });
  });
  await new Promise<void>((ok) => front.listen(0, '127.0.0.1', ok));

  return {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    name: o.name,
    requests,
    operationsExercised: () => [...new Set(requests.filter((r) => !r.violations.length && r.operation).map((r) => r.operation!))].sort(),
    operationsServed: () => [...new Set(ops.map((op) => op.id))].sort(),
    operationsInDocument: o.operations ? operationsOf(published).length : ops.length,
    stop: async () => {
      front.closeAllConnections();
      await new Promise<void>((ok) => front.close(() => ok()));
      await prism.stop();
      if (scratch) await rm(scratch, { recursive: true, force: true });
    },
  };
}

/** `prism mock` on a free port (it prints the address it took); resolves once it listens. */
function startPrism(document: string): Promise<{ port: number; stop: () => Promise<void> }> {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@stoplight/prism-cli/package.json');
  const bin = join(dirname(pkg), (require(pkg) as { bin: { prism: string } }).bin.prism);
  const child: ChildProcess = spawn(process.execPath, [bin, 'mock', '--host', '127.0.0.1', '--port', '0', document], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // a test process that exits without stopping it (mocha's --exit, a crash) takes Prism along
  const orphan = () => child.kill('SIGKILL');
  process.once('exit', orphan);
  const stop = () =>
    new Promise<void>((ok) => {
      process.off('exit', orphan);
      if (child.exitCode !== null || child.signalCode !== null) return ok();
      child.once('exit', () => ok());
      child.kill('SIGTERM');
    });
  // Prism lists every route before it listens (thousands of lines for a large document), then logs every request:
  // the start and the end of its output are kept, the end searched for the address it took
  let head = '';
  let tail = '';
  const keep = (b: Buffer) => {
    const s = b.toString();
    if (head.length < 8_000) head += s;
    tail = (tail + s).slice(-4_000);
  };
  const output = () => (head.length < 8_000 ? head : `${head}\n…\n${tail}`);
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => {
      void stop();
      fail(new Error(`Prism did not start within ${START_DEADLINE_MS / 1000} s:\n${output()}`));
    }, START_DEADLINE_MS);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      process.off('exit', orphan);
      fail(new Error(`Prism exited (${code}) before it listened:\n${output()}`));
    };
    child.once('exit', onExit);
    child.stderr!.on('data', keep);
    child.stdout!.on('data', (b: Buffer) => {
      keep(b);
      const m = /Prism is listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(tail);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stdout!.removeAllListeners('data');
      child.stderr!.removeAllListeners('data');
      child.stdout!.resume();
      child.stderr!.resume();
      ok({ port: Number(m[1]), stop });
    });
  });
}

/** A test failure naming each request the document refused and why. */
export function refusalError(mock: Pick<ContractMock, 'name'>, refused: readonly ValidatedRequest[]): Error {
  const lines = refused.flatMap((r) => [
    `${r.method} ${r.url} (${r.operation ?? 'no operation'}) answered ${r.status}:`,
    ...r.violations.slice(0, 50).map((v) => `  - ${v}`),
    ...(r.violations.length > 50 ? [`  - and ${r.violations.length - 50} more`] : []),
  ]);
  const e = new Error(`${mock.name} refused ${refused.length} request(s) the test sent:\n${lines.join('\n')}`);
  e.name = 'ContractViolation';
  return e;
}

/**
 * In a `describe`: starts the mock once before its tests, fails each test during which the document refused a request
 * (whatever the code under test made of the answer), and after the tests prints the operations exercised and stops
 * it. Returns the running mock.
 */
export function useContractMock(o: ContractMockOptions): () => ContractMock {
  return useContractMocks({ mock: o }).mock;
}

/**
 * `useContractMock` for several documents at once (an adapter that speaks to several of a vendor's APIs): the mocks
 * start side by side, and each test fails if any of them refused a request it sent.
 */
export function useContractMocks<K extends string>(all: Readonly<Record<K, ContractMockOptions>>): Record<K, () => ContractMock> {
  const keys = Object.keys(all) as K[];
  const mocks = new Map<K, ContractMock>();
  const judged = new Map<K, number>();
  before(async function () {
    this.timeout(START_DEADLINE_MS + 10_000);
    const started = await Promise.allSettled(keys.map(async (k) => mocks.set(k, await startContractMock(all[k]))));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  });
  afterEach(function () {
    const refusals: Error[] = [];
    for (const [k, mock] of mocks) {
      const refused = mock.requests.slice(judged.get(k) ?? 0).filter((r) => r.violations.length);
      judged.set(k, mock.requests.length);
      if (refused.length) refusals.push(refusalError(mock, refused));
    }
    // fails the test that just ran (mocha's Hook#error), not the hook: the block's other tests still run
    if (refusals.length === 1) (this.test as Mocha.Hook).error(refusals[0]!);
    else if (refusals.length) {
      const e = new Error(refusals.map((r) => r.message).join('\n'));
      e.name = 'ContractViolation';
      (this.test as Mocha.Hook).error(e);
    }
  });
  after(async () => {
    for (const mock of mocks.values()) {
      const exercised = mock.operationsExercised();
      const refused = mock.requests.filter((r) => r.violations.length).length;
      console.log(
        `      ${mock.name}: ${exercised.length} distinct operation(s) exercised (${mock.operationsServed().length} served, ` +
          `${mock.operationsInDocument} in the document) by ${mock.requests.length} request(s), ${refused} refused: ${exercised.join(', ')}`,
      );
    }
    await Promise.all([...mocks.values()].map((m) => m.stop()));
    mocks.clear();
  });
  return Object.fromEntries(
    keys.map((k) => [
      k,
      () => {
        const mock = mocks.get(k);
        if (!mock) throw new Error(`${all[k].name} has not started (use it inside the tests of its describe)`);
        return mock;
      },
    ]),
  ) as Record<K, () => ContractMock>;
}
