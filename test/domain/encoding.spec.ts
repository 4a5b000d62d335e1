import { expect } from 'chai';
import { encodingOf, gsmSeptets, segmentsOf } from '../../domain/message/encoding.js';

const a = (n: number) => 'a'.repeat(n);
const ucs = (n: number) => 'д'.repeat(n); // Cyrillic: outside GSM-7, one UTF-16 unit
const EMOJI = '😀'; // one code point, a surrogate pair: two UTF-16 units

describe('message encoding and segments', () => {
  describe('encodingOf', () => {
    it('is GSM-7 for the whole default alphabet and extension table', () => {
      const all =
        '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
      expect(encodingOf(all)).to.equal('GSM-7');
      expect(encodingOf('^{}[]~|\\€\f')).to.equal('GSM-7');
    });

    it('switches the whole message to UCS-2 for a single character outside GSM-7', () => {
      expect(encodingOf(`${a(200)}ç`)).to.equal('UCS-2'); // lowercase c-cedilla is not in the default alphabet
      expect(encodingOf(`Hello ${EMOJI}`)).to.equal('UCS-2');
      expect(encodingOf('straight ’quote’')).to.equal('UCS-2'); // typographic apostrophe
      expect(encodingOf('tab\there')).to.equal('UCS-2');
      expect(encodingOf('escape \u001b alone')).to.equal('UCS-2');
    });

    it('does not normalise: a decomposed é (e + combining accent) is UCS-2, the composed one GSM-7', () => {
      expect(encodingOf('caf\u00e9')).to.equal('GSM-7');
      expect(encodingOf('cafe\u0301')).to.equal('UCS-2');
    });

    it('counts extension characters as two septets and basic ones as one', () => {
      for (const ch of '^{}[]~|\\€\f') expect(gsmSeptets(ch), ch).to.equal(2);
      for (const ch of 'a@£\n') expect(gsmSeptets(ch), ch).to.equal(1);
      expect(gsmSeptets('ç')).to.equal(null);
    });
  });

  describe('segmentsOf, GSM-7', () => {
    it('fits 160 septets in one segment', () => {
      expect(segmentsOf(a(160))).to.deep.equal({ encoding: 'GSM-7', segments: 1, characters: 160, units: 160 });
    });

    it('takes two segments from 161 septets', () => {
      expect(segmentsOf(a(161))).to.deep.equal({ encoding: 'GSM-7', segments: 2, characters: 161, units: 161 });
    });

    it('fits 153 * 2 septets in two segments and needs a third for one more', () => {
      expect(segmentsOf(a(306)).segments).to.equal(2);
      expect(segmentsOf(a(307)).segments).to.equal(3);
      expect(segmentsOf(a(459)).segments).to.equal(3);
    });

    it('counts € and the other extension characters twice: 80 of them fill one segment, 81 need two', () => {
      expect(segmentsOf('€'.repeat(80))).to.deep.equal({ encoding: 'GSM-7', segments: 1, characters: 80, units: 160 });
      expect(segmentsOf('€'.repeat(81))).to.deep.equal({ encoding: 'GSM-7', segments: 2, characters: 81, units: 162 });
      expect(segmentsOf(`${a(159)}^`).segments).to.equal(2); // 161 septets
      expect(segmentsOf(`${a(158)}{`).segments).to.equal(1); // exactly 160
    });

    it('never splits an escape from its character across segments', () => {
      // 152 septets, then `|` (2) does not fit in the 153 of the first segment: it opens the second one
      const body = `${a(152)}|${a(150)}`; // 152 + (2 + 150): two segments
      expect(segmentsOf(body)).to.include({ segments: 2, units: 304 });
      const tight = `${a(152)}|${a(152)}`; // 306 septets: would fit 2 * 153 if the pair could be split; it cannot
      expect(segmentsOf(tight)).to.include({ segments: 3, units: 306 });
    });

    it('counts the empty text as no segment', () => {
      expect(segmentsOf('')).to.deep.equal({ encoding: 'GSM-7', segments: 0, characters: 0, units: 0 });
    });
  });

  describe('segmentsOf, UCS-2', () => {
    it('fits 70 code units in one segment and takes two from 71', () => {
      expect(segmentsOf(ucs(70))).to.deep.equal({ encoding: 'UCS-2', segments: 1, characters: 70, units: 70 });
      expect(segmentsOf(ucs(71))).to.deep.equal({ encoding: 'UCS-2', segments: 2, characters: 71, units: 71 });
    });

    it('fills later segments with 67 units', () => {
      expect(segmentsOf(ucs(134)).segments).to.equal(2);
      expect(segmentsOf(ucs(135)).segments).to.equal(3);
    });

    it('counts an emoji as one character but two units', () => {
      expect(segmentsOf(EMOJI)).to.deep.equal({ encoding: 'UCS-2', segments: 1, characters: 1, units: 2 });
      expect(segmentsOf(EMOJI.repeat(35))).to.include({ segments: 1, units: 70 });
      expect(segmentsOf(EMOJI.repeat(36))).to.include({ segments: 2, units: 72 });
    });

    it('never splits a surrogate pair across segments', () => {
      // 66 units then an emoji (2): 68 > 67, so the emoji opens the second segment
      expect(segmentsOf(`${ucs(66)}${EMOJI}${ucs(65)}`)).to.include({ segments: 2, units: 133 });
      // 134 units would fit 2 * 67 if the pair could be split; with it whole, a third segment is needed
      expect(segmentsOf(`${ucs(66)}${EMOJI}${ucs(66)}`)).to.include({ segments: 3, units: 134 });
    });

    it('counts GSM characters of a UCS-2 message as one unit each, extension characters included', () => {
      expect(segmentsOf(`€${'д'}`)).to.include({ encoding: 'UCS-2', units: 2, characters: 2 });
      expect(segmentsOf(`${a(69)}д`)).to.include({ segments: 1, units: 70 });
    });
  });
});
