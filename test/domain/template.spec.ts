import { expect } from 'chai';
import { fillTemplate, placeholders } from '../../domain/call/template.js';

describe('prompt templates', () => {
  it('fills {{name}} and {{ name }} (spaces or tabs inside the braces)', () => {
    const r = fillTemplate('Hi {{name}}, {{ name }} and {{\tname\t}}!', { name: 'Ada' });
    expect(r).to.deep.equal({ text: 'Hi Ada, Ada and Ada!', unknown: [] });
  });

  it('accepts names of letters, digits, _, - and .', () => {
    const vars = { first_name: 'Ada', 'order-id': '42', 'customer.city': 'Paris', v2: 'two', prénom: 'Zoé' };
    const r = fillTemplate('{{first_name}} {{order-id}} {{customer.city}} {{v2}} {{prénom}}', vars);
    expect(r).to.deep.equal({ text: 'Ada 42 Paris two Zoé', unknown: [] });
  });

  it('leaves an unknown placeholder as written and reports each unknown name once, in order of appearance', () => {
    const r = fillTemplate('{{ b }} {{a}} {{known}} {{b}} {{c}} {{a}}', { known: 'K' });
    expect(r).to.deep.equal({ text: '{{ b }} {{a}} K {{b}} {{c}} {{a}}', unknown: ['b', 'a', 'c'] });
  });

  it('inserts values as written: no replacement patterns, no second expansion', () => {
    const r = fillTemplate('{{x}} / {{y}}', { x: '$& $1 $$', y: '{{x}}' });
    expect(r).to.deep.equal({ text: '$& $1 $$ / {{x}}', unknown: [] });
  });

  it('fills an empty value', () => {
    expect(fillTemplate('[{{x}}]', { x: '' })).to.deep.equal({ text: '[]', unknown: [] });
  });

  it('treats names of Object.prototype as unknown unless given', () => {
    expect(fillTemplate('{{constructor}} {{toString}} {{__proto__}}', {})).to.deep.equal({
      text: '{{constructor}} {{toString}} {{__proto__}}',
      unknown: ['constructor', 'toString', '__proto__'],
    });
    expect(fillTemplate('{{constructor}}', { constructor: 'c' }).text).to.equal('c');
  });

  it('leaves text that is not a placeholder alone and does not report it', () => {
    const text = '{{}} {{ }} {{a b}} {name} {{name} {{na$me}} {{\nname}} {{name\n}}';
    expect(fillTemplate(text, { name: 'X', a: 'A', b: 'B' })).to.deep.equal({ text, unknown: [] });
    expect(placeholders(text)).to.deep.equal([]);
  });

  it('fills the placeholder inside extra braces', () => {
    expect(fillTemplate('{{{name}}}', { name: 'Ada' }).text).to.equal('{Ada}');
  });

  it('lists the placeholder names, each once, in order of first appearance', () => {
    expect(placeholders('Dear {{ name }}, order {{order.id}} for {{name}} at {{ city }}.')).to.deep.equal(['name', 'order.id', 'city']);
    expect(placeholders('no placeholders here')).to.deep.equal([]);
  });

  it('returns a text without placeholders unchanged', () => {
    expect(fillTemplate('You are a helpful receptionist.', { name: 'Ada' })).to.deep.equal({
      text: 'You are a helpful receptionist.',
      unknown: [],
    });
  });
});
