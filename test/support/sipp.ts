import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The committed SIPp scenarios (docs/testing.md#sip-tests). */
export const SCENARIOS = fileURLToPath(new URL('../sip/scenarios/', import.meta.url));
/** SIPp's own RFC 4733 recordings (Debian's sip-tester), one per key */
export const SIPP_PCAPS = '/usr/share/sip-tester';

export type SippOptions = Readonly<{
  /** a file of test/sip/scenarios/ */
  scenario: string;
  /** where it sends (a UAC) — `host:port` — or nothing (a UAS, it waits) */
  target?: string;
  /** the address and port it listens on */
  ip: string;
  port: number;
  /** its RTP port (its SDP names it) */
  mediaPort?: number;
  /** the user part it calls (`[service]`) */
  service?: string;
  /** scenario variables: `[key]` in the XML (`-key name value`) */
  keys?: Readonly<Record<string, string>>;
  /** echo the RTP it receives back to its sender (`-rtp_echo`) */
  rtpEcho?: boolean;
  /** calls to place (a UAC) or take (a UAS) before it exits; 1 by default */
  calls?: number;
  /** how many at once (a UAC: `-l`), and how many a second it starts (`-r`) */
  limit?: number;
  rate?: number;
  /** the longest it may run, in seconds (`-timeout`): a scenario stuck waiting fails */
  timeoutS?: number;
  extra?: readonly string[];
}>;

export type SippResult = Readonly<{
  /** SIPp's exit code: 0 when every call went through its scenario, 1 when one failed */
  code: number | null;
  /** every SIP message it sent and received */
  messages: string;
  /** what it says went wrong (unexpected messages, timeouts) */
  errors: string;
  output: string;
}>;

/**
 * Debian's SIPp (sip-tester) running one of the committed scenarios (docs/testing.md#sip-tests): `start` returns at
 * once; `done` resolves with its exit code and its message and error traces once it exits. The scenario decides
 * what passes: an unexpected message or a missing one fails it (exit code 1).
 */
export class Sipp {
  private proc: ChildProcess | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'sipp-'));
  private output = '';
  readonly done: Promise<SippResult>;
  private resolveDone!: (r: SippResult) => void;

  constructor(readonly o: SippOptions) {
    this.done = new Promise((r) => {
      this.resolveDone = r;
    });
  }

  start(): this {
    const o = this.o;
    const args = [
      ...(o.target ? [o.target] : []),
      '-sf',
      join(SCENARIOS, o.scenario),
      '-i',
      o.ip,
      '-p',
      String(o.port),
      '-m',
      String(o.calls ?? 1),
      '-timeout',
      `${o.timeoutS ?? 120}s`,
      '-timeout_error',
      '-nostdin',
      '-trace_msg',
      '-message_file',
      join(this.dir, 'messages.log'),
      '-trace_err',
      '-error_file',
      join(this.dir, 'errors.log'),
      ...(o.mediaPort ? ['-mi', o.ip, '-mp', String(o.mediaPort)] : []),
      ...(o.service ? ['-s', o.service] : []),
      ...(o.rtpEcho ? ['-rtp_echo'] : []),
      ...(o.limit ? ['-l', String(o.limit)] : []),
      ...(o.rate ? ['-r', String(o.rate)] : []),
      ...Object.entries(o.keys ?? {}).flatMap(([k, v]) => ['-key', k, v]),
      ...(o.extra ?? []),
    ];
    this.proc = spawn('sipp', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TERM: 'dumb' } });
    this.proc.stdout!.on('data', (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-20_000);
    });
    this.proc.stderr!.on('data', (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-20_000);
    });
    this.proc.once('exit', (code) => {
      this.resolveDone({ code, messages: this.read('messages.log'), errors: this.read('errors.log'), output: this.output });
      if (!process.env.SIP_TEST_KEEP) rmSync(this.dir, { recursive: true, force: true });
    });
    return this;
  }

  /** the messages so far (while it runs) */
  get messages(): string {
    return this.read('messages.log');
  }

  /** Stops it (a UAS that is no longer wanted). */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    p.kill('SIGTERM');
    await Promise.race([this.done, new Promise((r) => setTimeout(r, 5000))]);
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  }

  private read(file: string): string {
    const path = join(this.dir, file);
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  }
}

/** What a failed SIPp run says, for an assertion's message. */
export const sippReport = (r: SippResult) =>
  `SIPp exit ${r.code}\n--- errors\n${r.errors.slice(-4000)}\n--- output\n${r.output.slice(-2000)}\n--- messages\n${r.messages.slice(-6000)}`;
