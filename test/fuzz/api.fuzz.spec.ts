import { Agent, request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import fc from 'fast-check';
import type { Checkpoint } from '../../application/ports/event-store.port.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { analyticsProjectors } from '../../projections/analytics/analytics.projectors.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { reactorPast } from '../support/reactors.js';

/**
 * Property-based fuzz of the whole HTTP API, driven by the server's own `/openapi.json` (docs/input-rules.md).
 * For every operation it sends generated valid and invalid requests and checks: no 5xx; every error body is
 * one of the two error shapes with a `request_id`; and a refused request changes no list and no balance.
 *
 * `npm test` runs 300 requests by default; `npm run fuzz` runs 20,000 and prints the count of responses by status.
 *
 * What is never sent a request that could succeed (each gets only requests that are invalid by construction:
 * a body that is not a JSON object, or a NUL in a body string, a query value or a path id):
 *  - POST /v1/numbers and GET /v1/numbers/lookup cost money (a number, a lookup charge);
 *  - POST /sandbox/faults would make the sandbox carrier fail on purpose, so a later 502 would be expected;
 *  - the two webhook test routes send a delivery out of the process.
 * Webhook and tool URLs that the generator makes valid point at 127.0.0.1:9 (discard), so no other delivery
 * leaves the machine either.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
/** Lists and balances are compared after every refused write, or every Nth for long runs (events are checked after each). */
const SNAPSHOT_EVERY = Number(process.env.FUZZ_SNAPSHOT_EVERY ?? 1);
/** `FUZZ_SEED` replays the sequence of an earlier run (fast-check prints the seed of a failing one). */
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const PRINT = process.env.FUZZ_PRINT === '1' || process.env.FUZZ_RUNS !== undefined;
const LOCAL_URL = 'http://127.0.0.1:9/hook';

type Schema = Record<string, any>;
type Op = { method: string; path: string; auth: 'key' | 'admin' | 'none'; params: Schema[]; body: Schema | null; restricted: boolean };
type Req = { method: string; path: string; headers: Record<string, string>; body: Buffer | null; op: Op };

const RESTRICTED = new Set([
  'POST /v1/numbers',
  'GET /v1/numbers/lookup',
  'POST /sandbox/faults',
  'POST /v1/webhooks/test',
  'POST /v1/agents/{agent_id}/webhook/test',
]);

// ---- hostile values -------------------------------------------------------------------------------------
const hostileString = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff',
    'x\ud800\udfff\ud800',
    '\u{1F600}',
    '\u202e',
    '\ufeff',
    '%00',
    '%E0%A4%A',
    '..',
    '../..',
    "' or 1=1 --",
    '${jndi:x}',
    '<script>',
    '\\',
    '"',
    '',
    ' ',
    '\r\n',
    'null',
    'NaN',
    '-1',
    '1e400',
    '9007199254740993',
    '0x10',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 20 }).map((s) => s.repeat(500)),
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    -0,
    1e308,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_SAFE_INTEGER,
    [],
    {},
    [null],
    { '': 1 },
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
);
/** Raw JSON texts that JSON.stringify cannot produce: escapes of NUL and lone surrogates, broken syntax, depth. */
const hostileJsonText = fc.oneof(
  fc.constantFrom(
    '{"name":"a\\u0000b"}',
    '{"name":"\\ud800\\udfff\\ud800"}',
    '{"a\\u0000":1}',
    '{',
    '[',
    '"',
    'nul',
    '{"a":1,}',
    '\u0000',
    '',
    '{"name":"x"}{"name":"y"}',
    '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{"x":1}}}',
  ),
  fc.integer({ min: 10, max: 5000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.integer({ min: 10, max: 3000 }).map((n) => `{"name":"deep","parameters":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`),
);

/** Bodies no object schema accepts: a NUL or lone surrogate in a string, not an object, or not decodable. */
const restrictedBody: fc.Arbitrary<{ text: string | null; encoding?: string }> = fc.oneof(
  fc.constantFrom('{"name":"a\\u0000b"}', '{"areaCode":"\\ud800"}', '{"a\\u0000":1}', '{', '[', '{"a":1,}').map((text) => ({ text })),
  fc.array(hostileValue, { maxLength: 3 }).map((v) => ({ text: JSON.stringify(v) })),
  fc.constantFrom('gzip', 'deflate', 'br', 'x-unknown').map((encoding) => ({ text: '{}', encoding })),
);

// ---- values from the OpenAPI schemas --------------------------------------------------------------------
function fromSchema(s: Schema, doc: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (s.$ref) return fromSchema(doc.components.schemas[String(s.$ref).split('/').pop()!], doc, depth);
  if (s.anyOf || s.oneOf) return fc.oneof(...(s.anyOf ?? s.oneOf).map((x: Schema) => fromSchema(x, doc, depth)));
  if (s.allOf) return fromSchema(Object.assign({}, ...s.allOf), doc, depth);
  if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
  if (s.const !== undefined) return fc.constant(s.const);
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : ['string'];
  const arbs = types.map((t): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({
          min: Math.max(s.minimum ?? -1e6, Number.MIN_SAFE_INTEGER),
          max: Math.min(s.maximum ?? 1e6, Number.MAX_SAFE_INTEGER),
        });
      case 'number':
        return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
      case 'array':
        return depth > 3
          ? fc.constant([])
          : fc.array(fromSchema(s.items ?? {}, doc, depth + 1), { maxLength: Math.min(s.maxItems ?? 3, 3) });
      case 'object': {
        if (depth > 3) return fc.constant({});
        const props: Record<string, Schema> = s.properties ?? {};
        const required = new Set<string>(s.required ?? []);
        const rec: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [k, v] of Object.entries(props)) rec[k] = /url|uri/i.test(k) ? fc.constant(LOCAL_URL) : fromSchema(v, doc, depth + 1);
        const known = fc.record(rec, { requiredKeys: [...required].filter((k) => k in rec) });
        if (Object.keys(props).length === 0 && s.additionalProperties)
          return fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 });
        return known;
      }
      default: {
        if (s.format === 'uri' || s.format === 'url') return fc.constant(LOCAL_URL);
        if (s.format === 'email') return fc.emailAddress();
        if (s.format === 'date-time')
          return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
        if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length <= (s.maxLength ?? 1e6));
        return fc.string({
          unit: 'grapheme',
          minLength: s.minLength ?? 0,
          maxLength: Math.max(s.minLength ?? 0, Math.min(s.maxLength ?? 30, 30)),
        });
      }
    }
  });
  return arbs.length === 1 ? arbs[0]! : fc.oneof(...arbs);
}

/** Replace one property of a valid object with a hostile value (or add an unknown one). */
const mutate = (valid: fc.Arbitrary<unknown>) =>
  fc.tuple(valid, hostileValue, fc.nat(), hostileString).map(([v, bad, i, extraKey]) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return bad;
    const keys = Object.keys(v);
    const o: Record<string, unknown> = { ...v };
    if (keys.length === 0 || i % 5 === 0) o[extraKey] = bad;
    else o[keys[i % keys.length]!] = bad;
    return o;
  });

// ---- the HTTP client: node:http sends the path exactly as written -------------------------------------------
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
function send(
  base: URL,
  r: { method: string; path: string; headers: Record<string, string>; body: Buffer | null },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method: r.method,
        path: r.path,
        agent,
        headers: { ...r.headers, ...(r.body ? { 'content-length': String(r.body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(r.body ?? undefined);
  });
}

/** `encodeURIComponent`, or the WTF-8 bytes of a lone surrogate, which no server can decode. */
const enc = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return s
      .replace(/[\ud800-\udfff]/g, '%ED%A0%80')
      .replace(/[^A-Za-z0-9%]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').slice(-2)}`);
  }
};

describe('API fuzz (fast-check, driven by /openapi.json)', function () {
  this.timeout(0);
  let app: TestApp;
  let doc: Schema;
  let ops: Op[];
  let key: string;
  let foreignKey: string;
  const ids: Record<string, { own: string[]; foreign: string[] }> = {};
  const byStatus = new Map<number, number>();
  let sent = 0;

  before(async () => {
    // the throttles have tests of their own; here they would only turn the hostile requests into 429s
    app = await startTestApp({ THROTTLE_MAX_REQUESTS: '100000000', AUTH_FAILURES_PER_CLIENT: '100000000' });
    const a = await app.newAccount('Fuzz A');
    const b = await app.newAccount('Fuzz B');
    key = a.apiKey;
    foreignKey = b.apiKey;
    const setup = async (k: string, accountId: string, side: 'own' | 'foreign') => {
      const add = (name: string, id: unknown) => {
        if (typeof id !== 'string') return;
        ids[name] ??= { own: [], foreign: [] };
        ids[name][side].push(id);
      };
      add('account_id', accountId);
      const agentR = await app.call('POST', '/v1/agents', { key: k, body: { name: `agent ${side}` } });
      add('agent_id', agentR.body.id);
      const num = await app.call('POST', '/v1/numbers', { key: k, body: {} });
      add('number_id', num.body?.id);
      const sub = await app.call('POST', '/v1/sub-accounts', { key: k, body: { name: `sub ${side}` } });
      add('sub_account_id', sub.body?.id ?? sub.body?.accountId);
      // a second key: the fuzz may revoke it; the key it sends with is never in the pool
      const k2 = await app.call('POST', '/v1/api-keys', { key: k, body: { name: 'spare' } });
      add('key_id', k2.body?.id ?? k2.body?.keyId);
      const contact = await app.call('POST', '/v1/contacts', { key: k, body: { phoneNumber: '+14155550199', name: `contact ${side}` } });
      add('contact_id', contact.body?.id);
    };
    await setup(key, a.accountId, 'own');
    await setup(foreignKey, b.accountId, 'foreign');
    doc = (await app.call('GET', '/openapi.json')).body;
    ops = [];
    for (const [path, item] of Object.entries<Record<string, Schema>>(doc.paths)) {
      for (const [method, o] of Object.entries(item)) {
        const auth = path.startsWith('/admin') || path.startsWith('/sandbox') ? 'admin' : o.security?.length === 0 ? 'none' : 'key';
        const body = o.requestBody?.content?.['application/json']?.schema ?? null;
        ops.push({
          method: method.toUpperCase(),
          path,
          auth,
          params: o.parameters ?? [],
          body,
          restricted: RESTRICTED.has(`${method.toUpperCase()} ${path}`),
        });
      }
    }
    expect(ops.length).to.be.greaterThan(40);
  });
  after(async () => {
    agent.destroy();
    await app?.close();
    if (PRINT) {
      const counts = [...byStatus.entries()]
        .sort(([x], [y]) => x - y)
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ');
      console.log(`  fuzz: ${sent} requests over ${ops?.length} operations; by status: ${counts}`);
    }
  });

  const requestFor = (op: Op): fc.Arbitrary<Req> => {
    const pathArbs = op.params
      .filter((p) => p.in === 'path')
      .map((p) => {
        const pool = ids[p.name] ?? { own: [], foreign: [] };
        const valid = op.restricted || pool.own.length === 0 ? fromSchema(p.schema ?? {}, doc).map(String) : fc.constantFrom(...pool.own);
        return fc.tuple(
          fc.constant(p.name as string),
          fc.oneof(
            { weight: op.restricted ? 0 : 4, arbitrary: valid.map(enc) },
            {
              weight: pool.foreign.length ? 2 : 0,
              arbitrary: pool.foreign.length ? fc.constantFrom(...pool.foreign).map(enc) : fc.constant('x'),
            },
            { weight: 3, arbitrary: hostileString.map(enc) },
            {
              weight: op.restricted ? 3 : 1,
              arbitrary: fc.constantFrom('%00', 'a%00', '%E0%A4%A', '%', '%zz', '%ED%A0%80', '%2e%2e', '%2F', '..', 'a%2Fb', '%C0%AE'),
            },
          ),
        );
      });
    const queryParams = op.params.filter((p) => p.in === 'query');
    const queryArb = fc
      .array(
        fc.oneof(
          ...(queryParams.length
            ? [
                fc
                  .constantFrom(...queryParams)
                  .chain((p) => fc.tuple(fc.constant(p.name as string), fc.oneof(fromSchema(p.schema ?? {}, doc), hostileValue))),
              ]
            : []),
          fc.tuple(hostileString, hostileString),
        ),
        { maxLength: 3 },
      )
      .map((pairs) => pairs.map(([k, v]) => `${enc(String(k))}=${enc(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`));
    const rawQuery = fc.constantFrom(
      '',
      '',
      '',
      '&',
      'limit=%00',
      'a[b]=1',
      'limit=1&limit=2',
      'offset=-1',
      'limit=1e999',
      '%E0%A4%A=1',
      'x=%ZZ',
      'hours=9999999999',
    );
    const validBody = op.body ? fromSchema(op.body, doc) : fc.constant(undefined);
    const bodyArb: fc.Arbitrary<{ text: string | null; encoding?: string }> = op.restricted
      ? restrictedBody
      : fc.oneof(
          { weight: 5, arbitrary: validBody.map((v) => ({ text: v === undefined ? null : JSON.stringify(v) })) },
          { weight: 3, arbitrary: mutate(validBody).map((v) => ({ text: JSON.stringify(v) ?? null })) },
          { weight: 3, arbitrary: hostileJsonText.map((text) => ({ text })) },
          { weight: 1, arbitrary: fc.array(hostileValue, { maxLength: 3 }).map((v) => ({ text: JSON.stringify(v) })) },
          {
            weight: 1,
            arbitrary: fc
              .constantFrom('gzip', 'deflate', 'br', 'x-unknown', 'gzip, gzip', 'identity')
              .map((encoding) => ({ text: '{"name":"not compressed"}', encoding })),
          },
          { weight: 1, arbitrary: validBody.map((v) => ({ text: JSON.stringify(v ?? {}), encoding: 'gzip-real' })) },
        );
    const authArb = fc.oneof(
      { weight: 12, arbitrary: fc.constant('right') },
      { weight: 1, arbitrary: fc.constantFrom('none', 'wrong', 'foreign', 'foreign-sub', 'garbage') },
    );
    const contentType = fc.oneof(
      { weight: 10, arbitrary: fc.constant('application/json') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'text/plain',
          'application/json; charset=latin1',
          'application/json; charset=utf-16',
          'application/x-www-form-urlencoded',
          'application/json; charset=utf-8',
        ),
      },
    );
    return fc
      .record({ path: fc.tuple(...pathArbs), query: queryArb, rawQuery, body: bodyArb, auth: authArb, contentType })
      .map((g): Req => {
        let path = op.path;
        for (const [name, v] of g.path) path = path.replace(`{${name}}`, v === '' ? '%20' : v);
        const qs = [...g.query, g.rawQuery].filter(Boolean).join('&');
        if (qs) path += `?${qs}`;
        const headers: Record<string, string> = { 'content-type': g.contentType };
        const right = op.auth === 'admin' ? ADMIN_TOKEN : key;
        if (g.auth === 'right' && op.auth !== 'none') headers.authorization = `Bearer ${right}`;
        if (g.auth === 'wrong') headers.authorization = 'Bearer avp_not_a_real_key';
        if (g.auth === 'garbage') headers.authorization = 'Basic Zm9vOmJhcg==';
        if (g.auth === 'foreign') headers.authorization = `Bearer ${op.auth === 'admin' ? key : foreignKey}`;
        if (g.auth === 'foreign-sub') {
          headers.authorization = `Bearer ${right}`;
          headers['x-sub-account-id'] = ids.sub_account_id?.foreign[0] ?? 'acc_x';
        }
        let body: Buffer | null = null;
        if (g.body.text !== null && (op.method !== 'GET' || g.body.encoding)) {
          body = Buffer.from(g.body.text, 'utf8');
          if (g.body.encoding === 'gzip-real') {
            body = gzipSync(body);
            headers['content-encoding'] = 'gzip';
          } else if (g.body.encoding) headers['content-encoding'] = g.body.encoding;
        }
        // a restricted operation without a path id gets a NUL query value as well, so it cannot succeed (see the top)
        if (op.restricted && !op.path.includes('{'))
          path += `${path.includes('?') ? '&' : '?'}${op.path.includes('lookup') ? 'phoneNumbers' : 'agentId'}=%00`;
        return { method: op.method, path, headers, body, op };
      });
  };

  /**
   * Lists and balances of both accounts, read once the read models have caught up with the store's head.
   * A refused request must leave every one of them as it was.
   */
  let seenUpTo: Checkpoint | undefined;
  const snapshot = async () => {
    const head = await app.rt.store.headCheckpoint();
    const fresh = await app.rt.store.readAll({ ...(seenUpTo !== undefined ? { after: seenUpTo } : {}), maxCount: 100_000 });
    const lastOfType = new Map(fresh.map((e) => [e.type, e.checkpoint]));
    for (const [type, checkpoint] of lastOfType) await app.rt.get(PLATFORM.ReadModels).waitFor(checkpoint, [type]);
    // the analytics projectors lag, and no request waits on them (docs/event-store.md#lagging-projectors): the
    // snapshot does, or a charge projected a moment late reads as /v1/usage moving without a request
    for (const p of analyticsProjectors) {
      const last = fresh.filter((e) => p.handles.has(e.type)).at(-1)?.checkpoint;
      if (last) await eventually(async () => reactorPast(app.rt.get(PLATFORM.ReadDb), p.name, last), `${p.name} caught up`);
    }
    seenUpTo = fresh.at(-1)?.checkpoint ?? seenUpTo;
    const own = [
      '/v1/agents?limit=100',
      '/v1/numbers?limit=100',
      '/v1/sip-trunks?limit=100',
      '/v1/api-keys',
      '/v1/sub-accounts?limit=100',
      '/v1/webhooks',
      '/v1/usage',
      '/v1/contacts?limit=100',
    ];
    const reads = [...own.map((p) => [key, p] as const), [foreignKey, '/v1/agents?limit=100'] as const, [foreignKey, '/v1/usage'] as const];
    const bodies = await Promise.all(reads.map(([k, p]) => app.call('GET', p, { key: k }).then((r) => stripVolatile(r.body))));
    return { head, lists: Object.fromEntries(reads.map(([k, p], i) => [`${k === key ? 'a' : 'b'} ${p}`, bodies[i]])) };
  };

  it('never answers 5xx, always answers errors in the error shape, and never writes on a refusal', async () => {
    let before: Awaited<ReturnType<typeof snapshot>> | null = null;
    let writesSent = 0;
    const opArb = fc.constantFrom(...ops).chain(requestFor);
    await fc.assert(
      fc.asyncProperty(opArb, (r) =>
        check(r).catch((e: Error) => {
          console.error(`  fuzz: request ${sent} failed: ${e.message.slice(0, 4000)}`);
          throw e;
        }),
      ),
      { numRuns: RUNS, endOnFailure: true, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
    async function check(r: Req) {
      const writes = r.method !== 'GET';
      const requestId = `fuzz_${sent}`;
      const compareLists = writes && writesSent++ % SNAPSHOT_EVERY === 0;
      if (compareLists && before === null) before = await snapshot();
      const head = writes ? await app.rt.store.headCheckpoint() : null;
      const res = await send(new URL(app.url), { ...r, headers: { ...r.headers, 'x-request-id': requestId } });
      sent++;
      byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
      const where = `${r.method} ${r.path.slice(0, 200)} -> ${res.status} ${res.text.slice(0, 300)}`;
      expect(res.status, where).to.be.below(500);
      // 431: node's HTTP parser refuses a request line or headers over 16 KB before the app sees them, with no body
      if (res.status >= 400 && res.status !== 431) {
        const body = JSON.parse(res.text) as Record<string, any>;
        expect(body.request_id, where).to.equal(requestId);
        if (body.error !== undefined) {
          expect(body.error, where).to.include.all.keys('message', 'code', 'type', 'details');
          expect(body.error.details, where).to.be.an('array');
        } else {
          expect(body.detail, where).to.be.a('string');
        }
      }
      if (!writes) return;
      if (res.status < 400) {
        before = null;
        return;
      } // it changed something on purpose; look again before the next comparison
      // no event of this request reached the store (workers may append their own meanwhile)
      const appended = await app.rt.store.readAll({ after: head!, maxCount: 10_000 });
      expect(
        appended.filter((e) => e.metadata.requestId === requestId || e.metadata.correlationId === requestId),
        where,
      ).to.deep.equal([]);
      if (!compareLists || before === null) return;
      const after = await snapshot();
      // a worker appended something meanwhile (a trunk provisioned, a delivery attempted): start again from here
      if (after.head !== before.head) {
        before = after;
        return;
      }
      const changed = Object.keys(after.lists).filter((k) => JSON.stringify(after.lists[k]) !== JSON.stringify(before!.lists[k]));
      // the names of the lists that moved, and how, in the message (a deep-equal diff of every list is unreadable)
      expect(
        changed.map((k) => `${k}: ${JSON.stringify(before!.lists[k]).slice(0, 600)} => ${JSON.stringify(after.lists[k]).slice(0, 600)}`),
        where,
      ).to.deep.equal([]);
    }
  });
});

/** Fields that move without any request (last-used stamps, rolling windows) are not part of the comparison. */
function stripVolatile(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripVolatile);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !/lastUsed|last_used|generatedAt|asOf|now/i.test(k))
      .map(([k, x]) => [k, stripVolatile(x)]),
  );
}
