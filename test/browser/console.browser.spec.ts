import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, inbound } from '../support/messaging.js';
import { credit, eventually } from '../support/numbers.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * The console in a real browser (docs/console.md, docs/testing.md#the-browser-test): Debian's Chromium, driven by
 * playwright-core, against a real server with the sandbox providers. It signs in, opens a conversation the sandbox
 * produced, watches a live call's transcript grow, sends a failed delivery again, and checks both the page text and
 * screenshots (the colours each chart and badge must paint). Screenshots are kept in SCREENSHOT_DIR (default: a
 * temporary directory) for a person to look at.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = process.env.SCREENSHOT_DIR ?? join(tmpdir(), 'console-screenshots');
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

type Rgb = readonly [number, number, number];
const hex = (h: string): Rgb => [
  Number.parseInt(h.slice(1, 3), 16),
  Number.parseInt(h.slice(3, 5), 16),
  Number.parseInt(h.slice(5, 7), 16),
];
/** the console's colours (infrastructure/console/web/components.tsx, style.css) */
const BLUE = hex('#2563eb');
const GREEN = hex('#16a34a');
const RED = hex('#dc2626');

/** How many pixels of a PNG are within `tolerance` (sum of channel differences) of `color`. */
function pixelsOf(png: Buffer, color: Rgb, tolerance = 60): number {
  const img = PNG.sync.read(png);
  let n = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    const d = Math.abs(img.data[i]! - color[0]) + Math.abs(img.data[i + 1]! - color[1]) + Math.abs(img.data[i + 2]! - color[2]);
    if (d <= tolerance && img.data[i + 3]! > 200) n++;
  }
  return n;
}

async function shot(target: Page | Locator, name: string): Promise<Buffer> {
  const png = await target.screenshot();
  await writeFile(join(SHOTS, `${name}.png`), png);
  return png;
}

describe('the web console in a real browser', function () {
  this.timeout(240_000);
  let app: TestApp;
  let rx: Receiver;
  let failing = true;
  let context: BrowserContext | null = null;
  let page: Page;
  let profile: string;
  let key: string;
  let number: string;
  let conversationId: string;

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.warn(`skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
      this.skip();
    }
    await mkdir(SHOTS, { recursive: true });
    app = await startTestApp({
      ...FAST_MESSAGING_ENV,
      SANDBOX_VOICE_WORDS_PER_MINUTE: '6000',
      SANDBOX_VOICE_RING_MS: '20',
      SANDBOX_VOICE_REPLY_PAUSE_MS: '100',
      WEBHOOK_POLL_INTERVAL_MS: '20',
      SANDBOX_CLOCK_REFRESH_MS: '50',
    });
    rx = await startReceiver(() => (failing ? { status: 503, body: 'down for maintenance' } : { status: 200, body: 'ok' }));
    const acc = await app.newAccount('Console');
    key = acc.apiKey;
    await credit(app, acc.accountId, 50_000_000);
    const agent = (
      await app.call('POST', '/v1/agents', {
        key,
        body: { name: 'Concierge', beginMessage: 'Hi, this is the concierge.', voiceMode: 'hosted', systemPrompt: 'Answer briefly.' },
      })
    ).body;
    number = (await app.call('POST', '/v1/numbers', { key, body: { country: 'CA', agentId: agent.id } })).body.phoneNumber;
    await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url, events: ['agent.message'] } });

    // a conversation produced by the sandbox: two texts in, one answer out
    const first = await inbound(app, { from: '+13125550190', to: number, body: 'Hi, are you open tonight?' });
    await inbound(app, { from: '+13125550190', to: number, body: 'And is there parking?' });
    const reply = await app.call('POST', '/v1/messages', {
      key,
      body: { agent_id: agent.id, to_number: '+13125550190', body: 'Yes, until 11pm!' },
    });
    conversationId = reply.body.conversation_id;
    expect(first.status).to.equal(201);
    await eventually(
      async () => (await app.call('GET', `/v1/messages/${reply.body.id}/history`, { key })).body.status === 'delivered' || undefined,
      'the answer delivered',
    );
    // both agent.message deliveries fail every attempt: the sandbox clock walks them to the end of their schedule
    for (let round = 0; round < 8; round++) {
      const items = (await app.call('GET', '/v1/webhooks/deliveries', { key })).body.items as { status: string; attemptCount: number }[];
      if (items.length === 2 && items.every((d) => d.status === 'failed')) break;
      const counts = items.map((d) => d.attemptCount);
      await app.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: 13 * 3600 } });
      await eventually(async () => {
        const now = (await app.call('GET', '/v1/webhooks/deliveries', { key })).body.items as { status: string; attemptCount: number }[];
        return now.length === 2 && now.every((d, i) => d.status === 'failed' || d.attemptCount > (counts[i] ?? 0)) ? true : undefined;
      }, 'the next attempts');
    }

    profile = await mkdtemp(join(tmpdir(), 'console-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 1000 },
    });
    page = context.pages()[0] ?? (await context.newPage());
  });
  after(async () => {
    await context?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    await rx?.close();
    await app?.close();
  });

  it('signs in with an API key kept in session storage, never in the URL', async () => {
    await page.goto(`${app.url}/console`);
    await page.getByLabel('API key').fill('avp_not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That key is not valid here.').waitFor();
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Conversations' }).waitFor();
    // the page's own storage, read in the page (this file is compiled without the DOM library)
    expect(await page.evaluate("sessionStorage.getItem('avp.console.apiKey')")).to.equal(key);
    expect(await page.evaluate('localStorage.length')).to.equal(0);
    expect(page.url()).to.not.include(key);
    expect(page.url()).to.not.include('avp_');
  });

  it('opens the conversation the sandbox produced, with each message and its status timeline', async () => {
    await page.goto(`${app.url}/console#/conversations`);
    await page.getByRole('link', { name: '+13125550190' }).click();
    const conversation = page.locator(`[data-conversation="${conversationId}"]`);
    await conversation.getByText('Yes, until 11pm!').waitFor();
    const text = await conversation.innerText();
    expect(text).to.include('Hi, are you open tonight?').and.include('And is there parking?');
    const outbound = conversation.locator('li.message.outbound');
    const timeline = outbound.locator('ol.timeline');
    await timeline.getByText('delivered').waitFor();
    const steps = (await timeline.locator('.badge').allInnerTexts()).map((s) => s.trim());
    expect(steps).to.deep.equal(['accepted', 'queued', 'sent', 'delivered']);
    expect(page.url()).to.not.include(key);
    const png = await shot(conversation, 'conversation');
    expect(pixelsOf(png, GREEN), 'the green "delivered" badges').to.be.greaterThan(50);
    expect(pixelsOf(png, BLUE), 'the blue edge of the outbound message').to.be.greaterThan(20);
  });

  it('watches a live call transcript grow turn by turn, with the latency split of each agent turn', async () => {
    const rung = await app.call('POST', '/sandbox/calls/inbound', { key: ADMIN_TOKEN, body: { from: '+13125550191', to: number } });
    expect(rung.status).to.equal(200);
    const callId = rung.body.callId as string;
    await page.goto(`${app.url}/console#/calls/${callId}`);
    const transcript = page.locator(`[data-transcript="${callId}"]`);
    await transcript.getByText('Hi, this is the concierge.').waitFor({ timeout: 30_000 });
    await page.locator('.live').waitFor();
    const before = await transcript.locator('li').count();
    await app.call('POST', `/sandbox/calls/${callId}/say`, { key: ADMIN_TOKEN, body: { text: 'Can I book a table for two?' } });
    await transcript.getByText('Can I book a table for two?').waitFor({ timeout: 30_000 });
    await transcript.locator('li.turn.agent').nth(1).waitFor({ timeout: 30_000 });
    expect(await transcript.locator('li').count()).to.be.greaterThan(before + 1);
    const latency = page.locator('[data-table="latency"] tbody tr');
    await latency.first().waitFor();
    expect(await latency.first().innerText()).to.match(/\d+ ms/);
    const png = await shot(page.locator('main'), 'live-call');
    expect(pixelsOf(png, BLUE), 'agent lines and the latency chart').to.be.greaterThan(50);
    await app.call('POST', `/sandbox/calls/${callId}/hangup`, { key: ADMIN_TOKEN });
    await page.locator('main .badge', { hasText: 'completed' }).first().waitFor({ timeout: 30_000 });
  });

  it('sends a failed delivery again from the delivery log and shows it delivered', async () => {
    failing = false;
    await page.goto(`${app.url}/console#/webhooks`);
    const rows = page.locator('tr[data-delivery]');
    await rows.first().waitFor();
    expect(await rows.count()).to.equal(2);
    expect(await rows.locator('td.status', { hasText: 'failed' }).count()).to.equal(2);
    const row = rows.first();
    const id = (await row.getAttribute('data-delivery')) as string;
    expect(await row.locator('td.attempt-count').innerText()).to.equal('6');
    const before = rx.received.length;
    await row.getByRole('button', { name: 'Send again' }).click();
    await row.locator('td.status', { hasText: 'success' }).waitFor({ timeout: 30_000 });
    expect(await row.locator('td.attempt-count').innerText()).to.equal('7');
    expect(rx.received.slice(before).map((r) => r.headers['x-webhook-id'])).to.deep.equal([id]);
    await row.locator('summary').click();
    expect(await row.locator('table.attempts').innerText())
      .to.include('503')
      .and.include('#7');
    // the chart counts each delivery by its latest outcome: one delivered now, one still failed
    await page.reload();
    await page.locator('[data-webhook-status]', { hasText: 'active' }).waitFor();
    const png = await shot(page.locator('[data-chart="deliveries"] canvas'), 'deliveries-chart');
    expect(pixelsOf(png, RED), 'the failed series').to.be.greaterThan(20);
    expect(pixelsOf(png, GREEN), 'the delivered series').to.be.greaterThan(20);
    await shot(page, 'webhooks');
  });

  it('draws usage by day, number and agent', async () => {
    await page.goto(`${app.url}/console#/usage`);
    const totals = page.locator('[data-totals]');
    await totals.getByText('3 messages').waitFor();
    expect(await totals.innerText())
      .to.include('1 call ·')
      .and.include('2 webhook deliveries');
    for (const name of ['daily', 'by-number', 'by-agent']) await page.locator(`[data-chart="${name}"] canvas`).waitFor();
    expect(await page.locator('[data-table="by-agent"]').innerText()).to.include('Concierge');
    expect(await page.locator('[data-table="by-number"]').innerText()).to.include(number);
    const daily = await shot(page.locator('[data-chart="daily"] canvas'), 'usage-daily');
    expect(pixelsOf(daily, BLUE), 'the messages series').to.be.greaterThan(20);
    const byNumber = await shot(page.locator('[data-chart="by-number"] canvas'), 'usage-by-number');
    expect(pixelsOf(byNumber, BLUE), 'the messages bar').to.be.greaterThan(100);
    expect(pixelsOf(byNumber, GREEN), 'the calls bar').to.be.greaterThan(100);
    await shot(page, 'usage');
  });

  it("lists an agent's own webhook and names each delivery's webhook, shows chat-app numbers, an unjoined web call, and an icon", async () => {
    const agents = (await app.call('GET', '/v1/agents', { key })).body.data as { id: string; name: string }[];
    const concierge = agents.find((a) => a.name === 'Concierge')!;
    expect((await app.call('POST', `/v1/agents/${concierge.id}/webhook`, { key, body: { url: `${rx.url}/own` } })).status).to.equal(200);
    const connection = await app.call('POST', '/integrations/chatapp/connections', {
      key,
      body: { business_account_id: '200000000000001', access_token: 'sandbox-token' },
    });
    const bound = await app.call('POST', `/integrations/chatapp/${connection.body.id}/numbers`, {
      key,
      body: { phone_number_id: '300000000000012', agent_id: concierge.id },
    });
    expect(bound.body.status).to.equal('bound');
    const web = await app.call('POST', '/v1/calls/web', { key, body: { agentId: concierge.id } });
    // nobody joins: once its token has expired (on the sandbox clock) the sweeper ends it
    await app.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: 120 } });
    await eventually(
      async () =>
        (await app.call('GET', `/v1/calls/${web.body.callId}`, { key })).body.disconnectionReason === 'canceled' ? true : undefined,
      'the unjoined web call ended',
      60_000,
    );

    await page.goto(`${app.url}/console#/webhooks`);
    const own = page.locator('[data-table="agent-webhooks"]');
    await own.getByText('Concierge').waitFor({ timeout: 30_000 });
    expect(await own.innerText()).to.include(`${rx.url}/own`);
    // the texts' deliveries went to the master webhook; the web call's end went to the agent's own
    await page.locator('tr[data-delivery] td.webhook', { hasText: "Concierge's webhook" }).first().waitFor({ timeout: 30_000 });
    expect(new Set(await page.locator('tr[data-delivery] td.webhook').allInnerTexts())).to.deep.equal(
      new Set(['master webhook', "Concierge's webhook"]),
    );

    await page.goto(`${app.url}/console#/numbers`);
    const chat = page.locator('[data-table="chatapp-numbers"]');
    await chat.getByText('+447700900502').waitFor({ timeout: 30_000 });
    expect(await chat.innerText())
      .to.include('Sandbox Coffee Co.')
      .and.include('Concierge');

    await page.goto(`${app.url}/console#/calls`);
    const row = page.locator('[data-table="calls"] tr', { hasText: web.body.callId });
    await row.waitFor();
    expect(await row.locator('.badge').innerText()).to.equal('not joined');
    expect(pixelsOf(await shot(row.locator('.badge'), 'unjoined-web-call'), RED), 'no red badge').to.equal(0);

    const icon = await fetch(`${app.url}/favicon.ico`);
    expect(icon.status).to.equal(200);
    expect(icon.headers.get('content-type')).to.equal('image/png');
    expect(PNG.sync.read(Buffer.from(await icon.arrayBuffer())).width).to.equal(32);
  });
});
