import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { SpeechUnavailableError } from '../../application/calls/text-to-speech.port.js';
import { speechToTextFromConfig } from '../../infrastructure/speech/module-support.js';
import { confidenceOf, OpenAiSpeechToText } from '../../infrastructure/speech/openai-stt.js';
import { PocketsphinxSpeechToText, parsePocketsphinx } from '../../infrastructure/speech/pocketsphinx-stt.js';
import { decodeWav } from '../../infrastructure/speech/wav.js';
import { silence, spoken } from '../support/web-calls.js';

const MODEL = '/usr/share/pocketsphinx/model/en-us';
/** a question pocketsphinx's US model gets mostly right when espeak-ng says it ("what are your opening dollars on saturday") */
const QUESTION = 'What are your opening hours on Saturday?';
const failure = async (p: Promise<unknown>): Promise<Error> => {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
};

/** Speech recognition adapters (docs/speech.md#speech-recognition), against Debian's pocketsphinx and a local API. */
describe('speech-to-text adapters', function () {
  this.timeout(120_000);

  describe('pocketsphinx', () => {
    const stt = new PocketsphinxSpeechToText({ path: 'pocketsphinx_continuous', modelDir: MODEL });

    it('recognises an utterance streamed in while it is spoken (real models: the key words)', async () => {
      const words = await spoken(QUESTION);
      const u = stt.start();
      u.write(silence(300));
      for (let at = 0; at < words.length; at += 320) u.write(words.subarray(at, at + 320));
      u.write(silence(500));
      const r = await u.finish();
      expect(r.text)
        .to.match(/opening/)
        .and.match(/saturday/);
      expect(r.confidence).to.be.within(0, 1);
    });

    it('hears no words in silence', async () => {
      const u = stt.start();
      u.write(silence(1000));
      expect(await u.finish()).to.deep.equal({ text: '', confidence: null });
    });

    it('an utterance that ends before the recogniser is ready is kept whole (nothing is lost in the pipe)', async () => {
      const words = await spoken(QUESTION);
      // all of it written, and finished, before the recogniser has even opened its input
      const u = stt.start();
      u.write(silence(300));
      u.write(words);
      u.write(silence(300));
      expect((await u.finish()).text)
        .to.match(/opening/)
        .and.match(/saturday/);
    });

    it('an aborted utterance settles at once with nothing, and frees its recogniser', async () => {
      const two = new PocketsphinxSpeechToText({ path: 'pocketsphinx_continuous', modelDir: MODEL, maxProcesses: 1 });
      const dropped = two.start();
      dropped.write(silence(2000));
      dropped.abort();
      expect(await dropped.finish()).to.deep.equal({ text: '', confidence: null });
      // the one recogniser allowed is free again
      const next = two.start();
      next.write(await spoken(QUESTION));
      next.write(silence(300));
      expect((await next.finish()).text).to.match(/saturday/);
    });

    it('says how to install it when the binary is missing', async () => {
      const missing = new PocketsphinxSpeechToText({ path: '/nonexistent/pocketsphinx_continuous', modelDir: MODEL });
      const u = missing.start();
      u.write(silence(200));
      const err = await failure(u.finish());
      expect(err).to.be.instanceOf(SpeechUnavailableError);
      expect(err.message).to.equal(
        'pocketsphinx is not installed (POCKETSPHINX_PATH=/nonexistent/pocketsphinx_continuous): ' +
          'apt-get install pocketsphinx pocketsphinx-en-us, or set STT_PROVIDER=openai',
      );
    });

    it('says how to install the model when it is missing', async () => {
      const u = new PocketsphinxSpeechToText({ path: 'pocketsphinx_continuous', modelDir: '/nonexistent/model' }).start();
      const err = await failure(u.finish());
      expect(err).to.be.instanceOf(SpeechUnavailableError);
      expect(err.message).to.match(/model is not installed at POCKETSPHINX_MODEL_DIR=\/nonexistent\/model/);
      expect(err.message).to.match(/apt-get install pocketsphinx-en-us/);
    });

    it("reports a recogniser that fails, with its log's error", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'stt-fake-'));
      try {
        const fake = join(dir, 'pocketsphinx_continuous');
        writeFileSync(fake, '#!/bin/sh\necho \'FATAL: "continuous.c", line 157: Failed to open file\' >&2\nexit 1\n');
        chmodSync(fake, 0o755);
        const u = new PocketsphinxSpeechToText({ path: fake, modelDir: MODEL }).start();
        u.write(silence(200));
        const err = await failure(u.finish());
        expect(err).to.be.instanceOf(SpeechUnavailableError);
        expect(err.message).to.match(/exited with status 1: FATAL: "continuous.c", line 157: Failed to open file/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('reads the words and their posteriors, leaving out silence, fillers and alternate pronunciations', () => {
      const out = [
        'what are your opening dollars on saturday',
        '<s> 0.000 0.020 0.999800',
        'what 0.030 0.220 0.9',
        '<sil> 0.230 0.300 1.000000',
        '[NOISE] 0.300 0.320 0.500000',
        'saturday(2) 1.530 2.140 0.5',
        '</s> 2.150 2.560 1.000000',
        '',
      ].join('\n');
      expect(parsePocketsphinx(out)).to.deep.equal({ text: 'what saturday', confidence: 0.7 });
      expect(parsePocketsphinx('')).to.deep.equal({ text: '', confidence: null });
    });
  });

  describe('OpenAI-compatible transcription API', () => {
    let server: Server;
    let url: string;
    let answer: (req: { headers: Record<string, unknown>; form: FormData }) => { status: number; body: string };
    const seen: { headers: Record<string, unknown>; form: FormData }[] = [];

    before(async () => {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', async () => {
          // the multipart body, parsed by the platform's own Fetch implementation
          const form = await new Request('http://local/', {
            method: 'POST',
            headers: { 'content-type': String(req.headers['content-type']) },
            body: Buffer.concat(chunks),
          }).formData();
          const r = { headers: req.headers as Record<string, unknown>, form };
          seen.push(r);
          const a = answer(r);
          res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    it('sends the utterance as a 16 kHz WAV with the model, and reads the text and token confidence', async () => {
      answer = () => ({
        status: 200,
        body: JSON.stringify({
          text: ' Open on  Saturday? ',
          logprobs: [
            { token: 'Open', logprob: -0.1 },
            { token: 'Sat', logprob: -0.3 },
          ],
        }),
      });
      const stt = new OpenAiSpeechToText({ baseUrl: `${url}/`, apiKey: 'sk-test', model: 'gpt-4o-mini-transcribe' });
      const u = stt.start();
      u.write(new Int16Array([1, 2, 3]));
      u.write(new Int16Array([4, 5]));
      const r = await u.finish();
      expect(r).to.deep.equal({ text: 'Open on Saturday?', confidence: Math.round(Math.exp(-0.2) * 1000) / 1000 });
      const req = seen.at(-1)!;
      expect(req.headers.authorization).to.equal('Bearer sk-test');
      expect(req.form.get('model')).to.equal('gpt-4o-mini-transcribe');
      expect(req.form.get('response_format')).to.equal('json');
      expect(req.form.get('include[]')).to.equal('logprobs');
      const file = req.form.get('file') as File;
      expect(file.name).to.equal('utterance.wav');
      const wav = decodeWav(new Uint8Array(await file.arrayBuffer()));
      expect(wav.sampleRate).to.equal(16_000);
      expect([...wav.samples]).to.deep.equal([1, 2, 3, 4, 5]);
    });

    it('other models are not asked for log probabilities, and give no confidence without them', async () => {
      answer = () => ({ status: 200, body: JSON.stringify({ text: 'hello' }) });
      const r = await (async () => {
        const u = new OpenAiSpeechToText({ baseUrl: url, model: 'whisper-1' }).start();
        u.write(new Int16Array(160));
        return u.finish();
      })();
      expect(r).to.deep.equal({ text: 'hello', confidence: null });
      expect(seen.at(-1)!.form.get('include[]')).to.equal(null);
      expect(seen.at(-1)!.headers.authorization).to.equal(undefined);
      expect(confidenceOf({ segments: [{ avg_logprob: -0.5 }, { avg_logprob: -0.7 }] })).to.equal(Math.round(Math.exp(-0.6) * 1000) / 1000);
    });

    it('an empty utterance is not sent', async () => {
      const before = seen.length;
      expect(await new OpenAiSpeechToText({ baseUrl: url, model: 'whisper-1' }).start().finish()).to.deep.equal({
        text: '',
        confidence: null,
      });
      expect(seen.length).to.equal(before);
    });

    it('says what is wrong: a refused key, an unknown model, an unreachable API', async () => {
      const stt = (baseUrl: string, apiKey?: string) => {
        const u = new OpenAiSpeechToText({ baseUrl, apiKey, model: 'whisper-1' }).start();
        u.write(new Int16Array(160));
        return u.finish();
      };
      answer = () => ({ status: 401, body: JSON.stringify({ error: { message: 'Incorrect API key provided' } }) });
      let err = await failure(stt(url, 'sk-bad'));
      expect(err).to.be.instanceOf(SpeechUnavailableError);
      expect(err.message).to.equal(
        `transcription API ${url}/audio/transcriptions (STT_MODEL=whisper-1) answered 401 (check STT_API_KEY): Incorrect API key provided`,
      );
      err = await failure(stt(url));
      expect(err.message).to.contain('(STT_API_KEY is not set)');
      answer = () => ({ status: 404, body: 'no such model' });
      err = await failure(stt(url, 'k'));
      expect(err.message).to.contain('answered 404 (check STT_BASE_URL and STT_MODEL): no such model');
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      err = await failure(stt(`http://127.0.0.1:${port}/v1`, 'k'));
      expect(err.message).to.match(/could not be reached \(ECONNREFUSED\): check STT_BASE_URL/);
    });

    it('STT_PROVIDER chooses the adapter', () => {
      const base = { POCKETSPHINX_PATH: 'p', POCKETSPHINX_MODEL_DIR: MODEL, STT_BASE_URL: url, STT_API_KEY: undefined, STT_MODEL: 'm' };
      expect(speechToTextFromConfig({ ...base, STT_PROVIDER: 'pocketsphinx' })).to.be.instanceOf(PocketsphinxSpeechToText);
      expect(speechToTextFromConfig({ ...base, STT_PROVIDER: 'openai' }).describe()).to.equal('m');
    });
  });
});
