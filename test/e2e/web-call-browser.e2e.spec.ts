import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { decodeWav, encodeWav } from '../../infrastructure/speech/wav.js';
import { endedCall, type VoiceReceiver, voiceReceiver } from '../support/calls.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { spokenWav } from '../support/web-calls.js';

const CHROMIUM = '/usr/bin/chromium';
const QUESTION = 'What are your opening hours on Saturday?';
const ANSWER = 'We open at nine on Saturday.';
const isVoiceTurn = (t: { body: any }) => t.body.event === 'agent.message' && t.body.channel === 'voice';

/**
 * The demo page, for real (docs/calls.md#the-demo-page): Debian's chromium, headless, whose fake microphone plays a
 * WAV that espeak-ng rendered now. A person enters the API key, picks the agent, starts the call and asks a
 * question out loud; the server recognises it with pocketsphinx and the webhook gets the transcript; the answer is
 * rendered by espeak-ng and its audio frames reach the page; the person hangs up; the call's transcript and
 * `agent.call_ended` say what was said.
 */
describe('a web call in a real browser (chromium, fake microphone)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let rx: VoiceReceiver;
  let context: BrowserContext;
  let page: Page;
  let scratch: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'web-call-e2e-'));
    // a second of silence, then the question: the page joins first, then opens the microphone
    const q = decodeWav(await spokenWav(QUESTION));
    const samples = new Int16Array(q.sampleRate + q.samples.length);
    samples.set(q.samples, q.sampleRate);
    const wav = join(scratch, 'question.wav');
    writeFileSync(wav, encodeWav({ samples, sampleRate: q.sampleRate }));
    app = await startTestApp();
    rx = await voiceReceiver((t) => (isVoiceTurn(t) ? { json: { text: ANSWER } } : { json: {} }));
    context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        // played once, not looped: one question
        `--use-file-for-fake-audio-capture=${wav}%noloop`,
      ],
    });
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close();
    await rx?.close();
    await app?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('asks a question out loud, hears the answer, hangs up; the transcript and agent.call_ended agree', async () => {
    const { apiKey } = await app.newAccount('Browser');
    const agent = await app.call('POST', '/v1/agents', { key: apiKey, body: { name: 'Front desk' } });
    expect(agent.status).to.equal(200);
    const hook = await app.call('POST', `/v1/agents/${agent.body.id}/webhook`, { key: apiKey, body: { url: rx.url, timeout: 20 } });
    expect(hook.status).to.equal(200);

    await page.goto(`${app.url}/web-call`);
    await page.fill('#api-key', apiKey);
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector(`#agent option[value="${agent.body.id}"]`, { state: 'attached' });
    await page.selectOption('#agent', agent.body.id);
    await page.click('#start');
    await page.waitForSelector('body[data-call-state=live]', { timeout: 30_000 });
    const callId = await page.getAttribute('body', 'data-call-id');
    expect(callId).to.match(/^call_/);

    // the question, as the server recognised it, on the page and at the webhook
    const heard = await page.waitForSelector('#transcript li[data-role=user]', { timeout: 60_000 });
    const transcript = (await heard.textContent()) ?? '';
    const turn = await eventually(
      async () => rx.turns.find((t) => isVoiceTurn(t) && t.body.data.callId === callId),
      'the voice turn',
      60_000,
    );
    expect(turn.body.data.transcript).to.equal(transcript);
    // pocketsphinx's accuracy is modest: the question's key words, not the sentence
    expect(transcript.toLowerCase()).to.match(/opening|saturday/);
    expect(turn.body.data).to.include({ direction: 'web', from: 'web' });

    // the answer is shown and heard: its audio frames reach the page
    await page.waitForSelector(`#transcript li[data-role=agent]:text("${ANSWER}")`, { timeout: 30_000 });
    // (a function, which the page's policy lets run where a string would be eval; the test's types know no DOM)
    await page.waitForFunction(() => Number((globalThis as any).document.getElementById('frames').textContent) >= 50, undefined, {
      timeout: 30_000,
    });

    // and heard to its end (hanging up while it still plays would record the part spoken so far)
    await page.waitForFunction(() => /^In a call/.test((globalThis as any).document.getElementById('status').textContent), undefined, {
      timeout: 30_000,
    });
    await page.click('#hangup');
    await page.waitForSelector('body[data-call-state=ended]', { timeout: 30_000 });

    const c = await endedCall(app, apiKey, callId!, 60);
    expect(c).to.include({ status: 'completed', direction: 'web', disconnectionReason: 'user_hangup' });
    const t = await app.call('GET', `/v1/calls/${callId}/transcript`, { key: apiKey });
    const said = t.body.transcript.map((e: any) => [e.role, e.content]);
    expect(said[0]).to.deep.equal(['user', transcript]);
    expect(said).to.deep.include(['agent', ANSWER]);
    const reply = c.turns.find((x: any) => x.role === 'agent' && x.source === 'webhook');
    expect(reply.latency.recognitionMs).to.be.a('number');
    expect(reply.latency.synthesisMs).to.be.a('number');

    const ended = await eventually(
      async () => rx.turns.find((x) => x.body.event === 'agent.call_ended' && x.body.data.callId === callId),
      'agent.call_ended',
      60_000,
    );
    expect(ended.body.data).to.include({ direction: 'web', status: 'completed', disconnectionReason: 'user_hangup' });
    expect(ended.body.data.transcript[0]).to.deep.equal({ role: 'user', content: transcript });
    expect(ended.body.data.transcript).to.deep.include({ role: 'agent', content: ANSWER });
  });
});
