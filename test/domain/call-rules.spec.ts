import { expect } from 'chai';
import type { TranscriptEntry } from '../../domain/call/call.js';
import { summarize } from '../../domain/call/summary.js';
import { bargeInDelayMs, isBackchannel } from '../../domain/call/turn-taking.js';
import { parseVoiceReply, takeSentences } from '../../domain/call/voice-reply.js';

const user = (content: string): TranscriptEntry => ({ role: 'user', content });
const agent = (content: string): TranscriptEntry => ({ role: 'agent', content });

describe('Turn-taking: backchannels', () => {
  it('takes short acknowledgements as backchannels', () => {
    for (const t of ['uh-huh', 'mm-hmm', 'yeah okay', 'mhm', 'right', 'I see', 'got it', 'all right', 'yep'])
      expect(isBackchannel(t), t).to.equal(true);
  });

  it('ignores case, punctuation and spacing', () => {
    for (const t of ['Uh-huh.', 'MM-HMM!', '  Yeah,   okay… ', 'Okay?', 'uh huh', 'Mm hmm.', 'Right, right.'])
      expect(isBackchannel(t), t).to.equal(true);
  });

  it('takes a run of up to three backchannel words or phrases, however the transcriber spelt them', () => {
    for (const t of ['uh-huh right', 'uh huh right', 'okay, I see', 'yeah got it', 'mm hmm okay', 'yes, all right'])
      expect(isBackchannel(t), t).to.equal(true);
  });

  it('does not take real speech, a refusal or a request to stop as a backchannel', () => {
    for (const t of ['yeah but wait a second', 'stop', 'no', 'wait', 'okay stop', 'yeah no', 'I see a problem', 'what?'])
      expect(isBackchannel(t), t).to.equal(false);
  });

  it('does not take more than three words as a backchannel, even of backchannel words', () => {
    expect(isBackchannel('yeah yeah okay')).to.equal(true);
    expect(isBackchannel('yeah yeah okay right')).to.equal(false);
  });

  it('does not take silence or noise as a backchannel', () => {
    for (const t of ['', '   ', '...', '?!', '-']) expect(isBackchannel(t), JSON.stringify(t)).to.equal(false);
  });
});

describe('Turn-taking: barge-in delay', () => {
  it('cuts the agent at once at sensitivity 1 and never at 0', () => {
    expect(bargeInDelayMs(1)).to.equal(0);
    expect(bargeInDelayMs(0)).to.equal(null);
  });

  it('waits about 1.5 s at sensitivity 0.1', () => expect(bargeInDelayMs(0.1)).to.be.within(1450, 1550));

  it('clamps sensitivities outside 0..1', () => {
    expect(bargeInDelayMs(1.7)).to.equal(0);
    expect(bargeInDelayMs(-0.3)).to.equal(null);
  });

  it('waits less the more sensitive the agent is', () => {
    let previous = Number.POSITIVE_INFINITY;
    for (let i = 1; i <= 100; i++) {
      const d = bargeInDelayMs(i / 100);
      expect(d, `sensitivity ${i / 100}`).to.be.a('number');
      expect(d!, `sensitivity ${i / 100}`)
        .to.be.at.least(0)
        .and.below(previous);
      expect(Number.isInteger(d), 'whole milliseconds').to.equal(true);
      previous = d!;
    }
  });
});

describe('Voice replies: parsing one answer object', () => {
  const reply = (o: Partial<{ text: string | null; interim: boolean; action: 'transfer' | 'end_call' | null; digits: string | null }>) => ({
    text: null,
    interim: false,
    action: null,
    digits: null,
    ...o,
  });
  const errorOf = (v: unknown) => {
    const r = parseVoiceReply(v);
    expect(r, JSON.stringify(v)).to.have.property('error').that.is.a('string');
    return (r as { error: string }).error;
  };

  it('reads text, and `response` as another name for it', () => {
    expect(parseVoiceReply({ text: 'Hello there.' })).to.deep.equal(reply({ text: 'Hello there.' }));
    expect(parseVoiceReply({ response: 'Hello there.' })).to.deep.equal(reply({ text: 'Hello there.' }));
  });

  it('takes blank text as no text, and refuses text that is not a string', () => {
    expect(parseVoiceReply({ text: '  \n' })).to.deep.equal(reply({}));
    expect(parseVoiceReply({})).to.deep.equal(reply({}));
    expect(errorOf({ text: 42 })).to.include('text');
    expect(errorOf({ text: ['a'] })).to.include('text');
  });

  it('marks interim text only for interim: true', () => {
    expect(parseVoiceReply({ text: 'One moment.', interim: true })).to.deep.equal(reply({ text: 'One moment.', interim: true }));
    expect(parseVoiceReply({ text: 'One moment.', interim: 'yes' })).to.deep.equal(reply({ text: 'One moment.' }));
  });

  it('reads keypad digits under digits, press_digit or dtmf', () => {
    expect(parseVoiceReply({ digits: '1234#' })).to.deep.equal(reply({ digits: '1234#' }));
    expect(parseVoiceReply({ press_digit: '*9' })).to.deep.equal(reply({ digits: '*9' }));
    expect(parseVoiceReply({ dtmf: '0' })).to.deep.equal(reply({ digits: '0' }));
    expect(parseVoiceReply({ text: 'Pressing one.', press_digit: '1' })).to.deep.equal(reply({ text: 'Pressing one.', digits: '1' }));
  });

  it('takes digits given as a JSON number', () => {
    expect(parseVoiceReply({ digits: 5 })).to.deep.equal(reply({ digits: '5' }));
    expect(parseVoiceReply({ dtmf: 42 })).to.deep.equal(reply({ digits: '42' }));
  });

  it('refuses anything that is not keypad digits', () => {
    for (const digits of ['12a', '', '1 2', '+1', 'one', 1.5, -1, true, { d: 1 }, '1'.repeat(65)])
      expect(errorOf({ digits })).to.include('digits');
    expect(errorOf({ press_digit: 'A' })).to.include('digits');
    expect(errorOf({ dtmf: 'p' })).to.include('digits');
  });

  it('reads the transfer and end_call actions, and end_call: true', () => {
    expect(parseVoiceReply({ text: 'Transferring you.', action: 'transfer' })).to.deep.equal(
      reply({ text: 'Transferring you.', action: 'transfer' }),
    );
    expect(parseVoiceReply({ text: 'Goodbye.', action: 'end_call' })).to.deep.equal(reply({ text: 'Goodbye.', action: 'end_call' }));
    expect(parseVoiceReply({ text: 'Goodbye.', end_call: true })).to.deep.equal(reply({ text: 'Goodbye.', action: 'end_call' }));
    expect(parseVoiceReply({ text: 'Still here.', end_call: false })).to.deep.equal(reply({ text: 'Still here.' }));
  });

  it('refuses an unknown action, naming it', () => {
    expect(errorOf({ action: 'dance' })).to.include('"dance"');
    expect(errorOf({ action: 'END_CALL' })).to.include('END_CALL');
    expect(errorOf({ action: 7 })).to.include('action');
  });

  it('refuses anything that is not a JSON object', () => {
    for (const v of [null, undefined, 'Hello', 42, true, [], [{ text: 'Hello' }]]) expect(errorOf(v)).to.include('object');
  });
});

describe('Voice replies: splitting streamed text into sentences', () => {
  it('gives each sentence once it is followed by a space, and keeps the rest', () => {
    expect(takeSentences('Hello there. How are')).to.deep.equal({ sentences: ['Hello there.'], rest: 'How are' });
    expect(takeSentences('Hi! Are you there? I can wait… ')).to.deep.equal({
      sentences: ['Hi!', 'Are you there?', 'I can wait…'],
      rest: '',
    });
    expect(takeSentences('One.\nTwo.\n\nThree')).to.deep.equal({ sentences: ['One.', 'Two.'], rest: 'Three' });
  });

  it('waits for more text after a final stop that nothing follows yet', () => {
    expect(takeSentences('It costs 3.')).to.deep.equal({ sentences: [], rest: 'It costs 3.' });
    expect(takeSentences('No stop yet')).to.deep.equal({ sentences: [], rest: 'No stop yet' });
    expect(takeSentences('')).to.deep.equal({ sentences: [], rest: '' });
  });

  it('does not split inside a number, an address or a run of marks', () => {
    expect(takeSentences('It costs 3.50 today. Next')).to.deep.equal({ sentences: ['It costs 3.50 today.'], rest: 'Next' });
    expect(takeSentences('See example.com for more. Ok')).to.deep.equal({ sentences: ['See example.com for more.'], rest: 'Ok' });
    expect(takeSentences('Really?! Yes')).to.deep.equal({ sentences: ['Really?!'], rest: 'Yes' });
  });

  it('loses nothing but spacing when fed a stream piece by piece', () => {
    const text = 'Thanks for calling. Your table for 4 is booked at 8.30 tonight! Anything else? Just say so';
    let buffer = '';
    const spoken: string[] = [];
    for (let i = 0; i < text.length; i += 3) {
      const r = takeSentences(buffer + text.slice(i, i + 3));
      spoken.push(...r.sentences);
      buffer = r.rest;
    }
    expect(spoken).to.deep.equal(['Thanks for calling.', 'Your table for 4 is booked at 8.30 tonight!', 'Anything else?']);
    expect(buffer).to.equal('Just say so');
  });
});

describe('Call summary', () => {
  const base = { direction: 'outbound' as const, answeredBy: 'human' as const, reason: 'user_hangup' as const, durationSeconds: 42 };

  it('describes the call: direction, duration, turns, why it ended and what the caller said first and last', () => {
    const s = summarize({
      ...base,
      direction: 'inbound',
      transcript: [agent('Hello.'), user('I need to move my appointment.'), agent('Sure.'), user('Thursday works.')],
    });
    expect(s.summary).to.equal(
      'Inbound call of 42 s, 2 agent and 2 caller turns, ended: user hangup. ' +
        'The caller first said "I need to move my appointment." and last said "Thursday works.".',
    );
    expect(summarize({ ...base, direction: 'web', transcript: [user('Hi')] }).summary).to.equal(
      'Web call of 42 s, 0 agent and 1 caller turn, ended: user hangup. The caller first said "Hi".',
    );
  });

  it('shortens a long quote', () => {
    const long = 'a'.repeat(300);
    const s = summarize({ ...base, transcript: [user(long)] });
    expect(s.summary).to.include(`"${'a'.repeat(119)}…"`);
    expect(s.summary).to.not.include('a'.repeat(120));
  });

  it('judges sentiment from the caller’s words only', () => {
    expect(summarize({ ...base, transcript: [user('Thank you, that is perfect.')] }).userSentiment).to.equal('Positive');
    expect(summarize({ ...base, transcript: [user('This is terrible. Stop calling me.')] }).userSentiment).to.equal('Negative');
    expect(summarize({ ...base, transcript: [user('I would like to book for Friday.')] }).userSentiment).to.equal('Neutral');
    expect(summarize({ ...base, transcript: [agent('Great, thanks, perfect!')] }).userSentiment).to.equal('Unknown');
    expect(summarize({ ...base, transcript: [agent('Thanks!'), user('This is wrong and useless.')] }).userSentiment).to.equal('Negative');
  });

  it('matches whole words, not parts of words', () => {
    // "note", "know", "goodness", "stopwatch" contain "not", "no", "good", "stop"
    expect(summarize({ ...base, transcript: [user('Please note I know the stopwatch goodness.')] }).userSentiment).to.equal('Neutral');
  });

  it('calls a conversation successful when the caller spoke and the line did not fail', () => {
    expect(summarize({ ...base, transcript: [user('Hi.')] }).callSuccessful).to.equal(true);
    expect(summarize({ ...base, reason: 'agent_hangup', transcript: [user('Bye.')] }).callSuccessful).to.equal(true);
    for (const reason of ['host_lost', 'telephony_error', 'sip_unreachable'] as const)
      expect(summarize({ ...base, reason, transcript: [user('Hi.')] }).callSuccessful, reason).to.equal(false);
    expect(summarize({ ...base, transcript: [agent('Hello? Anyone there?')] }).callSuccessful).to.equal(false);
    expect(summarize({ ...base, transcript: [] }).callSuccessful).to.equal(false);
  });

  it('calls a voicemail successful when a message was left, and quotes it', () => {
    const left = summarize({
      ...base,
      answeredBy: 'voicemail',
      reason: 'voicemail_reached',
      transcript: [user('Leave a message after the tone.'), agent('Hi, this is Ada from the clinic, please call back.')],
    });
    expect(left.callSuccessful).to.equal(true);
    expect(left.summary).to.include('Voicemail first said "Leave a message after the tone."');
    expect(left.summary).to.include('A message was left: "Hi, this is Ada from the clinic, please call back.".');
    expect(left.summary).to.not.include('The caller');

    const silent = summarize({ ...base, answeredBy: 'voicemail', reason: 'voicemail_reached', transcript: [] });
    expect(silent.callSuccessful).to.equal(false);
    expect(silent.summary).to.not.include('message was left');
    // an agent message to a person is not a voicemail left
    expect(summarize({ ...base, transcript: [agent('Hello?')] }).summary).to.not.include('message was left');
  });

  it('names a call screener as the one who spoke', () => {
    const s = summarize({ ...base, answeredBy: 'screener', transcript: [user('Who is calling?')] });
    expect(s.summary).to.include('A call screener first said "Who is calling?"');
  });
});
