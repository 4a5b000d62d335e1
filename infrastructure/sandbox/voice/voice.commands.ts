import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, publicUrl } from '../../config/config.js';
import { ADMIN_TOKEN_FILE } from '../../config/local-secrets.js';
import { HttpClient, readBody } from '../../http-client/client.js';
import type { SandboxCli } from '../shared/cli.js';

const E164 = /^\+[1-9]\d{1,14}$/;
/** how long the server has to answer one command */
const ANSWER_MS = 30_000;
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

type ServerOption = { server?: string };

/**
 * Where the running server is and the admin token it wants: `--server`, else PUBLIC_URL, else
 * http://localhost:PORT (the address the server prints at start); ADMIN_TOKEN, else the token the embedded
 * start keeps in DATA_DIR/admin-token (docs/security.md). The file is only read, never created here.
 */
function target(o: ServerOption): { base: string; token: string | null } {
  const cfg = loadConfig();
  const base = (o.server ?? publicUrl(cfg)).replace(/\/+$/, '');
  if (cfg.ADMIN_TOKEN) return { base, token: cfg.ADMIN_TOKEN };
  try {
    return { base, token: readFileSync(join(cfg.DATA_DIR, ADMIN_TOKEN_FILE), 'utf8').trim() || null };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { base, token: null };
    throw err;
  }
}

/** One request to the server's sandbox API; an error answer becomes an error with the server's message. */
async function request(o: ServerOption, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const { base, token } = target(o);
  // the operator's own server, wherever they point --server: any address is allowed (docs/security.md#outbound-requests)
  const client = new HttpClient({ destinations: 'any', maxSockets: 1 });
  let status: number;
  let text: string;
  try {
    const res = await client.request({
      method,
      url: `${base}${path}`,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: new TextEncoder().encode(JSON.stringify(body)) }),
      timeouts: { head: ANSWER_MS, total: ANSWER_MS },
    });
    status = res.status;
    text = Buffer.from(await readBody(res, { maxBytes: MAX_ANSWER_BYTES, over: 'truncate' })).toString('utf8');
  } catch (err) {
    throw new Error(
      `cannot reach the server at ${base} (${err instanceof Error ? err.message : String(err)}): ` +
        'sandbox calls live in the memory of the running server; start it, or name it with --server',
      { cause: err },
    );
  } finally {
    client.close();
  }
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: shown as it came
  }
  if (status < 200 || status > 299) {
    const e = parsed as { error?: { message?: string }; detail?: unknown } | null;
    const message = e?.error?.message ?? (typeof e?.detail === 'string' ? e.detail : text);
    throw new Error(`${method} ${path} answered ${status}: ${message}`);
  }
  return parsed;
}

const callPath = (callId: string, rest = '') => `/sandbox/calls/${encodeURIComponent(callId)}${rest}`;

/**
 * `cli sandbox call-inbound|call-from-pbx|call-say|call-digits|call-hangup|call-view` (docs/sandbox.md#voice). Unlike the other
 * sandbox commands these do not open the database: a sandbox call exists only in the memory of the server
 * process that holds it, so they go to the running server's sandbox API over HTTP with the admin token.
 */
export function sandboxVoiceCommands({ sandbox, print }: SandboxCli): void {
  const serverOption = ['--server <url>', 'the running server (default: PUBLIC_URL, else http://localhost:PORT)'] as const;

  sandbox
    .command('call-inbound')
    .description("a phone calls one of the platform's numbers; prints the call id")
    .requiredOption('--from <e164>', 'the caller (a persona number makes it follow that persona)')
    .requiredOption('--to <e164>', "the platform's number")
    .option(...serverOption)
    .action(async (o: { from: string; to: string } & ServerOption) => {
      for (const n of [o.from, o.to]) if (!E164.test(n)) throw new Error(`${n} is not an E.164 number such as +14155550123`);
      print(await request(o, 'POST', '/sandbox/calls/inbound', { from: o.from, to: o.to }));
    });
  sandbox
    .command('call-from-pbx')
    .description("a customer's PBX calls out through its SIP trunk; prints the call id")
    .requiredOption('--from <e164>', 'the caller id: a number of the account routed to the trunk')
    .requiredOption('--to <e164>', 'the number dialled (a persona number decides how it answers)')
    .option('--username <name>', "one of the trunk's termination credentials (with --password)")
    .option('--password <secret>', 'its password')
    .option('--source-address <ip>', "the PBX's address, one of the trunk's termination addresses")
    .option(...serverOption)
    .action(async (o: { from: string; to: string; username?: string; password?: string; sourceAddress?: string } & ServerOption) => {
      for (const n of [o.from, o.to]) if (!E164.test(n)) throw new Error(`${n} is not an E.164 number such as +14155550123`);
      if ((o.sourceAddress === undefined) === (o.username === undefined))
        throw new Error('give either --username and --password, or --source-address');
      const auth = o.sourceAddress ? { sourceAddress: o.sourceAddress } : { username: o.username, password: o.password };
      print(await request(o, 'POST', '/sandbox/calls/from-pbx', { from: o.from, to: o.to, ...auth }));
    });
  sandbox
    .command('call-say')
    .description('the far end of a call says something now (over the agent, it interrupts)')
    .argument('<callId>')
    .argument('<text...>')
    .option(...serverOption)
    .action(async (callId: string, text: string[], o: ServerOption) => {
      print(await request(o, 'POST', callPath(callId, '/say'), { text: text.join(' ') }));
    });
  sandbox
    .command('call-digits')
    .description('the far end of a call presses keys (0-9, * and #)')
    .argument('<callId>')
    .argument('<digits>')
    .option(...serverOption)
    .action(async (callId: string, digits: string, o: ServerOption) => {
      if (!/^[0-9*#]{1,32}$/.test(digits)) throw new Error('digits are keypad keys: 0-9, * and #, at most 32');
      print(await request(o, 'POST', callPath(callId, '/digits'), { digits }));
    });
  sandbox
    .command('call-hangup')
    .description('the far end of a call hangs up')
    .argument('<callId>')
    .option(...serverOption)
    .action(async (callId: string, o: ServerOption) => {
      print(await request(o, 'POST', callPath(callId, '/hangup')));
    });
  sandbox
    .command('call-view')
    .description('a call as its far end sees it; without a call id, the recent calls')
    .argument('[callId]')
    .option('--limit <n>', 'recent calls shown without a call id, 1-500 (default 20)', (v) => Number.parseInt(v, 10))
    .option('--agent-quiet-after <n>', 'with a call id: wait until the agent has made n playbacks and is quiet', (v) =>
      Number.parseInt(v, 10),
    )
    .option('--timeout <seconds>', 'how long --agent-quiet-after waits at most, 1-60 (default 10)', (v) => Number.parseInt(v, 10))
    .option(...serverOption)
    .action(async (callId: string | undefined, o: { limit?: number; agentQuietAfter?: number; timeout?: number } & ServerOption) => {
      const limit = Number.isInteger(o.limit) ? Math.min(Math.max(o.limit!, 1), 500) : 20;
      if (o.agentQuietAfter !== undefined && !(Number.isInteger(o.agentQuietAfter) && o.agentQuietAfter >= 0))
        throw new Error('--agent-quiet-after takes a number of playbacks, 0 or more');
      const wait =
        o.agentQuietAfter === undefined
          ? ''
          : `?agentQuietAfter=${o.agentQuietAfter}${o.timeout !== undefined ? `&timeout=${o.timeout}` : ''}`;
      print(await request(o, 'GET', callId ? callPath(callId, wait) : `/sandbox/calls?limit=${limit}`));
    });
}
