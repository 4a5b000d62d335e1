import { expect } from 'chai';
import { answerMismatch, findAnswer, parseBlocks, serverEnv, stepsOf } from '../support/tour.js';

/** The runner of docs/tour.md (test/support/tour.ts): what it takes as a command, and which answers it refuses. */
describe('the tour runner', () => {
  const doc = [
    '# Title',
    '```sh server',
    'ADMIN_TOKEN=abc DATA_DIR=memory:// npm start',
    '```',
    '```sh',
    'api POST /v1/agents \'{"name":"A",',
    '  "beginMessage":"Hi"}\'',
    '# → 201 {"id":"agt_…","name":"A",…}',
    '#   and a continued line',
    'X=$(jq -r .id <<<"$R")',
    'for i in 1 2; do',
    '  echo $i',
    'done',
    '# → 2',
    '```',
    '```sh terminal-2',
    'node -e "server"',
    '```',
    '```json',
    '{"not": "shell"}',
    '```',
  ].join('\n');

  it('finds the blocks, their terminals and the server variables', () => {
    const blocks = parseBlocks(doc);
    expect(blocks.map((b) => [b.kind, b.terminal])).to.deep.equal([
      ['server', 'server'],
      ['main', 'main'],
      ['background', 'terminal-2'],
    ]);
    expect(serverEnv(blocks)).to.deep.equal({ ADMIN_TOKEN: 'abc', DATA_DIR: 'memory://' });
  });

  it('splits a block into whole commands, multi-line ones included, each with the answers after it', () => {
    const steps = stepsOf(parseBlocks(doc)[1]!);
    expect(steps.map((s) => s.command.split('\n').length)).to.deep.equal([2, 1, 3]);
    expect(steps[0]!.expectations).to.deep.equal(['201 {"id":"agt_…","name":"A",…} and a continued line']);
    expect(steps[1]!.expectations).to.deep.equal([]);
    expect(steps[2]!.expectations).to.deep.equal(['2']);
    expect(steps[0]!.line).to.equal(6);
  });

  it('accepts an answer that fits the pattern', () => {
    expect(answerMismatch('201 {"id":"agt_…","name":"A",…}', '201 {"name":"A","id":"agt_1","x":[1]}')).to.equal(null);
    expect(
      answerMismatch('200 {"data":[…,{"role":"agent"},…]}', '200 {"data":[{"role":"user"},{"role":"agent"},{"role":"user"}]}'),
    ).to.equal(null);
    expect(answerMismatch('200 [{"n":1},…]', '200 [{"n":1},{"n":2}]')).to.equal(null);
    expect(answerMismatch('back: …', 'back: whd_1')).to.equal(null);
  });

  it('refuses another status, a different value, a missing member, an unexpected member and a short array', () => {
    expect(answerMismatch('201 {"id":"agt_…",…}', '200 {"id":"agt_1"}')).to.match(/expected status 201, got 200/);
    expect(answerMismatch('201 {"name":"A",…}', '201 {"name":"B"}')).to.match(/\$\.name: expected "A", got "B"/);
    expect(answerMismatch('201 {"name":"A",…}', '201 {"id":"x"}')).to.match(/\$\.name: missing/);
    expect(answerMismatch('201 {"name":"A"}', '201 {"name":"A","id":"x"}')).to.match(/unexpected members id/);
    expect(answerMismatch('201 {"id":"agt_…"}', '201 {"id":"pn_1"}')).to.match(/expected "agt_…"/);
    expect(answerMismatch('200 [{"n":1},{"n":2}]', '200 [{"n":1}]')).to.not.equal(null);
    expect(answerMismatch('200 {"ok":true}', '200 not json')).to.match(/not JSON/);
  });

  it('looks for the answer among every line the command printed', () => {
    expect(findAnswer('200 {"a":1}', ['noise', '200 {"a":1}'])).to.deep.equal({ ok: true });
    const missed = findAnswer('200 {"a":1}', ['200 {"a":2}']);
    expect(missed.ok).to.equal(false);
    expect(findAnswer('200 {"a":1}', [])).to.deep.equal({ ok: false, why: 'the command printed nothing' });
  });
});
