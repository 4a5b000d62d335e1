import { expect } from 'chai';
import { isStorable, storableJson, storableText } from '../../domain/shared/storable-text.js';

/** Upstream text made storable (docs/input-rules.md#what-upstream-servers-answer). */
describe('storable text', () => {
  it('replaces NUL and lone surrogates with U+FFFD and keeps pairs and other text', () => {
    expect(storableText('ok\u0000done')).to.equal('ok\ufffddone');
    expect(storableText('\ud800 and \udfff')).to.equal('\ufffd and \ufffd');
    expect(storableText('smile \ud83d\ude00')).to.equal('smile \ud83d\ude00');
    expect(isStorable(storableText('\u0000\ud800x\udc00'))).to.equal(true);
    expect(isStorable('a\u0000')).to.equal(false);
  });

  it('cuts within the bound at a code-point boundary, never leaving half a surrogate pair', () => {
    const s = `${'a'.repeat(9)}\ud83d\ude00tail`;
    const cut = storableText(s, 11);
    expect(cut.length).to.be.at.most(11);
    expect(cut).to.equal(`${'a'.repeat(9)}…`);
    expect(isStorable(cut)).to.equal(true);
    expect(storableText('short', 10)).to.equal('short');
  });

  it('makes JSON storable: strings and keys, and nothing nested deeper than the bound', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 40; i++) deep = [deep];
    const out = storableJson({ 'k\u0000': ['v\ud800'], deep, n: 1, b: true }, 32) as Record<string, unknown>;
    expect(out['k\ufffd']).to.deep.equal(['v\ufffd']);
    expect(out.n).to.equal(1);
    expect(JSON.stringify(out.deep)).not.to.include('bottom');
  });
});
