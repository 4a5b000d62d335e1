import { expect } from 'chai';
import { type Carrier, carrierByAddress, distinctCarriers, parseCarrierList } from '../../infrastructure/sip/carriers.js';
import { DEFAULT_NUMBER_FORMAT, fromCarrier, toCarrier } from '../../infrastructure/sip/number-format.js';

/** Carriers' rules (docs/sip.md#carriers): whose INVITE is whose, how each writes numbers, what a configuration may say. */
describe('SIP carriers: addresses, number formats, configuration', () => {
  const carriers = parseCarrierList(
    JSON.stringify([
      { id: 'one', inbound: { addresses: ['192.0.2.10', '198.51.100.0/24'] } },
      { id: 'six', inbound: { addresses: ['2001:db8:1::/48'] } },
      { id: 'out', outbound: { host: 'gw.example' } },
    ]),
    'SIP_CARRIERS',
  );

  it('takes an INVITE as the carrier whose address or CIDR block it comes from', () => {
    expect(carrierByAddress(carriers, '192.0.2.10')?.id).to.equal('one');
    expect(carrierByAddress(carriers, '198.51.100.254')?.id).to.equal('one');
    expect(carrierByAddress(carriers, '2001:db8:1:ffff::5')?.id).to.equal('six');
    expect(carrierByAddress(carriers, '192.0.2.11')).to.equal(null);
    expect(carrierByAddress(carriers, '198.51.101.1')).to.equal(null);
    expect(carrierByAddress(carriers, '2001:db8:2::1')).to.equal(null);
  });

  it('fills in the defaults of a carrier entry', () => {
    expect(carriers[2]).to.deep.equal({
      id: 'out',
      name: 'out',
      inbound: { addresses: [], username: null, password: null },
      outbound: {
        host: 'gw.example',
        port: 5060,
        transport: 'udp',
        username: null,
        password: null,
        register: false,
        registerExpiresSeconds: 3600,
      },
      numberFormat: DEFAULT_NUMBER_FORMAT,
    } satisfies Carrier);
  });

  it('refuses a configuration that is no JSON, breaks the schema or names an id twice', () => {
    expect(() => parseCarrierList('[', 'SIP_CARRIERS')).to.throw(/SIP_CARRIERS: not JSON/);
    expect(() => parseCarrierList('[{"id":"x","inbound":{"addresses":["300.1.1.1"]}}]', 'F')).to.throw(/F: 0\.inbound\.addresses\.0/);
    expect(() => parseCarrierList('[{"id":"Upper"}]', 'F')).to.throw(/0\.id/);
    expect(() =>
      distinctCarriers([
        { source: 'SIP_CARRIERS', carriers },
        { source: 'SIP_CARRIERS_FILE (c.json)', carriers: carriers.slice(0, 1) },
      ]),
    ).to.throw(/SIP_CARRIERS_FILE \(c\.json\): carrier id one is given twice \(also in SIP_CARRIERS\)/);
  });

  it('writes E.164 numbers as each carrier wants them', () => {
    expect(toCarrier('+14155550100', DEFAULT_NUMBER_FORMAT)).to.equal('+14155550100');
    expect(toCarrier('+14155550100', { plus: false, prefix: '', defaultCountryCode: '1' })).to.equal('14155550100');
    expect(toCarrier('+442071838750', { plus: false, prefix: '9#', defaultCountryCode: '44' })).to.equal('9#442071838750');
  });

  it('reads the numbers a carrier sends as E.164, or none', () => {
    const us = DEFAULT_NUMBER_FORMAT;
    const prefixed = { plus: false, prefix: '9#', defaultCountryCode: '1' };
    const cases: [string, typeof us, string | null][] = [
      ['+14155550100', us, '+14155550100'],
      ['14155550100', us, '+14155550100'],
      ['4155550100', us, '+14155550100'],
      ['(415) 555-0100', us, '+14155550100'],
      ['%2B14155550100', us, '+14155550100'],
      ['0044207183875', us, '+44207183875'],
      ['+14155550100;npdi', us, '+14155550100'],
      ['9#14155550100', prefixed, '+14155550100'],
      ['alice', us, null],
      ['1234', us, null],
      ['+0123456789', us, null],
      ['+1234567890123456', us, null],
    ];
    for (const [user, f, e164] of cases) expect(fromCarrier(user, f), user).to.equal(e164);
  });
});
