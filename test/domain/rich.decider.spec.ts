import { expect } from 'chai';
import { type CapabilityCheckEvent, capabilityCheckDecider } from '../../domain/rich/capability-check.decider.js';
import { type CardNames, type ContactCardEvent, contactCardDecider } from '../../domain/rich/contact-card.decider.js';
import { imageTypeOf } from '../../domain/rich/image-type.js';
import { type LocationRefreshEvent, locationRefreshDecider } from '../../domain/rich/location-refresh.decider.js';
import { type RichConversationEvent, richConversationDecider } from '../../domain/rich/rich-conversation.decider.js';
import { type RichLineEvent, richLineDecider } from '../../domain/rich/rich-line.decider.js';
import type { StoredImage } from '../../domain/rich/stored-image.js';
import { deciderSpec } from '../support/decider-spec.js';

const now = '2026-03-01T10:00:00.000Z';
const accountId = 'acc_1';
const metadata = { now, accountId };
const cmd = <T extends string, D extends object>(type: T, data: D) => ({ type, data, metadata }) as const;

describe('rich line decider (docs/rich-messaging.md#lines)', () => {
  const { given } = deciderSpec(richLineDecider);
  const activated: RichLineEvent = {
    type: 'RichLineActivated',
    data: { numberId: 'pn_1', accountId, phoneNumber: '+12045550100', activatedAt: now },
  };
  it('activates a number the provider serves', () =>
    given([])
      .when(cmd('ActivateRichLine', { numberId: 'pn_1', phoneNumber: '+12045550100' }))
      .then([activated]));
  it('treats a second activation as a no-op', () =>
    given([activated])
      .when(cmd('ActivateRichLine', { numberId: 'pn_1', phoneNumber: '+12045550100' }))
      .then([]));
  it('deactivates an active line, once', () => {
    given([activated])
      .when(cmd('DeactivateRichLine', { numberId: 'pn_1' }))
      .then([{ type: 'RichLineDeactivated', data: { numberId: 'pn_1', deactivatedAt: now } }]);
    given([])
      .when(cmd('DeactivateRichLine', { numberId: 'pn_1' }))
      .then([]);
  });
});

describe('capability check decider (docs/rich-messaging.md#capabilities)', () => {
  const { given } = deciderSpec(capabilityCheckDecider);
  const requested: CapabilityCheckEvent = {
    type: 'ContactCapabilityCheckRequested',
    data: {
      checkId: 'rcc_1',
      accountId,
      phoneNumber: '+12015550130',
      lineNumberId: 'pn_1',
      linePhoneNumber: '+12045550100',
      requestedAt: now,
    },
  };
  it('records the request once', () => {
    given([])
      .when(
        cmd('RequestCapabilityCheck', {
          checkId: 'rcc_1',
          phoneNumber: '+12015550130',
          lineNumberId: 'pn_1',
          linePhoneNumber: '+12045550100',
        }),
      )
      .then([requested]);
    given([requested])
      .when(
        cmd('RequestCapabilityCheck', {
          checkId: 'rcc_1',
          phoneNumber: '+12015550130',
          lineNumberId: 'pn_1',
          linePhoneNumber: '+12045550100',
        }),
      )
      .then([]);
  });
  it('takes the answer of a pending check, at the time it came', () =>
    given([requested])
      .when(cmd('RecordCapabilities', { checkId: 'rcc_1', imessage: true, sms: true }))
      .then([
        {
          type: 'ContactCapabilitiesChecked',
          data: { checkId: 'rcc_1', accountId, phoneNumber: '+12015550130', imessage: true, sms: true, checkedAt: now },
        },
      ]));
  it('ignores a late answer after a failure, and a repeated answer', () => {
    const failed: CapabilityCheckEvent = {
      type: 'ContactCapabilityCheckFailed',
      data: { checkId: 'rcc_1', phoneNumber: '+12015550130', reason: 'down', failedAt: now },
    };
    given([requested, failed])
      .when(cmd('RecordCapabilities', { checkId: 'rcc_1', imessage: true, sms: true }))
      .then([]);
    given([requested])
      .when(cmd('RecordCapabilityCheckFailure', { checkId: 'rcc_1', reason: 'down' }))
      .then([failed]);
  });
});

describe('contact card decider (docs/rich-messaging.md#contact-cards)', () => {
  const { given } = deciderSpec(contactCardDecider);
  const names: CardNames = { firstName: 'Ada', lastName: null, displayName: 'Acme' };
  const avatar: StoredImage = { mediaId: 'med_1', contentType: 'image/png', bytes: 64, sha256: 'ab' };
  const requested = (changeId: string, avatarUrl: string | null): ContactCardEvent => ({
    type: 'ContactCardChangeRequested',
    data: { numberId: 'pn_1', accountId, changeId, linePhoneNumber: '+12045550100', names, avatarUrl, requestedAt: now },
  });
  const set = (changeId: string, version: number, a: StoredImage | null): ContactCardEvent => ({
    type: 'ContactCardSet',
    data: { numberId: 'pn_1', accountId, changeId, linePhoneNumber: '+12045550100', names, avatar: a, version, setAt: now },
  });
  const request = (changeId: string, avatarUrl: string | null) =>
    cmd('RequestContactCard', { numberId: 'pn_1', changeId, linePhoneNumber: '+12045550100', names, avatarUrl });

  it('records a change as pending, and the same change again as a no-op', () => {
    given([])
      .when(request('c1', 'https://x/a.png'))
      .then([requested('c1', 'https://x/a.png')]);
    given([requested('c1', 'https://x/a.png')])
      .when(request('c1', 'https://x/a.png'))
      .then([]);
  });
  it('sets the card with the fetched avatar as the next version', () =>
    given([requested('c1', 'https://x/a.png')])
      .when(cmd('ApplyCardChange', { numberId: 'pn_1', changeId: 'c1', avatar }))
      .then([set('c1', 1, avatar)]));
  it('sets a card without an avatar only for a change that named none', () => {
    given([requested('c1', null)])
      .when(cmd('ApplyCardChange', { numberId: 'pn_1', changeId: 'c1', avatar: null }))
      .then([set('c1', 1, null)]);
    given([requested('c1', 'https://x/a.png')])
      .when(cmd('ApplyCardChange', { numberId: 'pn_1', changeId: 'c1', avatar: null }))
      .then([]);
  });
  it('refuses an avatar and keeps the card as it was; a decided change is never applied later', () => {
    const rejected: ContactCardEvent = {
      type: 'ContactCardChangeRejected',
      data: { numberId: 'pn_1', changeId: 'c2', reason: 'not an image', rejectedAt: now },
    };
    given([requested('c1', null), set('c1', 1, null), requested('c2', 'https://x/t.png')])
      .when(cmd('RejectCardAvatar', { numberId: 'pn_1', changeId: 'c2', reason: 'not an image' }))
      .then([rejected]);
    given([requested('c1', null), set('c1', 1, null), requested('c2', 'https://x/t.png'), rejected])
      .when(cmd('ApplyCardChange', { numberId: 'pn_1', changeId: 'c2', avatar }))
      .then([]);
    const s = [requested('c1', null), set('c1', 1, null), requested('c2', 'https://x/t.png'), rejected].reduce(
      contactCardDecider.evolve,
      contactCardDecider.initialState(),
    );
    expect(s.card).to.deep.equal({ names, avatar: null });
  });
  it('deletes a card with the next version; deleting none is a no-op', () => {
    given([requested('c1', null), set('c1', 1, null)])
      .when(cmd('DeleteContactCard', { numberId: 'pn_1', linePhoneNumber: '+12045550100' }))
      .then([
        { type: 'ContactCardDeleted', data: { numberId: 'pn_1', accountId, linePhoneNumber: '+12045550100', version: 2, deletedAt: now } },
      ]);
    given([])
      .when(cmd('DeleteContactCard', { numberId: 'pn_1', linePhoneNumber: '+12045550100' }))
      .then([]);
  });
  it('records what the provider holds, never an older version again', () => {
    given([requested('c1', null), set('c1', 1, null)])
      .when(cmd('RecordCardPublished', { numberId: 'pn_1', version: 1 }))
      .then([{ type: 'ContactCardPublished', data: { numberId: 'pn_1', version: 1, publishedAt: now } }]);
    given([
      requested('c1', null),
      set('c1', 1, null),
      { type: 'ContactCardPublished', data: { numberId: 'pn_1', version: 1, publishedAt: now } },
    ])
      .when(cmd('RecordCardPublished', { numberId: 'pn_1', version: 1 }))
      .then([]);
  });
});

describe('rich conversation decider: backgrounds and typing (docs/rich-messaging.md#chat-backgrounds)', () => {
  const { given } = deciderSpec(richConversationDecider);
  const where = { linePhoneNumber: '+12045550100', participant: '+12015550130' };
  const image = (sha256: string): StoredImage => ({ mediaId: `med_${sha256}`, contentType: 'image/png', bytes: 64, sha256 });
  const requested = (changeId: string): RichConversationEvent => ({
    type: 'ChatBackgroundRequested',
    data: { conversationId: 'conv_1', ...where, accountId, changeId, imageUrl: 'https://x/w.png', requestedAt: now },
  });
  const fetched = (changeId: string, sha: string): RichConversationEvent => ({
    type: 'ChatBackgroundImageFetched',
    data: { conversationId: 'conv_1', changeId, image: image(sha), backgroundId: `bg_${sha}`, fetchedAt: now },
  });
  const applied = (changeId: string, sha: string, version: number): RichConversationEvent => ({
    type: 'ChatBackgroundSet',
    data: { conversationId: 'conv_1', changeId, backgroundId: `bg_${sha}`, version, sha256: sha, setAt: now },
  });
  const first = [requested('b1'), fetched('b1', 'aa'), applied('b1', 'aa', 1)];

  it('sets a fetched image once the provider took it, as version 1', () =>
    given([requested('b1'), fetched('b1', 'aa')])
      .when(cmd('RecordBackgroundApplied', { conversationId: 'conv_1', changeId: 'b1' }))
      .then([applied('b1', 'aa', 1)]));
  it('keeps the same image as it is (the request settles, changed false)', () =>
    given([...first, requested('b2')])
      .when(cmd('RecordBackgroundImage', { conversationId: 'conv_1', changeId: 'b2', image: image('aa'), backgroundId: 'bg_aa' }))
      .then([
        { type: 'ChatBackgroundKept', data: { conversationId: 'conv_1', changeId: 'b2', backgroundId: 'bg_aa', version: 1, keptAt: now } },
      ]));
  it('replaces with another image as the next version', () =>
    given([...first, requested('b2'), fetched('b2', 'bb')])
      .when(cmd('RecordBackgroundApplied', { conversationId: 'conv_1', changeId: 'b2' }))
      .then([applied('b2', 'bb', 2)]));
  it('refuses an image without touching the background', () =>
    given([...first, requested('b2')])
      .when(cmd('RejectBackground', { conversationId: 'conv_1', changeId: 'b2', reason: 'too big' }))
      .then([{ type: 'ChatBackgroundRejected', data: { conversationId: 'conv_1', changeId: 'b2', reason: 'too big', rejectedAt: now } }]));
  it('removes a background; removing none is a no-op', () => {
    given(first)
      .when(cmd('RemoveBackground', { conversationId: 'conv_1', ...where }))
      .then([{ type: 'ChatBackgroundRemoved', data: { conversationId: 'conv_1', ...where, accountId, version: 2, removedAt: now } }]);
    given([])
      .when(cmd('RemoveBackground', { conversationId: 'conv_1', ...where }))
      .then([]);
  });
  it('records a typing indicator once', () => {
    const sent: RichConversationEvent = { type: 'TypingIndicatorSent', data: { conversationId: 'conv_1', typingId: 't1', sentAt: now } };
    given([])
      .when(cmd('RecordTypingSent', { conversationId: 'conv_1', typingId: 't1' }))
      .then([sent]);
    given([sent])
      .when(cmd('RecordTypingSent', { conversationId: 'conv_1', typingId: 't1' }))
      .then([]);
  });
});

describe('location refresh decider (docs/rich-messaging.md#location)', () => {
  const { given } = deciderSpec(locationRefreshDecider);
  const lines = [{ numberId: 'pn_1', phoneNumber: '+12045550100' }];
  const requested: LocationRefreshEvent = {
    type: 'LocationRefreshRequested',
    data: { refreshId: 'lrf_1', accountId, lines, requestedAt: now },
  };
  const locations = [{ phoneNumber: '+14155550140', numberId: 'pn_1', sharing: true, latitude: 37.78, longitude: -122.4, fixAt: now }];
  it('takes one report for a requested refresh, and no second one', () => {
    given([requested])
      .when(cmd('RecordLocations', { refreshId: 'lrf_1', locations }))
      .then([{ type: 'ContactLocationsReported', data: { refreshId: 'lrf_1', accountId, locations, reportedAt: now } }]);
    given([requested, { type: 'ContactLocationsReported', data: { refreshId: 'lrf_1', accountId, locations, reportedAt: now } }])
      .when(cmd('RecordLocations', { refreshId: 'lrf_1', locations }))
      .then([]);
  });
});

describe('images are told by their bytes (docs/rich-messaging.md#images)', () => {
  const bytes = (...parts: (string | number[])[]) =>
    new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p)).concat(Array(16).fill(0)));
  it('knows JPEG, PNG, GIF, WebP and HEIC', () => {
    expect(imageTypeOf(bytes([0xff, 0xd8, 0xff, 0xe1]))).to.equal('image/jpeg');
    expect(imageTypeOf(bytes([0x89], 'PNG', [0x0d, 0x0a, 0x1a, 0x0a]))).to.equal('image/png');
    expect(imageTypeOf(bytes('GIF87a'))).to.equal('image/gif');
    expect(imageTypeOf(bytes('RIFF', [1, 2, 3, 4], 'WEBP'))).to.equal('image/webp');
    expect(imageTypeOf(bytes([0, 0, 0, 24], 'ftypheic'))).to.equal('image/heic');
    expect(imageTypeOf(bytes([0, 0, 0, 24], 'ftypmif1'))).to.equal('image/heic');
  });
  it('refuses everything else, whatever it is called: text, PDF, MP4, SVG, an empty file', () => {
    expect(imageTypeOf(bytes('<html>'))).to.equal(null);
    expect(imageTypeOf(bytes('%PDF-1.7'))).to.equal(null);
    expect(imageTypeOf(bytes([0, 0, 0, 24], 'ftypisom'))).to.equal(null);
    expect(imageTypeOf(bytes('<svg xmlns='))).to.equal(null);
    expect(imageTypeOf(new Uint8Array())).to.equal(null);
    expect(imageTypeOf(bytes('RIFF', [1, 2, 3, 4], 'WAVE'))).to.equal(null);
  });
});
