import { spawn, spawnSync } from 'node:child_process';

/**
 * Runs a walk-through of docs/ (docs/tour.md) as a person would, and checks the answers it shows
 * (docs/testing.md#the-tour). The document's conventions:
 *
 * - a fenced block `sh` is typed into the tour's terminal, in order; `sh terminal-2` (or any `terminal-N`) runs in
 *   another terminal, in the background, from where it stands in the document; `sh server` is how to start the
 *   server, which the test does itself with the variables that line sets;
 * - a comment `# → <answer>` right after a command is what that command prints: `<status> <json pattern>` for the
 *   tour's `api` helper, or a line of text; lines that follow it as `#   …` continue it;
 * - in a pattern, `…` stands for anything: a whole value, the rest of an object's members or of an array's items,
 *   or part of a string. Members a pattern names must be there with matching values; numbers, booleans and null
 *   must be equal.
 */

export type Block = { kind: 'main' | 'server' | 'background'; terminal: string; lines: string[]; startLine: number };
export type Step = { command: string; expectations: string[]; line: number; terminal: string };

export function parseBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let cur: Block | null = null;
  lines.forEach((line, i) => {
    const fence = /^```(\S*)\s*(\S*)/.exec(line);
    if (fence && cur === null) {
      if (fence[1] !== 'sh') {
        cur = { kind: 'main', terminal: 'ignored', lines: [], startLine: i + 1 };
        return;
      }
      const tag = fence[2] ?? '';
      const kind = tag === 'server' ? 'server' : /^terminal-\d+$/.test(tag) ? 'background' : 'main';
      cur = { kind, terminal: kind === 'background' ? tag : kind, lines: [], startLine: i + 2 };
      return;
    }
    if (line.startsWith('```') && cur !== null) {
      if (cur.terminal !== 'ignored') blocks.push(cur);
      cur = null;
      return;
    }
    if (cur !== null) cur.lines.push(line);
  });
  return blocks;
}

const syntaxComplete = (text: string) => spawnSync('bash', ['-n'], { input: text, encoding: 'utf8' }).status === 0;

/** Splits a block into its commands (a command ends where the text so far is complete shell) and their answers. */
export function stepsOf(block: Block): Step[] {
  const steps: Step[] = [];
  let pending: string[] = [];
  let pendingLine = 0;
  let last: Step | null = null;
  let inExpectation = false;
  block.lines.forEach((line, i) => {
    const lineNo = block.startLine + i;
    if (pending.length === 0) {
      const arrow = /^#\s*→\s?(.*)$/.exec(line);
      if (arrow && last) {
        last.expectations.push(arrow[1]!.trim());
        inExpectation = true;
        return;
      }
      if (inExpectation && /^#\s{3,}\S/.test(line) && last) {
        last.expectations[last.expectations.length - 1] += ` ${line.replace(/^#\s+/, '')}`;
        return;
      }
      inExpectation = false;
      if (/^\s*(#.*)?$/.test(line)) return;
      pendingLine = lineNo;
    }
    pending.push(line);
    const text = pending.join('\n');
    if (!line.endsWith('\\') && syntaxComplete(text)) {
      last = { command: text, expectations: [], line: pendingLine, terminal: block.terminal };
      steps.push(last);
      pending = [];
    }
  });
  if (pending.length > 0) throw new Error(`line ${pendingLine}: the command never ends:\n${pending.join('\n')}`);
  return steps;
}

/** The variables the `server` block sets on its start command (`A=1 B=2 npm start`). */
export function serverEnv(blocks: Block[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const b of blocks.filter((x) => x.kind === 'server')) {
    for (const line of b.lines) {
      for (const m of line.matchAll(/(?:^|\s)([A-Z_][A-Z0-9_]*)=(\S+)/g)) env[m[1]!] = m[2]!;
    }
  }
  return env;
}

// ---- answer patterns ----------------------------------------------------------------------------

type Pattern =
  | { k: 'any' }
  | { k: 'lit'; v: string | number | boolean | null }
  | { k: 'str'; parts: string[] }
  | { k: 'obj'; members: [string, Pattern][]; open: boolean }
  | { k: 'arr'; items: Pattern[] };

const ELLIPSIS = '…';

export function parsePattern(text: string): Pattern {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    throw new Error(`pattern: ${what} at ${i} in ${text}`);
  };
  const str = (): string => {
    let out = '';
    i++; // opening quote
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') {
        out += JSON.parse(`"${text.slice(i, i + (text[i + 1] === 'u' ? 6 : 2))}"`);
        i += text[i + 1] === 'u' ? 6 : 2;
      } else out += text[i++];
    }
    if (text[i] !== '"') fail('an unterminated string');
    i++;
    return out;
  };
  const value = (): Pattern => {
    ws();
    const c = text[i];
    if (c === ELLIPSIS) {
      i++;
      return { k: 'any' };
    }
    if (c === '{') {
      i++;
      const members: [string, Pattern][] = [];
      let open = false;
      ws();
      while (text[i] !== '}') {
        ws();
        if (text[i] === ELLIPSIS) {
          i++;
          open = true;
        } else {
          if (text[i] !== '"') fail('a member name');
          const key = str();
          ws();
          if (text[i] !== ':') fail('":"');
          i++;
          members.push([key, value()]);
        }
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== '}') fail('"," or "}"');
      }
      i++;
      return { k: 'obj', members, open };
    }
    if (c === '[') {
      i++;
      const items: Pattern[] = [];
      ws();
      while (text[i] !== ']') {
        items.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== ']') fail('"," or "]"');
        ws();
      }
      i++;
      return { k: 'arr', items };
    }
    if (c === '"') {
      const s = str();
      return s.includes(ELLIPSIS) ? { k: 'str', parts: s.split(ELLIPSIS) } : { k: 'lit', v: s };
    }
    const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i));
    if (!m) return fail('a value');
    i += m[0].length;
    return { k: 'lit', v: JSON.parse(m[0]) as number | boolean | null };
  };
  const p = value();
  ws();
  if (i !== text.length) fail('the end');
  return p;
}

const globMatch = (parts: string[], s: string): boolean => {
  const re = new RegExp(`^${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')}$`);
  return re.test(s);
};

/** Where `actual` departs from the pattern (a path and what was found), or null when it matches. */
export function mismatch(p: Pattern, actual: unknown, path = '$'): string | null {
  switch (p.k) {
    case 'any':
      return null;
    case 'lit':
      return actual === p.v ? null : `${path}: expected ${JSON.stringify(p.v)}, got ${JSON.stringify(actual)}`;
    case 'str':
      return typeof actual === 'string' && globMatch(p.parts, actual)
        ? null
        : `${path}: expected "${p.parts.join(ELLIPSIS)}", got ${JSON.stringify(actual)}`;
    case 'obj': {
      if (typeof actual !== 'object' || actual === null || Array.isArray(actual))
        return `${path}: expected an object, got ${JSON.stringify(actual)}`;
      const o = actual as Record<string, unknown>;
      for (const [key, sub] of p.members) {
        if (!(key in o)) return `${path}.${key}: missing`;
        const m = mismatch(sub, o[key], `${path}.${key}`);
        if (m) return m;
      }
      if (!p.open) {
        const extra = Object.keys(o).filter((k) => !p.members.some(([n]) => n === k));
        if (extra.length > 0) return `${path}: unexpected members ${extra.join(', ')} (end the pattern with …)`;
      }
      return null;
    }
    case 'arr': {
      if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
      const fitsFrom = (pi: number, ai: number): boolean => {
        if (pi === p.items.length) return ai === actual.length;
        const item = p.items[pi]!;
        if (item.k === 'any') {
          for (let n = ai; n <= actual.length; n++) if (fitsFrom(pi + 1, n)) return true;
          return false;
        }
        return ai < actual.length && mismatch(item, actual[ai], `${path}[${ai}]`) === null && fitsFrom(pi + 1, ai + 1);
      };
      if (fitsFrom(0, 0)) return null;
      const firstBad = p.items.findIndex((it, n) => it.k !== 'any' && mismatch(it, actual[n], `${path}[${n}]`) !== null);
      const item = firstBad >= 0 ? p.items[firstBad] : undefined;
      return item
        ? (mismatch(item, actual[firstBad], `${path}[${firstBad}]`) ?? `${path}: items do not fit`)
        : `${path}: ${actual.length} items do not fit the pattern`;
    }
  }
}

/** Checks one printed line against one `# →` answer: `<status> <json pattern>`, or a line of text with `…`. */
export function answerMismatch(expected: string, printed: string): string | null {
  const withStatus = /^(\d{3}) (.*)$/s.exec(expected);
  if (withStatus && /^[[{"]/.test(withStatus[2]!)) {
    const got = /^(\d{3}) (.*)$/s.exec(printed);
    if (!got) return `expected an answer "${expected.slice(0, 60)}…", got "${printed.slice(0, 200)}"`;
    if (got[1] !== withStatus[1]) return `expected status ${withStatus[1]}, got ${got[1]}: ${got[2]!.slice(0, 400)}`;
    let body: unknown;
    try {
      body = JSON.parse(got[2]!);
    } catch {
      return `the answer is not JSON: ${got[2]!.slice(0, 200)}`;
    }
    return mismatch(parsePattern(withStatus[2]!), body);
  }
  return globMatch(expected.split(ELLIPSIS), printed) ? null : `expected "${expected}", got "${printed.slice(0, 300)}"`;
}

/** The first printed line that fits the answer, or why none did (the closest try). */
export function findAnswer(expected: string, printed: string[]): { ok: true } | { ok: false; why: string } {
  let why = printed.length === 0 ? 'the command printed nothing' : '';
  for (const line of printed) {
    const m = answerMismatch(expected, line);
    if (m === null) return { ok: true };
    if (!why || /^\d{3} /.test(line)) why = m;
  }
  return { ok: false, why };
}

// ---- running --------------------------------------------------------------------------------------

const MARK = '@@tour-step';

/** The shell script that types the tour's commands, marking where each command's output starts. */
export function scriptOf(blocks: Block[], rewrite: (line: string) => string, logDir: string): { script: string; steps: Step[] } {
  const steps: Step[] = [];
  const out: string[] = ['set -eo pipefail', "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"];
  for (const b of blocks) {
    if (b.kind === 'server') continue;
    const own = stepsOf(b);
    if (b.kind === 'background') {
      const body = own.map((s) => rewrite(s.command)).join('\n');
      out.push(`( ${body}\n) > ${logDir}/${b.terminal}.log 2>&1 &`, 'sleep 0.5');
      steps.push(...own);
      continue;
    }
    for (const s of own) {
      out.push(`echo '${MARK} ${steps.length}'`, rewrite(s.command));
      steps.push(s);
    }
  }
  return { script: out.join('\n'), steps };
}

export function runScript(
  script: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      out += b.toString();
    });
    const t = setTimeout(() => {
      out += `\n(the tour took over ${timeoutMs} ms: stopped)\n`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(t);
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {}
      resolve({ code, out });
    });
  });
}

/** What each main-terminal step printed, by step index. */
export function outputsByStep(out: string): Map<number, string[]> {
  const byStep = new Map<number, string[]>();
  let cur = -1;
  for (const line of out.split('\n')) {
    const m = new RegExp(`^${MARK} (\\d+)$`).exec(line);
    if (m) {
      cur = Number(m[1]);
      byStep.set(cur, []);
    } else if (cur >= 0) byStep.get(cur)!.push(line);
  }
  return byStep;
}
