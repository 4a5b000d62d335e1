import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { type ChatMessage, LanguageModelError, type ModelTier } from '../../application/calls/language-model.port.js';
import { loadConfig } from '../../infrastructure/config/config.js';
import { languageModelFromConfig } from '../../infrastructure/llm/language-model-from-config.js';
import { OpenAiChatModel } from '../../infrastructure/llm/openai-chat-model.js';
import { SandboxLanguageModel } from '../../infrastructure/sandbox/llm/language-model.js';

/** What the fake server saw of one request. */
type Seen = {
  path: string | undefined;
  authorization: string | undefined;
  body: { model: string; messages: ChatMessage[]; stream: boolean };
  /** settles when the response is closed, whoever closed it */
  closed: Promise<void>;
  /** the client went away before the server ended the response */
  clientLeft: boolean;
};
type Handler = (res: ServerResponse, seen: Seen) => void | Promise<void>;

/**
 * A local server speaking the streaming chat-completions contract: POST /chat/completions with a JSON body,
 * answered with server-sent events (`data: {chunk}`, then `data: [DONE]`). Each test sets its handler.
 */
async function fakeChatCompletions() {
  const fake = {
    seen: [] as Seen[],
    handler: answerOk,
    server: null as unknown as Server,
    baseUrl: '',
    connections: 0,
  };
  fake.server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let closed!: () => void;
    const seen: Seen = {
      path: req.url,
      authorization: req.headers.authorization,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      closed: new Promise<void>((r) => {
        closed = r;
      }),
      clientLeft: false,
    };
    res.on('close', () => {
      seen.clientLeft = !res.writableEnded;
      closed();
    });
    fake.seen.push(seen);
    await fake.handler(res, seen);
  });
  fake.server.on('connection', () => {
    fake.connections++;
  });
  await new Promise<void>((r) => fake.server.listen(0, '127.0.0.1', r));
  fake.baseUrl = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}/v1/`;
  return fake;
}

/** The default handler: one fragment, `ok`. */
const answerOk: Handler = (res) => {
  startEvents(res);
  send(res, delta('ok'));
  done(res);
};
const startEvents = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
};
const delta = (content: string, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
});
const send = (res: ServerResponse, chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
const done = (res: ServerResponse) => {
  send(res, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  res.end('data: [DONE]\n\n');
};

const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`${what} did not happen within ${ms} ms`)))]);

async function collect(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const f of it) out.push(f);
  return out;
}

async function failure(p: Promise<unknown>): Promise<LanguageModelError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the stream should have failed').to.be.instanceOf(LanguageModelError);
  return err as LanguageModelError;
}

const messages: ChatMessage[] = [
  { role: 'system', content: 'You are Ada, the receptionist of Acme Dental.' },
  { role: 'user', content: 'When do you open?' },
];
const models = { turbo: 'fast-1', balanced: 'mid-1', max: 'big-1' } as const;

describe('OpenAI-compatible chat model', () => {
  let fake: Awaited<ReturnType<typeof fakeChatCompletions>>;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  const model = (o: { timeoutMs?: number; baseUrl?: string } = {}) =>
    new OpenAiChatModel({ baseUrl: o.baseUrl ?? fake.baseUrl, apiKey: 'sk-test', models, timeoutMs: o.timeoutMs ?? 2000 });

  before(async () => {
    fake = await fakeChatCompletions();
    process.on('unhandledRejection', onUnhandled);
  });
  after(() => {
    process.off('unhandledRejection', onUnhandled);
    fake.server.closeAllConnections();
    fake.server.close();
  });
  beforeEach(() => {
    fake.seen.length = 0;
    fake.handler = answerOk;
  });
  afterEach(async () => {
    await sleep(20);
    expect(unhandled, 'unhandled rejections').to.deep.equal([]);
  });

  it('posts the messages with the bearer key and the tier’s model, and yields each fragment before the stream ends', async () => {
    let firstSeen!: () => void;
    const firstFragmentSeen = new Promise<'seen'>((r) => {
      firstSeen = () => r('seen');
    });
    let serverSaw: 'seen' | 'not seen' = 'not seen';
    fake.handler = async (res) => {
      startEvents(res);
      send(res, { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
      send(res, delta('We open'));
      // the rest of the answer waits until the client has yielded the first fragment (or gives up after 1 s)
      serverSaw = await Promise.race([firstFragmentSeen, sleep(1000).then(() => 'not seen' as const)]);
      send(res, delta(' at nine.'));
      done(res);
    };
    const got: string[] = [];
    for await (const f of model().stream({ tier: 'balanced', messages })) {
      got.push(f);
      firstSeen();
    }
    expect(got).to.deep.equal(['We open', ' at nine.']);
    expect(serverSaw, 'the first fragment reached the caller while the server held the stream open').to.equal('seen');
    const [seen] = fake.seen;
    expect(seen?.path).to.equal('/v1/chat/completions');
    expect(seen?.authorization).to.equal('Bearer sk-test');
    expect(seen?.body).to.deep.equal({ model: 'mid-1', messages, stream: true });
  });

  it('asks for the model of each tier and describes each tier by its model', async () => {
    const m = model();
    for (const tier of ['turbo', 'balanced', 'max'] as ModelTier[])
      expect(await collect(m.stream({ tier, messages }))).to.deep.equal(['ok']);
    expect(fake.seen.map((s) => s.body.model)).to.deep.equal(['fast-1', 'mid-1', 'big-1']);
    expect(['turbo', 'balanced', 'max'].map((t) => m.describe(t as ModelTier))).to.deep.equal(['fast-1', 'mid-1', 'big-1']);
  });

  it('keeps its connection for the next request after a complete answer', async () => {
    const m = model();
    const before = fake.connections;
    for (let i = 0; i < 6; i++) expect(await collect(m.stream({ tier: 'turbo', messages }))).to.deep.equal(['ok']);
    expect(fake.connections - before, 'new connections for 6 requests').to.be.at.most(2);
  });

  it('parses events split across network writes, CRLF line ends, comments and multi-line data', async () => {
    fake.handler = async (res) => {
      startEvents(res);
      res.write(': keep-alive\r\n\r\ndata: {"choices":[{"delta":{"content":"Hel');
      await sleep(10);
      res.write('lo"}}]}\r');
      await sleep(10);
      res.write('\n\r\ndata: {"choices":[{"delta":\ndata: {"content":", world"}}]}\n\n');
      await sleep(10);
      res.end('data: [DONE]\n\n');
    };
    expect(await collect(model().stream({ tier: 'turbo', messages }))).to.deep.equal(['Hello', ', world']);
  });

  it('fails with the status and an excerpt of the body on 401', async () => {
    fake.handler = (res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided: sk-test.', type: 'invalid_request_error' } }));
    };
    const e = await failure(collect(model().stream({ tier: 'turbo', messages })));
    expect(e.message).to.equal('the model answered 401: Incorrect API key provided: sk-test.');
  });

  it('fails on 500 with a short excerpt of a long body', async () => {
    fake.handler = (res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`upstream exploded\n${'x'.repeat(100_000)}`);
    };
    const e = await failure(collect(model().stream({ tier: 'turbo', messages })));
    expect(e.message).to.match(/^the model answered 500: upstream exploded x+…$/);
    expect(e.message.length).to.be.below(260);
  });

  it('fails on a malformed event, and on an error event, after the fragments before it', async () => {
    fake.handler = (res) => {
      startEvents(res);
      send(res, delta('Hi'));
      res.write('data: {"choices": [oops\n\n');
    };
    const got: string[] = [];
    const e = await failure(
      (async () => {
        for await (const f of model().stream({ tier: 'turbo', messages })) got.push(f);
      })(),
    );
    expect(got).to.deep.equal(['Hi']);
    expect(e.message).to.equal('malformed event from the model: {"choices": [oops');
    await within(fake.seen[0]!.closed, 1000, 'closing the request');
    expect(fake.seen[0]!.clientLeft).to.equal(true);

    fake.handler = (res) => {
      startEvents(res);
      send(res, { error: { message: 'The server is overloaded', type: 'server_error' } });
    };
    expect((await failure(collect(model().stream({ tier: 'turbo', messages })))).message).to.equal(
      'the model failed: The server is overloaded',
    );
  });

  it('fails when the stream ends before the model finished', async () => {
    fake.handler = (res) => {
      startEvents(res);
      send(res, delta('We open'));
      res.end();
    };
    const e = await failure(collect(model().stream({ tier: 'turbo', messages })));
    expect(e.message).to.equal('the stream ended before the model finished its answer');
  });

  it('fails when no fragment arrives in time, even after the headers and an empty first chunk, and closes the request', async () => {
    fake.handler = (res) => {
      startEvents(res);
      send(res, { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    };
    const started = Date.now();
    const e = await failure(collect(model({ timeoutMs: 150 }).stream({ tier: 'turbo', messages })));
    expect(e.message).to.equal('no answer within 150 ms');
    expect(Date.now() - started).to.be.within(140, 1000);
    await within(fake.seen[0]!.closed, 1000, 'closing the request');
    expect(fake.seen[0]!.clientLeft).to.equal(true);
  });

  it('fails when the server does not even answer the headers in time', async () => {
    fake.handler = () => undefined;
    const e = await failure(collect(model({ timeoutMs: 150 }).stream({ tier: 'turbo', messages })));
    expect(e.message).to.equal('no answer within 150 ms');
    await within(fake.seen[0]!.closed, 1000, 'closing the request');
  });

  it('does not time out a slow stream once the first fragment has arrived', async () => {
    fake.handler = async (res) => {
      startEvents(res);
      send(res, delta('slow'));
      await sleep(250);
      send(res, delta(' but sure'));
      done(res);
    };
    expect(await collect(model({ timeoutMs: 150 }).stream({ tier: 'turbo', messages }))).to.deep.equal(['slow', ' but sure']);
  });

  it('fails with the network error when the server cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const e = await failure(collect(model({ baseUrl: `http://127.0.0.1:${port}/v1` }).stream({ tier: 'turbo', messages })));
    expect(e.message).to.match(new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}/v1/chat/completions: .*ECONNREFUSED`));
  });

  it('stops quietly and closes the request when the caller aborts mid-stream', async () => {
    fake.handler = (res) => {
      startEvents(res);
      send(res, delta('one'));
      // and never ends: only the client's abort can end this stream
    };
    const ac = new AbortController();
    const got: string[] = [];
    const started = Date.now();
    for await (const f of model().stream({ tier: 'turbo', messages, signal: ac.signal })) {
      got.push(f);
      setTimeout(() => ac.abort(), 20); // while the adapter waits for the next event
    }
    expect(got).to.deep.equal(['one']);
    expect(Date.now() - started).to.be.below(1000);
    await within(fake.seen[0]!.closed, 1000, 'closing the request');
    expect(fake.seen[0]!.clientLeft).to.equal(true);
  });

  it('stops quietly when the caller aborts before the answer starts, or had already aborted', async () => {
    fake.handler = () => undefined;
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    expect(await collect(model().stream({ tier: 'turbo', messages, signal: ac.signal }))).to.deep.equal([]);
    await within(fake.seen[0]!.closed, 1000, 'closing the request');

    expect(await collect(model().stream({ tier: 'turbo', messages, signal: AbortSignal.abort() }))).to.deep.equal([]);
    expect(fake.seen).to.have.length(1);
  });

  it('closes the request when the consumer stops reading early', async () => {
    fake.handler = (res) => {
      startEvents(res);
      send(res, delta('one'));
    };
    for await (const f of model().stream({ tier: 'turbo', messages })) {
      expect(f).to.equal('one');
      break;
    }
    await within(fake.seen[0]!.closed, 1000, 'closing the request');
    expect(fake.seen[0]!.clientLeft).to.equal(true);
  });

  it('refuses to exist without an API key', () => {
    expect(() => new OpenAiChatModel({ baseUrl: fake.baseUrl, apiKey: undefined, models, timeoutMs: 1000 })).to.throw(/LLM_API_KEY/);
    expect(() => new OpenAiChatModel({ baseUrl: fake.baseUrl, apiKey: '', models, timeoutMs: 1000 })).to.throw(/LLM_API_KEY/);
  });
});

describe('languageModelFromConfig', () => {
  it('is the sandbox model by default', () => {
    expect(languageModelFromConfig(loadConfig({}))).to.be.instanceOf(SandboxLanguageModel);
  });

  it('is the OpenAI-compatible model with LLM_PROVIDER=openai, its models per tier from the configuration', () => {
    const m = languageModelFromConfig(loadConfig({ LLM_PROVIDER: 'openai', LLM_API_KEY: 'sk-x', LLM_MODEL_MAX: 'o-big' }));
    expect(m).to.be.instanceOf(OpenAiChatModel);
    expect(m.describe('max')).to.equal('o-big');
    expect(m.describe('turbo')).to.equal('gpt-4o-mini');
  });

  it('refuses LLM_PROVIDER=openai without LLM_API_KEY', () => {
    expect(() => languageModelFromConfig(loadConfig({ LLM_PROVIDER: 'openai' }))).to.throw(/invalid configuration[\s\S]*LLM_API_KEY/);
  });
});

describe('sandbox language model', () => {
  const sandbox = new SandboxLanguageModel();
  const reply = async (prompt: string, ...said: string[]) => {
    const msgs: ChatMessage[] = [{ role: 'system', content: prompt }];
    for (const s of said) msgs.push({ role: 'user', content: s }, { role: 'assistant', content: '…' });
    if (said.length > 0) msgs.pop();
    return (await collect(sandbox.stream({ tier: 'turbo', messages: msgs }))).join('');
  };
  const prompt = [
    'You are Ada, the receptionist of Acme Dental. Be brief.',
    'If the caller says "opening hours", answer "We open at nine."',
    '- when asked about prices, say “A check-up is 80 euros.”',
    'IF THE CALLER SAYS "hi" REPLY "Hello there!"',
    'If the caller says "hours", answer "This rule comes second."',
  ].join('\n');

  it('describes itself as the sandbox', () => {
    expect(sandbox.describe()).to.equal('sandbox');
  });

  it('answers from the first instruction whose words the caller’s latest message contains (case-insensitive)', async () => {
    expect(await reply(prompt, 'What are your OPENING   hours?')).to.equal('We open at nine.');
    expect(await reply(prompt, 'How much are your Prices?')).to.equal('A check-up is 80 euros.');
    expect(await reply(prompt, 'Hi!')).to.equal('Hello there!');
    expect(await reply(prompt, 'what about prices', 'and your hours?')).to.equal('This rule comes second.');
  });

  it('matches whole words only', async () => {
    expect(await reply(prompt, 'this is thinking out loud')).to.match(/^\(sandbox model\) I heard/);
  });

  it('answers every message with the same reply when told to, after the specific rules', async () => {
    const p = 'Answer every message with "Sorry, we are closed."\nIf the caller says "emergency", say "Call 112."';
    expect(await reply(p, 'Can I book?')).to.equal('Sorry, we are closed.');
    expect(await reply(p, 'This is an emergency')).to.equal('Call 112.');
  });

  it('ends every reply, the opening included, with the ending it was given, once', async () => {
    const p =
      'Always end with "Anything else?"\nIf the caller says "hours", answer "Nine to five."\nIf the caller says "more", answer "Sure. Anything else?"';
    expect(await reply(p, 'hours?')).to.equal('Nine to five. Anything else?');
    expect(await reply(p, 'more')).to.equal('Sure. Anything else?');
    expect(await reply(p)).to.equal('(sandbox model) Hello, how can I help you? Anything else?');
    expect(await reply(`${p}\nIf the caller says "nothing", answer ""`, 'nothing')).to.equal('Anything else?');
  });

  it('opens with a short sandbox greeting, or the greeting it was given', async () => {
    expect(await reply('You are Ada.')).to.equal('(sandbox model) Hello, how can I help you?');
    expect(await reply('You are Ada.\nGreet the caller with "Acme Dental, Ada speaking."')).to.equal('Acme Dental, Ada speaking.');
    expect(await reply('1. Start the call with "Hello!"')).to.equal('Hello!');
  });

  it('says what it heard and how the prompt begins when no instruction applies', async () => {
    expect(await reply(prompt, 'Hello, can I   book a cleaning?')).to.equal(
      '(sandbox model) I heard: Hello, can I book a cleaning. You are Ada, the receptionist of Acme Dental.',
    );
    expect(await reply('', '...')).to.equal('(sandbox model) I heard: (nothing). The system prompt is empty.');
    const long = Array.from({ length: 50 }, (_, i) => `w${i}`).join(' ');
    expect(await reply('Be kind', long)).to.equal(`(sandbox model) I heard: ${long.split(' ').slice(0, 40).join(' ')}…. Be kind`);
  });

  it('is deterministic', async () => {
    const msgs: ChatMessage[] = [
      { role: 'system', content: prompt },
      { role: 'user', content: 'Do you take new patients?' },
    ];
    const a = await collect(sandbox.stream({ tier: 'max', messages: msgs }));
    const b = await collect(sandbox.stream({ tier: 'turbo', messages: msgs }));
    expect(a).to.deep.equal(b);
  });

  it('streams the reply as several fragments with an asynchronous gap between them', async () => {
    const msgs: ChatMessage[] = [
      { role: 'system', content: 'You are Ada, the receptionist of Acme Dental.' },
      { role: 'user', content: 'Can I book a cleaning next Tuesday morning?' },
    ];
    const got: string[] = [];
    const otherWorkRanBetween: boolean[] = [];
    let otherWorkRan = false;
    for await (const f of sandbox.stream({ tier: 'turbo', messages: msgs })) {
      otherWorkRanBetween.push(otherWorkRan);
      got.push(f);
      otherWorkRan = false;
      setImmediate(() => {
        otherWorkRan = true;
      });
    }
    expect(got.length).to.be.above(3);
    expect(got.join('')).to.equal(
      '(sandbox model) I heard: Can I book a cleaning next Tuesday morning. You are Ada, the receptionist of Acme Dental.',
    );
    expect(otherWorkRanBetween.slice(1).every(Boolean), 'the event loop turned between fragments').to.equal(true);
  });

  it('stops quietly when the caller aborts', async () => {
    const ac = new AbortController();
    const got: string[] = [];
    const msgs: ChatMessage[] = [{ role: 'user', content: 'one two three four five six seven eight nine ten' }];
    for await (const f of sandbox.stream({ tier: 'turbo', messages: msgs, signal: ac.signal })) {
      got.push(f);
      ac.abort();
    }
    expect(got).to.have.length(1);
    await nextTurn();
  });
});
