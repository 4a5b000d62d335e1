import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { WebSocket } from 'ws';
import { decodeWav, resample } from '../../infrastructure/speech/wav.js';
import type { TestApp } from './http.js';
import { eventually } from './numbers.js';

/** The web-call socket's address on a test app (docs/calls.md#the-socket). */
export const socketUrl = (app: TestApp) => `${app.url.replace(/^http/, 'ws')}/v1/calls/web/connect`;

const run = promisify(execFile);

/**
 * `text` as espeak-ng says it in its plain US English voice at 150 words a minute (the one pocketsphinx's US model
 * recognises best of those tried, docs/speech.md#pocketsphinx), as a WAV file's bytes.
 */
export async function spokenWav(text: string): Promise<Buffer> {
  const { stdout } = await run('espeak-ng', ['--stdout', '-v', 'en-us', '-s', '150', text], { encoding: 'buffer', maxBuffer: 16 << 20 });
  return stdout;
}

/** `text` spoken (see `spokenWav`) as the socket carries it: 16 kHz 16-bit mono samples. */
export async function spoken(text: string): Promise<Int16Array> {
  return resample(decodeWav(await spokenWav(text)), 16_000).samples;
}

/** `ms` of digital silence at 16 kHz. */
export const silence = (ms: number) => new Int16Array(Math.round(ms * 16));

export const pcmBytes = (samples: Int16Array) => {
  const b = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) b.writeInt16LE(samples[i]!, i * 2);
  return b;
};

/** A page on a web call, as the socket sees it: every text message kept in order, audio frames counted. */
export class PageSocket {
  readonly messages: any[] = [];
  audioFrames = 0;
  audioBytes = 0;
  /** audio frames received since the last `speech` message */
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly ws: WebSocket;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (data, isBinary) => {
      const bytes = data as Buffer;
      if (isBinary) {
        this.audioFrames++;
        this.audioBytes += bytes.length;
      } else this.messages.push(JSON.parse(bytes.toString('utf8')));
    });
    this.closed = new Promise((resolve) => this.ws.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })));
    this.ws.on('error', () => undefined);
  }

  opened(): Promise<void> {
    if (this.ws.readyState === WebSocket.OPEN) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
  }

  sendJson(m: unknown): void {
    this.ws.send(JSON.stringify(m));
  }

  sendRaw(data: string | Buffer): void {
    this.ws.send(data);
  }

  /** microphone audio, in 20 ms frames (sent at once: the server cuts utterances by samples, not by the clock) */
  sendAudio(samples: Int16Array): void {
    for (let at = 0; at < samples.length; at += 320) this.ws.send(pcmBytes(samples.subarray(at, at + 320)), { binary: true });
  }

  /** the first message that `match` accepts (speech is recognised and rendered for real: on a busy machine, slowly) */
  message(match: (m: any) => boolean, what: string, timeoutMs = 90_000): Promise<any> {
    return eventually(async () => this.messages.find(match), what, timeoutMs);
  }

  close(): void {
    this.ws.close();
  }
}

/** Creates a web call for `agentId` and joins it over the socket; answers the page and the call id. */
export async function joinWebCall(app: TestApp, key: string, agentId: string): Promise<{ page: PageSocket; callId: string }> {
  const r = await app.call('POST', '/v1/calls/web', { key, body: { agentId } });
  if (r.status !== 200) throw new Error(`web call: ${r.status} ${JSON.stringify(r.body)}`);
  const page = new PageSocket(socketUrl(app));
  await page.opened();
  page.sendJson({ type: 'join', accessToken: r.body.accessToken });
  await page.message((m) => m.type === 'joined' || m.type === 'error', 'the join answered');
  if (page.messages[0]?.type !== 'joined') throw new Error(`join refused: ${JSON.stringify(page.messages[0])}`);
  return { page, callId: r.body.callId };
}
