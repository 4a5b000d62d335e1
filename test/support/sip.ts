import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toRate } from '../../infrastructure/media/audio.js';
import { EspeakTextToSpeech } from '../../infrastructure/speech/espeak-tts.js';
import { decodeWav, encodeWav } from '../../infrastructure/speech/wav.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from './http.js';

/** A port free on 127.0.0.1 for both UDP and TCP (SIP listens on both). */
export async function freeSipPort(): Promise<number> {
  for (;;) {
    const tcp = createServer();
    const port = await new Promise<number>((resolve) =>
      tcp.listen(0, '127.0.0.1', () => resolve((tcp.address() as { port: number }).port)),
    );
    const udp = createSocket('udp4');
    const ok = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((r) => tcp.close(() => r()));
    if (ok) {
      await new Promise<void>((r) => udp.close(() => r()));
      return port;
    }
    udp.close();
  }
}

export const hasBinary = (name: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** A platform in live mode with the SIP engine on free ports, its carriers given as `SIP_CARRIERS`. */
export async function startSipApp(o: { carriers: unknown[]; env?: Record<string, string> }): Promise<{ app: TestApp; sipPort: number }> {
  const sipPort = await freeSipPort();
  const rtpBase = 20_000 + 2 * Math.floor(Math.random() * 10_000);
  const app = await startTestApp({
    PROVIDER_MODE: 'live',
    SIP_PUBLIC_ADDRESS: '127.0.0.1',
    SIP_ADDRESS: '127.0.0.1',
    SIP_PORT: String(sipPort),
    RTP_PORT_MIN: String(rtpBase),
    RTP_PORT_MAX: String(rtpBase + 400),
    SIP_CARRIERS: JSON.stringify(o.carriers),
    ...(o.env ?? {}),
  });
  return { app, sipPort };
}

/** An account with credit, an agent and a number imported from `carrierId`. */
export async function sipLine(app: TestApp, carrierId: string, phoneNumber: string, agent: Record<string, unknown>) {
  const { accountId, apiKey: key } = await app.newAccount('SIP test');
  const a = await app.call('POST', '/v1/agents', { key, body: { name: 'SIP agent', ...agent } });
  if (a.status !== 200) throw new Error(`agent: ${a.status} ${JSON.stringify(a.body)}`);
  const n = await app.call('POST', `/admin/accounts/${accountId}/numbers/import`, {
    key: ADMIN_TOKEN,
    body: { phoneNumber, carrierId, agentId: a.body.id },
  });
  if (n.status !== 200) throw new Error(`import: ${n.status} ${JSON.stringify(n.body)}`);
  return { accountId, key, agentId: a.body.id as string, numberId: n.body.id as string };
}

/** espeak-ng's rendering of `text` at a phone line's 8 kHz, as the platform renders it for a SIP call. */
export async function lineSpeech(text: string, voice = 'sandbox-aria'): Promise<Int16Array> {
  const pcm = await new EspeakTextToSpeech({ path: 'espeak-ng' }).synthesize(text, { voice });
  return toRate(pcm, 8000);
}

export function writeLineWav(path: string, samples: Int16Array): void {
  writeFileSync(path, encodeWav({ samples, sampleRate: 8000 }));
}

/**
 * Where a gateway and the phone behind it listen: loopback addresses other than the platform's 127.0.0.1 and each
 * other's, because the `sip` package takes a request URI on its own address for one of its flow tokens
 * (docs/sip.md#how-it-is-built).
 */
export const GATEWAY_HOST = '127.0.0.2';
export const CALLEE_HOST = '127.0.0.3';

/**
 * Debian's baresip as a phone (docs/testing.md#sip-tests): `aufile` plays a WAV as its microphone, `sndfile` keeps
 * what it hears (`dump-…-dec.wav`), answering automatically when `answer` is set.
 */
export class Baresip {
  readonly dir: string;
  private proc: ChildProcess | null = null;
  readonly output: string[] = [];

  constructor(readonly o: { port: number; microphone: Int16Array; answer?: boolean; user?: string; host?: string }) {
    this.dir = mkdtempSync(join(tmpdir(), 'baresip-'));
    mkdirSync(join(this.dir, 'dumps'));
    const mic = join(this.dir, 'microphone.wav');
    writeLineWav(mic, o.microphone);
    writeFileSync(
      join(this.dir, 'config'),
      [
        'module_path /usr/lib/baresip/modules',
        `sip_listen ${o.host ?? '127.0.0.1'}:${o.port}`,
        `audio_source aufile,${mic}`,
        'audio_player aubridge,nowhere',
        'audio_alert aubridge,nowhere',
        'audio_srate 8000',
        'audio_channels 1',
        `snd_path ${join(this.dir, 'dumps')}`,
        'module_tmp uuid.so',
        'module_tmp account.so',
        'module stdio.so',
        'module g711.so',
        'module aufile.so',
        'module aubridge.so',
        'module sndfile.so',
        'module_app menu.so',
        'rtp_ports 30000-39998',
        'jitter_buffer_delay 2-10',
        '',
      ].join('\n'),
    );
    const user = o.user ?? 'phone';
    writeFileSync(
      join(this.dir, 'accounts'),
      `<sip:${user}@${o.host ?? '127.0.0.1'}:${o.port}>;regint=0;audio_codecs=PCMU,PCMA${o.answer ? ';answermode=auto' : ''}\n`,
    );
  }

  /** Starts it; `dial` is a URI it calls at once. */
  start(dial?: string): void {
    const args = ['-f', this.dir, ...(dial ? ['-e', `/dial ${dial}`] : [])];
    this.proc = spawn('baresip', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout!.on('data', (b: Buffer) => this.output.push(b.toString()));
    this.proc.stderr!.on('data', (b: Buffer) => this.output.push(b.toString()));
  }

  /** a command on its console, e.g. `/hangup` */
  command(line: string): void {
    this.proc?.stdin?.write(`${line}\n`);
  }

  get log(): string {
    return this.output.join('');
  }

  /** What it heard on its last call, at 8 kHz (null before it has written the file). */
  heard(): Int16Array | null {
    const dumps = join(this.dir, 'dumps');
    if (!existsSync(dumps)) return null;
    const dec = readdirSync(dumps).filter((f) => f.endsWith('-dec.wav'));
    if (dec.length === 0) return null;
    const pcm = decodeWav(readFileSync(join(dumps, dec.sort().at(-1)!)));
    return toRate(pcm, 8000);
  }

  /**
   * What it has heard so far on its last call, at 8 kHz, while the call goes on: its recorder writes the WAV as it
   * goes and fills in the data chunk's size only at the end, so the size is read from the file's length here.
   */
  hearing(): Int16Array | null {
    const dumps = join(this.dir, 'dumps');
    if (!existsSync(dumps)) return null;
    const dec = readdirSync(dumps).filter((f) => f.endsWith('-dec.wav'));
    if (dec.length === 0) return null;
    const bytes = readFileSync(join(dumps, dec.sort().at(-1)!));
    const data = bytes.indexOf('data', 12, 'latin1');
    if (data < 0 || bytes.length < data + 8) return null;
    bytes.writeUInt32LE(bytes.length - data - 8, data + 4);
    return toRate(decodeWav(bytes), 8000);
  }

  /** Stops it and removes its directory (kept with SIP_TEST_KEEP=1, to listen to its recordings). */
  async stop(): Promise<void> {
    await this.quit();
    if (!process.env.SIP_TEST_KEEP) rmSync(this.dir, { recursive: true, force: true });
  }

  private async quit(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    this.command('/quit');
    p.stdin?.end();
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        p.kill('SIGKILL');
        resolve();
      }, 5000);
      p.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      p.kill('SIGTERM');
    });
  }
}
