import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { type Pcm, SpeechUnavailableError, type TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import { ESPEAK_VOICES, EspeakTextToSpeech } from '../../infrastructure/speech/espeak-tts.js';
import { textToSpeechFromConfig } from '../../infrastructure/speech/module-support.js';
import { OpenAiTextToSpeech } from '../../infrastructure/speech/openai-tts.js';
import { type RecordingTurn, renderRecording } from '../../infrastructure/speech/recording.js';
import { decodeWav, encodeWav, resample, WavFormatError } from '../../infrastructure/speech/wav.js';

const ESPEAK = 'espeak-ng';
const GREETING = 'Hello, thank you for calling. How can I help you today?';

/** A WAV built byte by byte here, independently of `encodeWav`; `streamed` writes the sizes of a stream (0xffffffff). */
function wavBytes(o: { rate: number; channels: number[][]; streamed?: boolean; extraChunk?: boolean }): Buffer {
  const frames = o.channels[0]!.length;
  const data = Buffer.alloc(frames * o.channels.length * 2);
  for (let f = 0; f < frames; f++) {
    for (let c = 0; c < o.channels.length; c++) data.writeInt16LE(o.channels[c]![f]!, (f * o.channels.length + c) * 2);
  }
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8);
  fmt.writeUInt16LE(o.channels.length, 10);
  fmt.writeUInt32LE(o.rate, 12);
  fmt.writeUInt32LE(o.rate * 2 * o.channels.length, 16);
  fmt.writeUInt16LE(2 * o.channels.length, 20);
  fmt.writeUInt16LE(16, 22);
  // an odd-sized LIST chunk, padded to even, between fmt and data
  const list = o.extraChunk
    ? Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.from([0])])
    : Buffer.alloc(0);
  const dataHead = Buffer.alloc(8);
  dataHead.write('data', 0, 'ascii');
  dataHead.writeUInt32LE(o.streamed ? 0xffffffff : data.length, 4);
  const head = Buffer.alloc(12);
  head.write('RIFF', 0, 'ascii');
  head.writeUInt32LE(o.streamed ? 0xffffffff : 4 + fmt.length + list.length + 8 + data.length, 4);
  head.write('WAVE', 8, 'ascii');
  return Buffer.concat([head, fmt, list, dataHead, data]);
}

const rms = (s: Int16Array, from = 0, to = s.length) => {
  let sum = 0;
  for (let i = from; i < to; i++) sum += s[i]! ** 2;
  return to > from ? Math.sqrt(sum / (to - from)) : 0;
};

/** Median fundamental frequency of the loud frames, by autocorrelation (60–400 Hz). */
function medianPitchHz(s: Int16Array, rate: number, from = 0, to = s.length): number {
  const win = Math.round(rate * 0.04);
  const found: number[] = [];
  for (let o = from; o + win + rate / 60 < to; o += win / 2) {
    if (rms(s, o, o + win) < 1500) continue;
    let best = 0;
    let bestLag = 0;
    for (let lag = Math.floor(rate / 400); lag < rate / 60; lag++) {
      let c = 0;
      for (let i = 0; i < win; i++) c += s[o + i]! * s[o + i + lag]!;
      if (c > best) {
        best = c;
        bestLag = lag;
      }
    }
    if (bestLag > 0) found.push(rate / bestLag);
  }
  found.sort((a, b) => a - b);
  return found[found.length >> 1] ?? 0;
}

const seconds = (p: Pcm) => p.samples.length / p.sampleRate;

const sine = (rate: number, hz: number, s: number) =>
  Int16Array.from({ length: Math.round(rate * s) }, (_, i) => Math.round(12000 * Math.sin((2 * Math.PI * hz * i) / rate)));

const zeroCrossings = (s: Int16Array) => s.reduce((n, v, i) => (i > 0 && s[i - 1]! < 0 !== v < 0 ? n + 1 : n), 0);

/** Fake engines for the recording's arithmetic (the real engine is tested below). */
class ConstantSpeech implements TextToSpeechPort {
  readonly calls: { text: string; voice: string }[] = [];
  constructor(private readonly level: (voice: string) => number) {}
  async synthesize(text: string, o: { voice: string }): Promise<Pcm> {
    this.calls.push({ text, voice: o.voice });
    return { samples: new Int16Array(1600).fill(this.level(o.voice)), sampleRate: 16000 }; // 100 ms a turn
  }
  describe() {
    return 'constant';
  }
}

describe('speech synthesis (infrastructure/speech)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'speech-spec-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('WAV', () => {
    it('round-trips 16-bit mono samples and the rate through encode and decode', () => {
      const samples = Int16Array.from({ length: 1001 }, (_, i) => ((i * 7919) % 65536) - 32768);
      const wav = encodeWav({ samples, sampleRate: 8000 });
      expect(wav.length).to.equal(44 + 2 * 1001);
      const back = decodeWav(wav);
      expect(back.sampleRate).to.equal(8000);
      expect(Array.from(back.samples)).to.deep.equal(Array.from(samples));
    });

    it('reads a streamed WAV whose sizes are unknown, skipping other chunks and a cut-off last byte', () => {
      const bytes = wavBytes({ rate: 22050, channels: [[100, -200, 300]], streamed: true, extraChunk: true });
      const pcm = decodeWav(Buffer.concat([bytes, Buffer.from([7])]));
      expect(pcm.sampleRate).to.equal(22050);
      expect(Array.from(pcm.samples)).to.deep.equal([100, -200, 300]);
    });

    it('downmixes stereo to the channels’ mean', () => {
      const pcm = decodeWav(
        wavBytes({
          rate: 24000,
          channels: [
            [1000, -32768, 5],
            [3000, -32768, 6],
          ],
        }),
      );
      expect(Array.from(pcm.samples)).to.deep.equal([2000, -32768, 6]);
    });

    it('refuses what is not 16-bit PCM WAV', () => {
      expect(() => decodeWav(Buffer.from('ID3 this is an mp3'))).to.throw(WavFormatError, 'not a RIFF/WAVE file');
      const eightBit = wavBytes({ rate: 8000, channels: [[1, 2]] });
      eightBit.writeUInt16LE(8, 12 + 22);
      expect(() => decodeWav(eightBit)).to.throw(WavFormatError, '8 bits');
      const float = wavBytes({ rate: 8000, channels: [[1, 2]] });
      float.writeUInt16LE(3, 12 + 8);
      expect(() => decodeWav(float)).to.throw(WavFormatError, 'encoding 0x3');
    });

    it('resamples linearly, keeping the duration and the pitch', () => {
      const down = resample({ samples: sine(22050, 440, 1), sampleRate: 22050 }, 16000);
      expect(down.sampleRate).to.equal(16000);
      expect(down.samples.length).to.equal(16000);
      expect(zeroCrossings(down.samples)).to.be.within(878, 882); // 440 Hz: two crossings a period
      const up = resample({ samples: sine(8000, 200, 0.5), sampleRate: 8000 }, 24000);
      expect(up.samples.length).to.equal(12000);
      expect(zeroCrossings(up.samples)).to.be.within(198, 202);
      // between two input samples, the straight line between them
      expect(Array.from(resample({ samples: Int16Array.from([0, 100]), sampleRate: 1 }, 4).samples)).to.deep.equal([
        0, 25, 50, 75, 100, 100, 100, 100,
      ]);
    });
  });

  describe('espeak-ng adapter', () => {
    const tts = new EspeakTextToSpeech({ path: ESPEAK });

    it('renders real speech: loud enough, and longer for more words', async () => {
      const short = await tts.synthesize('Hello there.', { voice: 'sandbox-aria' });
      const long = await tts.synthesize(`${GREETING} I can book a table for two at seven tonight.`, { voice: 'sandbox-aria' });
      expect(short.sampleRate).to.equal(22050);
      expect(rms(long.samples)).to.be.greaterThan(1000);
      expect(seconds(short)).to.be.within(0.4, 3);
      expect(seconds(long)).to.be.greaterThan(3 * seconds(short));
    });

    it('speaks slower at fewer words a minute', async () => {
      const slow = await tts.synthesize(GREETING, { voice: 'sandbox-miles', wordsPerMinute: 100 });
      const fast = await tts.synthesize(GREETING, { voice: 'sandbox-miles', wordsPerMinute: 300 });
      expect(seconds(slow)).to.be.greaterThan(2 * seconds(fast));
    });

    it('maps the catalogue voices onto distinct espeak-ng voices: Aria is pitched as a woman, Miles as a man', async () => {
      const renders = await Promise.all(Object.keys(ESPEAK_VOICES).map((voice) => tts.synthesize(GREETING, { voice })));
      const distinct = new Set(renders.map((p) => Buffer.from(p.samples.buffer).toString('base64')));
      expect(distinct.size).to.equal(5);
      const [aria, miles] = renders;
      expect(medianPitchHz(aria!.samples, 22050)).to.be.greaterThan(160);
      expect(medianPitchHz(miles!.samples, 22050)).to.be.lessThan(130);
      const sol = medianPitchHz(renders[4]!.samples, 22050);
      expect(sol).to.be.within(125, 165);
    });

    it('speaks an unknown voice id as the default voice (Aria)', async () => {
      const unknown = await tts.synthesize('Good morning.', { voice: 'voice-that-does-not-exist' });
      const aria = await tts.synthesize('Good morning.', { voice: 'sandbox-aria' });
      expect(Array.from(unknown.samples)).to.deep.equal(Array.from(aria.samples));
    });

    it('gives the text on standard input, so a text that looks like an option is spoken', async () => {
      const pcm = await tts.synthesize('--version; $(echo hi) `id`', { voice: 'sandbox-aria' });
      expect(rms(pcm.samples)).to.be.greaterThan(1000);
    });

    it('returns no audio for an empty text', async () => {
      expect((await tts.synthesize('  \n ', { voice: 'sandbox-aria' })).samples.length).to.equal(0);
    });

    it('describes itself with the installed version', async () => {
      await tts.synthesize('Hi.', { voice: 'sandbox-aria' });
      const installed = /text-to-speech:\s*(\S+)/.exec(execFileSync(ESPEAK, ['--version'], { encoding: 'utf8' }))![1];
      expect(tts.describe()).to.equal(`espeak-ng ${installed}`);
    });

    it('ESPEAK_PATH=/nonexistent: SpeechUnavailableError naming the fix', async () => {
      const missing = textToSpeechFromConfig({
        TTS_PROVIDER: 'espeak',
        ESPEAK_PATH: '/nonexistent',
        TTS_BASE_URL: 'https://api.openai.com/v1',
        TTS_API_KEY: undefined,
        TTS_MODEL: 'gpt-4o-mini-tts',
      });
      const err = await missing.synthesize('Hello.', { voice: 'sandbox-aria' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(SpeechUnavailableError);
      expect((err as Error).message).to.equal(
        'espeak-ng is not installed (ESPEAK_PATH=/nonexistent): apt-get install espeak-ng, or set TTS_PROVIDER=openai',
      );
      expect(missing.describe()).to.equal('espeak-ng');
    });

    /** A stand-in engine: a shell script that logs its arguments, standard input and how many run at once. */
    function fakeEngine(name: string, body: string): string {
      const path = join(dir, name);
      writeFileSync(
        path,
        `#!/bin/sh\nif [ "$1" = --version ]; then echo 'eSpeak NG text-to-speech: 9.99-test  Data at: /x'; exit 0; fi\n${body}\n`,
      );
      chmodSync(path, 0o755);
      return path;
    }

    it('runs at most two processes at once, passing the text verbatim on standard input', async () => {
      const wav = join(dir, 'tone.wav');
      writeFileSync(wav, wavBytes({ rate: 22050, channels: [[1, 2, 3]] }));
      const log = join(dir, 'runs.log');
      const path = fakeEngine(
        'fake-espeak',
        `echo start >> ${log}\nprintf '%s ' "$@" > ${dir}/args.txt\ncat > ${dir}/input.txt\nsleep 0.15\necho end >> ${log}\ncat ${wav}`,
      );
      const fake = new EspeakTextToSpeech({ path });
      const text = `O'Brien said "$(rm -rf ~)" & left; -v en`;
      const all = await Promise.all(Array.from({ length: 5 }, () => fake.synthesize(text, { voice: 'sandbox-isla', wordsPerMinute: 140 })));
      expect(all.map((p) => Array.from(p.samples))).to.deep.equal(Array(5).fill([1, 2, 3]));
      let running = 0;
      let most = 0;
      for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
        running += line === 'start' ? 1 : -1;
        most = Math.max(most, running);
      }
      expect(most).to.equal(2);
      expect(readFileSync(join(dir, 'input.txt'), 'utf8')).to.equal(text);
      expect(readFileSync(join(dir, 'args.txt'), 'utf8').trim()).to.equal('--stdout --stdin -b 1 -v en-gb-x-rp+f4 -s 140');
      expect(fake.describe()).to.equal('espeak-ng 9.99-test');
    });

    it('a failing run is SpeechUnavailableError with its status and standard error', async () => {
      const fake = new EspeakTextToSpeech({ path: fakeEngine('failing-espeak', 'echo "voice data missing" >&2\nexit 3') });
      const err = await fake.synthesize('Hello.', { voice: 'sandbox-aria' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(SpeechUnavailableError);
      expect((err as Error).message).to.contain('exited with status 3: voice data missing');
    });

    it('kills a run that takes longer than its timeout', async () => {
      const fake = new EspeakTextToSpeech({ path: fakeEngine('hanging-espeak', 'exec sleep 10'), timeoutMs: 200 });
      const started = Date.now();
      const err = await fake.synthesize('Hello.', { voice: 'sandbox-aria' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(SpeechUnavailableError);
      expect((err as Error).message).to.contain('did not finish within 200 ms');
      expect(Date.now() - started).to.be.lessThan(2000);
    });
  });

  describe('OpenAI speech adapter', () => {
    type Seen = { method: string; url: string; auth: string | undefined; body: Record<string, unknown> };
    let server: Server;
    let baseUrl: string;
    const seen: Seen[] = [];
    let answer: (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => void;
    const stereo = wavBytes({
      rate: 24000,
      channels: [
        [1000, 2000, -4000],
        [3000, 2000, 0],
      ],
      streamed: true,
    });

    /** The documented contract of POST /v1/audio/speech, as far as this adapter uses it. */
    const contract = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => {
      const refuse = (status: number, message: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
      };
      if (req.headers.authorization !== 'Bearer sk-test') return refuse(401, 'Incorrect API key provided: sk-wrong.');
      if (req.method !== 'POST' || req.url !== '/v1/audio/speech') return refuse(404, 'Not found');
      if (!['gpt-4o-mini-tts', 'tts-1'].includes(body.model as string)) return refuse(404, `The model ${body.model} does not exist`);
      if (!['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer'].includes(body.voice as string)) return refuse(400, 'Invalid voice');
      if (typeof body.input !== 'string' || body.input === '') return refuse(400, 'input is required');
      if (body.response_format !== 'wav') return refuse(400, 'this test server answers wav only');
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.end(stereo);
    };

    before(async () => {
      server = createServer((req, res) => {
        let raw = '';
        req.on('data', (c) => {
          raw += c;
        });
        req.on('end', () => {
          const body = JSON.parse(raw || '{}') as Record<string, unknown>;
          seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
          answer(req, res, body);
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    after(() => {
      server.closeAllConnections();
      server.close();
    });
    beforeEach(() => {
      seen.length = 0;
      answer = contract;
    });

    const client = (o: { apiKey?: string; timeoutMs?: number } = {}) =>
      new OpenAiTextToSpeech({
        baseUrl,
        apiKey: o.apiKey ?? 'sk-test',
        model: 'gpt-4o-mini-tts',
        ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
      });

    it('POSTs model, input, the mapped voice and wav format with the bearer key, and decodes the WAV answer', async () => {
      const pcm = await client().synthesize(GREETING, { voice: 'sandbox-miles' });
      expect(seen).to.have.length(1);
      expect(seen[0]).to.deep.equal({
        method: 'POST',
        url: '/v1/audio/speech',
        auth: 'Bearer sk-test',
        body: { model: 'gpt-4o-mini-tts', input: GREETING, voice: 'onyx', response_format: 'wav' },
      });
      expect(pcm.sampleRate).to.equal(24000);
      expect(Array.from(pcm.samples)).to.deep.equal([2000, 2000, -2000]);
    });

    it('maps each catalogue voice to a different API voice, and an unknown id to the default', async () => {
      const tts = client();
      for (const voice of ['sandbox-aria', 'sandbox-miles', 'sandbox-isla', 'sandbox-arjun', 'sandbox-sol', 'nobody']) {
        await tts.synthesize('Hi.', { voice });
      }
      const voices = seen.map((s) => s.body.voice);
      expect(new Set(voices.slice(0, 5)).size).to.equal(5);
      expect(voices[5]).to.equal(voices[0]);
    });

    it('a 401 is SpeechUnavailableError with the status, the API’s message and the key to check', async () => {
      const err = await client({ apiKey: 'sk-wrong' })
        .synthesize('Hi.', { voice: 'sandbox-aria' })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(SpeechUnavailableError);
      expect((err as Error).message).to.match(/answered 401 \(check TTS_API_KEY\): Incorrect API key provided/);
    });

    it('a 500 is SpeechUnavailableError with the status and the start of the body', async () => {
      answer = (_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`upstream exploded\n${'x'.repeat(5000)}`);
      };
      const err = await client()
        .synthesize('Hi.', { voice: 'sandbox-aria' })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(SpeechUnavailableError);
      const message = (err as Error).message;
      expect(message).to.contain('answered 500: upstream exploded x');
      expect(message.length).to.be.lessThan(400);
    });

    it('an answer that is not WAV, an unreachable server, a silent server: SpeechUnavailableError', async () => {
      answer = (_req, res) => res.end('ID3 mp3 bytes');
      const notWav = await client()
        .synthesize('Hi.', { voice: 'sandbox-aria' })
        .catch((e: unknown) => e);
      expect((notWav as Error).message).to.contain('not a 16-bit WAV');

      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const unreachable = await new OpenAiTextToSpeech({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'tts-1' })
        .synthesize('Hi.', { voice: 'sandbox-aria' })
        .catch((e: unknown) => e);
      expect(unreachable).to.be.instanceOf(SpeechUnavailableError);
      expect((unreachable as Error).message).to.contain('could not be reached (ECONNREFUSED)');

      answer = () => {}; // never answers
      const silent = await client({ timeoutMs: 200 })
        .synthesize('Hi.', { voice: 'sandbox-aria' })
        .catch((e: unknown) => e);
      expect(silent).to.be.instanceOf(SpeechUnavailableError);
      expect((silent as Error).message).to.contain('did not answer within 200 ms');
    });

    it('is what TTS_PROVIDER=openai selects, and describes itself by its model', () => {
      const tts = textToSpeechFromConfig({
        TTS_PROVIDER: 'openai',
        ESPEAK_PATH: 'espeak-ng',
        TTS_BASE_URL: baseUrl,
        TTS_API_KEY: 'sk-test',
        TTS_MODEL: 'tts-1',
      });
      expect(tts).to.be.instanceOf(OpenAiTextToSpeech);
      expect(tts.describe()).to.equal('tts-1');
    });
  });

  describe('recordings', () => {
    const tts = new EspeakTextToSpeech({ path: ESPEAK });
    const agent = (text: string, atMs: number, cutAfterWords: number | null = null): RecordingTurn => ({
      speaker: 'agent',
      text,
      voice: 'sandbox-aria',
      atMs,
      cutAfterWords,
    });

    it('places a turn at its offset: silence before it, the same speech from there', async () => {
      const atStart = decodeWav((await renderRecording(tts, [agent(GREETING, 0)])).wav);
      const late = await renderRecording(tts, [agent(GREETING, 1500)]);
      const pcm = decodeWav(late.wav);
      expect(late.sampleRate).to.equal(16000);
      expect(pcm.sampleRate).to.equal(16000);
      expect(pcm.samples.length).to.equal(atStart.samples.length + 24000);
      expect(late.durationMs).to.equal(Math.round((pcm.samples.length / 16000) * 1000));
      expect(rms(pcm.samples, 0, 24000)).to.equal(0);
      expect(Array.from(pcm.samples.subarray(24000))).to.deep.equal(Array.from(atStart.samples));
      expect(rms(pcm.samples, 24000)).to.be.greaterThan(1000);
    });

    it('keeps the share of an interrupted turn’s speech that its heard words take', async () => {
      const text = 'I can certainly help you with that reservation for tomorrow evening at seven';
      const full = decodeWav((await renderRecording(tts, [agent(text, 0)])).wav).samples;
      const cut = decodeWav((await renderRecording(tts, [agent(text, 0, 3)])).wav).samples; // "I can certainly"
      const share = 'I can certainly'.length / text.length;
      expect(cut.length / full.length).to.be.within(share * 0.6, share * 1.5);
      expect(Math.abs(cut.at(-1)!)).to.be.lessThan(200); // faded out, no click
      const all = decodeWav((await renderRecording(tts, [agent(text, 0, 99)])).wav).samples;
      expect(all.length).to.equal(full.length);
    });

    it('voices the caller differently from the agent, even when given the agent’s voice', async () => {
      const r = await renderRecording(tts, [agent(GREETING, 0), { speaker: 'caller', text: GREETING, voice: 'sandbox-aria', atMs: 5000 }], {
        sampleRate: 22050,
      });
      const pcm = decodeWav(r.wav);
      const agentPitch = medianPitchHz(pcm.samples, 22050, 0, 5 * 22050);
      const callerPitch = medianPitchHz(pcm.samples, 22050, 5 * 22050);
      expect(agentPitch).to.be.greaterThan(160);
      expect(callerPitch).to.be.lessThan(130);

      const fake = new ConstantSpeech(() => 1);
      await renderRecording(fake, [
        { speaker: 'agent', text: 'a', voice: 'sandbox-miles', atMs: 0 },
        { speaker: 'caller', text: 'b', voice: 'sandbox-miles', atMs: 0 },
        { speaker: 'caller', text: 'c', voice: 'sandbox-sol', atMs: 0 },
      ]);
      expect(fake.calls.map((c) => c.voice)).to.deep.equal(['sandbox-miles', 'sandbox-aria', 'sandbox-sol']);
    });

    it('mixes overlapping turns and clips the sum to 16 bits', async () => {
      const fake = new ConstantSpeech((voice) => (voice === 'sandbox-aria' ? 20000 : -30000));
      const r = await renderRecording(fake, [
        { speaker: 'agent', text: 'a', voice: 'sandbox-aria', atMs: 0 },
        { speaker: 'agent', text: 'b', voice: 'sandbox-aria', atMs: 50 },
        { speaker: 'caller', text: 'c', voice: 'sandbox-isla', atMs: 300 },
        { speaker: 'caller', text: 'd', voice: 'sandbox-isla', atMs: 350 },
      ]);
      const s = decodeWav(r.wav).samples;
      expect(r.durationMs).to.equal(450);
      expect([s[0], s[799], s[800], s[1599], s[1600], s[2399]]).to.deep.equal([20000, 20000, 32767, 32767, 20000, 20000]);
      expect([s[2400], s[4799], s[4800], s[5599], s[5600], s[7199]]).to.deep.equal([0, 0, -30000, -30000, -32768, -30000]);
    });

    it('renders at the asked rate', async () => {
      const r = await renderRecording(tts, [agent('Goodbye.', 250)], { sampleRate: 8000 });
      const pcm = decodeWav(r.wav);
      expect(pcm.sampleRate).to.equal(8000);
      expect(rms(pcm.samples, 0, 2000)).to.equal(0);
      expect(rms(pcm.samples, 2000)).to.be.greaterThan(1000);
    });

    it('refuses to render nothing, and a negative offset', async () => {
      const none = await renderRecording(tts, []).catch((e: unknown) => e);
      expect((none as Error).message).to.equal('no speech to record');
      const unheard = await renderRecording(tts, [agent(GREETING, 0, 0)]).catch((e: unknown) => e);
      expect((unheard as Error).message).to.equal('no speech to record');
      const early = await renderRecording(tts, [agent(GREETING, -5)]).catch((e: unknown) => e);
      expect(early).to.be.instanceOf(RangeError);
    });
  });
});
