/**
 * Concurrent SIP calls against the embedded platform (`npm run bench:sip`, docs/testing.md#benchmarks).
 *
 * The platform is the real runtime in live mode with the SIP engine on free ports of 127.0.0.1, started as the SIPp
 * tests start it (`startSipApp`, test/support/sip.ts; PGlite in memory, in this process), but with PGlite on a thread
 * of its own as the platform's default start runs it (PGLITE_THREAD=true unless set; the tests run it in the
 * process's thread, where its statements would hold up the packet clock), with the speech adapters
 * that cost nothing (STT_PROVIDER=instant, TTS_PROVIDER=tone, docs/speech.md) and SIP_END_SILENCE_MS=END_SILENCE_MS.
 * One agent per run, in webhook mode, without a greeting: its webhook (test/support/calls.ts `voiceReceiver`, in
 * this process) answers every voice turn at once with `{text: 'Okay.'}`. The call caps are raised through the
 * configuration so that they do not limit the run.
 *
 * Per N of BENCH_SIP_CALLS (default 1,10,20,50): one Debian SIPp places N calls at once (`-m N -l N -r N`) with the
 * committed test/sip/scenarios/uac-hangup.xml, its recording swapped for the caller's: TURNS times a question
 * rendered by espeak-ng at 8 kHz (`lineSpeech`, as the SIP tests render speech), each followed by PAUSE_MS of
 * silence, as G.711 A-law RTP in 20 ms packets in a pcap file that SIPp plays (`play_pcap_audio`); each call hangs
 * up 1 s after its recording ends. tcpdump on the loopback interface records every RTP packet to and from SIPp's
 * media port, with the kernel's timestamps: what the far end sends and what it receives (SIPp itself cannot record
 * what it receives). From that capture, per call
 * (the platform's RTP port tells the calls apart):
 *  - the caller's utterances, found by the platform's own endpointer (infrastructure/media/endpointer.ts) run over the
 *    caller's packets as they arrived, with a silent frame for every 20 ms without one, and the same end silence: an
 *    utterance ends at the last voiced packet before END_SILENCE_MS of silence;
 *  - the reply to it: the platform's first packet after that end which starts a talkspurt (the RTP marker bit; the
 *    platform sends silence between its talkspurts, docs/sip.md#media);
 *  - speech end → reply: that packet's arrival minus the last voiced packet's arrival. It holds the END_SILENCE_MS
 *    the platform waits before it calls an utterance over (a setting, not work); overhead = that minus
 *    END_SILENCE_MS;
 *  - packet spacing: the gaps between consecutive packets from the platform as they arrived at the far end.
 * Figures per N: calls that completed every turn (the call's record, `GET /v1/calls/{id}`: completed, at least one
 * caller turn, and an agent turn after each; and in the capture every utterance had its reply), the process's CPU
 * time (`process.cpuUsage`, user + system) from SIPp's start until its end, per call, as it is and less what the
 * process spends idle over as long (measured for IDLE_MS before the rounds: projectors and workers polling), the p99
 * gap, and the overhead p50/p99. One uncounted call comes first (a fresh process compiles).
 *
 * Not measured, and why: the CPU figure is this process's, which also holds the webhook receiver and the bench's
 * HTTP client (small next to the media), but not SIPp nor tcpdump; the speech is the instant recogniser and the tone
 * voice, so recognition and synthesis cost nothing here (bench:voice measures the offline engines); the end of an
 * utterance is where the endpointer puts it, within its 20 ms frames; the overhead holds the wait for the call's next
 * 20 ms packet time (the reply goes out on the packet clock) and any lateness of SIPp's silence packets behind the
 * 400 ms (the endpointer counts packets, not time), so it is an upper bound of the platform's own work; loopback has no loss or jitter of its own, so
 * the packet gaps are the platform's pacing and its event loop's delays, plus the machine's scheduling of SIPp,
 * tcpdump and this process on the same cores. Needs `sipp` and `tcpdump` on the PATH and the right to capture on
 * `lo` (root or CAP_NET_RAW). Figures are printed, never asserted.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import alawmulaw from 'alawmulaw';
import { Endpointer, FRAME_MS } from '../infrastructure/media/endpointer.js';
import { voiceReceiver } from '../test/support/calls.js';
import type { TestApp } from '../test/support/http.js';
import { eventually } from '../test/support/numbers.js';
import { freeSipPort, hasBinary, lineSpeech, sipLine, startSipApp } from '../test/support/sip.js';
import { SCENARIOS, Sipp, sippReport } from '../test/support/sipp.js';
import { runBench } from './support/bench.js';

const CALLS = (process.env.BENCH_SIP_CALLS || '1,10,20,50').split(',').map((s) => {
  const n = Number(s.trim());
  // at most one page of `GET /v1/calls` (100), and within the RTP port range startSipApp gives (200 calls)
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new Error(`BENCH_SIP_CALLS must be whole numbers from 1 to 100, got ${s}`);
  return n;
});
const END_SILENCE_MS = 400;
/** caller turns per call, each the question and then this much silence */
const TURNS = 3;
const PAUSE_MS = 1500;
const CARRIER_IP = '127.0.0.1';
const SETTLE_MS = 60_000;
/** how long the idle process's CPU is measured */
const IDLE_MS = 5000;
const FRAME_SAMPLES = 160;

const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
};
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : 'n/a');

// ---------------------------------------------------------------- the caller's recording

/** what the caller says, each turn */
const QUESTION = 'What are your opening hours on Saturday?';

/**
 * The caller's side as a pcap file for SIPp to play: TURNS times the question (espeak-ng at 8 kHz, as the SIP tests
 * render speech) and PAUSE_MS of silence, as A-law RTP in 20 ms packets (IPv4/UDP in Ethernet frames; SIPp
 * rewrites the addresses and ports).
 */
function callerPcap(speech: Int16Array): { pcap: Buffer; ms: number } {
  const samples: number[] = [];
  for (let t = 0; t < TURNS; t++) {
    samples.push(...speech);
    for (let i = 0; i < PAUSE_MS * 8; i++) samples.push(0);
  }
  const audio = alawmulaw.alaw.encode(Int16Array.from(samples));
  const records: Buffer[] = [];
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(1, 20);
  records.push(header);
  for (let k = 0; (k + 1) * FRAME_SAMPLES <= audio.length; k++) {
    const rtp = Buffer.alloc(12 + FRAME_SAMPLES);
    rtp[0] = 0x80;
    rtp[1] = 8;
    rtp.writeUInt16BE(k & 0xffff, 2);
    rtp.writeUInt32BE(k * FRAME_SAMPLES, 4);
    rtp.writeUInt32BE(0x5349_5070, 8);
    Buffer.from(audio.buffer, audio.byteOffset + k * FRAME_SAMPLES, FRAME_SAMPLES).copy(rtp, 12);
    const udp = Buffer.alloc(8);
    udp.writeUInt16BE(6000, 0);
    udp.writeUInt16BE(6000, 2);
    udp.writeUInt16BE(8 + rtp.length, 4);
    const ip = Buffer.alloc(20);
    ip[0] = 0x45;
    ip.writeUInt16BE(20 + 8 + rtp.length, 2);
    ip[8] = 64;
    ip[9] = 17;
    Buffer.from([127, 0, 0, 1, 127, 0, 0, 1]).copy(ip, 12);
    const eth = Buffer.alloc(14);
    eth.writeUInt16BE(0x0800, 12);
    const frame = Buffer.concat([eth, ip, udp, rtp]);
    const rec = Buffer.alloc(16);
    const atUs = k * FRAME_MS * 1000;
    rec.writeUInt32LE(Math.floor(atUs / 1e6), 0);
    rec.writeUInt32LE(atUs % 1e6, 4);
    rec.writeUInt32LE(frame.length, 8);
    rec.writeUInt32LE(frame.length, 12);
    records.push(rec, frame);
  }
  return { pcap: Buffer.concat(records), ms: (audio.length / 8) | 0 };
}

// ---------------------------------------------------------------- the capture

type Packet = { at: number; from: number; to: number; marker: boolean; payload: Buffer };

/** tcpdump on `lo`, keeping the UDP packets to and from `port` in a pcap file; resolves once it listens. */
async function capture(port: number, file: string): Promise<ChildProcess> {
  const p = spawn('tcpdump', ['-i', 'lo', '-n', '-U', '-s', '0', '-B', '16384', '-w', file, 'udp', 'port', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    p.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      if (err.includes('listening on')) resolve();
    });
    p.once('exit', (code) => reject(new Error(`tcpdump exited ${code}: ${err}`)));
  });
  return p;
}

/** The RTP packets of a pcap file of `lo` (Ethernet frames, IPv4, UDP), in order, times in ms. */
function readCapture(file: string): Packet[] {
  const b = readFileSync(file);
  if (b.readUInt32LE(0) !== 0xa1b2c3d4) throw new Error('not a little-endian microsecond pcap file');
  if (b.readUInt32LE(20) !== 1) throw new Error(`link type ${b.readUInt32LE(20)}: expected Ethernet (lo)`);
  const out: Packet[] = [];
  for (let at = 24; at + 16 <= b.length; ) {
    const sec = b.readUInt32LE(at);
    const usec = b.readUInt32LE(at + 4);
    const len = b.readUInt32LE(at + 8);
    const frame = b.subarray(at + 16, at + 16 + len);
    at += 16 + len;
    if (frame.length < 14 + 20 + 8 + 12 || frame.readUInt16BE(12) !== 0x0800) continue;
    const ip = frame.subarray(14);
    const udp = ip.subarray((ip[0]! & 0x0f) * 4);
    const rtp = udp.subarray(8, udp.readUInt16BE(4));
    if (rtp.length < 12 || rtp[0]! >> 6 !== 2) continue;
    const header = 12 + 4 * (rtp[0]! & 0x0f) + (rtp[0]! & 0x10 ? 4 + 4 * rtp.readUInt16BE(12 + 4 * (rtp[0]! & 0x0f) + 2) : 0);
    out.push({
      at: sec * 1000 + usec / 1000,
      from: udp.readUInt16BE(0),
      to: udp.readUInt16BE(2),
      marker: (rtp[1]! & 0x80) !== 0,
      payload: rtp.subarray(header),
    });
  }
  return out;
}

type CallMedia = { utterances: number; replies: number; overheadMs: number[]; gapsMs: number[] };

/** One call's media, as the far end (`sippPort`) sent and received it: the platform's port is `platformPort`. */
function analyse(packets: readonly Packet[], sippPort: number, platformPort: number): CallMedia {
  const heard = packets.filter((p) => p.from === sippPort && p.to === platformPort && p.payload.length > 0);
  const sent = packets.filter((p) => p.from === platformPort && p.to === sippPort);
  // the caller's utterance ends, as the platform's endpointer finds them: it cuts what it hears into 20 ms frames
  // (SIPp's recording has 30 ms packets), and each packet time without a packet is silence
  const endpointer = new Endpointer({ sampleRate: 8000, endSilenceMs: END_SILENCE_MS });
  /** when each 20 ms frame was complete: the arrival of the packet that completed it */
  const frames: number[] = [];
  const ends: number[] = [];
  let carry = new Int16Array(0);
  const feed = (audio: Int16Array, at: number) => {
    const all = new Int16Array(carry.length + audio.length);
    all.set(carry);
    all.set(audio, carry.length);
    let i = 0;
    for (; i + FRAME_SAMPLES <= all.length; i += FRAME_SAMPLES) {
      frames.push(at);
      for (const e of endpointer.push(all.slice(i, i + FRAME_SAMPLES))) {
        // the end comes on the frame that completes END_SILENCE_MS of silence: the last voiced frame is before those
        if (e.kind === 'end' && e.reason === 'silence') ends.push(frames[frames.length - 1 - END_SILENCE_MS / FRAME_MS]!);
      }
    }
    carry = all.slice(i);
  };
  heard.forEach((p, i) => {
    if (i > 0) {
      const packetMs = p.payload.length / 8;
      const missing = Math.round((p.at - heard[i - 1]!.at) / packetMs) - 1;
      for (let k = 1; k <= missing; k++) feed(new Int16Array(p.payload.length), heard[i - 1]!.at + k * packetMs);
    }
    feed(alawmulaw.alaw.decode(p.payload), p.at);
  });
  const last = heard.at(-1)?.at ?? 0;
  for (let k = 1; k <= END_SILENCE_MS / FRAME_MS + 1; k++) feed(new Int16Array(FRAME_SAMPLES), last + k * FRAME_MS);

  const overheadMs: number[] = [];
  for (const end of ends) {
    const reply = sent.find((p) => p.at > end && p.marker);
    if (reply) overheadMs.push(reply.at - end - END_SILENCE_MS);
  }
  const gapsMs = sent.slice(1).map((p, i) => p.at - sent[i]!.at);
  return { utterances: ends.length, replies: overheadMs.length, overheadMs, gapsMs };
}

// ---------------------------------------------------------------- the run

type Round = Readonly<{ app: TestApp; sipPort: number; webhook: string; scenario: string; holdMs: number; idleCpuMsPerS: number }>;

/** rounds run so far: each takes a number of its own */
let rounds = 0;

/** N calls at once; prints its figures unless `quiet` (the warm-up). */
async function round({ app, sipPort, webhook, scenario, holdMs, idleCpuMsPerS }: Round, n: number, quiet = false): Promise<void> {
  const number = `+1415555${1000 + rounds++}`;
  const line = await sipLine(app, 'local', number, { interruptionSensitivity: 0 });
  const hook = await app.call('POST', `/v1/agents/${line.agentId}/webhook`, { key: line.key, body: { url: webhook, timeout: 10 } });
  if (hook.status !== 200) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);

  const dir = mkdtempSync(join(tmpdir(), 'bench-sip-'));
  const mediaPort = await freeSipPort();
  const dump = await capture(mediaPort, join(dir, 'rtp.pcap'));
  const cpu = process.cpuUsage();
  const started = performance.now();
  const sipp = new Sipp({
    scenario,
    target: `127.0.0.1:${sipPort}`,
    ip: CARRIER_IP,
    port: await freeSipPort(),
    mediaPort,
    service: number.replace('+', ''),
    calls: n,
    limit: n,
    rate: n,
    timeoutS: Math.ceil((holdMs + SETTLE_MS) / 1000),
    keys: { caller: '+14155550123' },
    extra: ['-d', String(holdMs)],
  }).start();
  const result = await sipp.done;
  const used = process.cpuUsage(cpu);
  const elapsedS = (performance.now() - started) / 1000;
  dump.kill('SIGINT');
  await new Promise((r) => dump.once('exit', r));
  const packets = readCapture(join(dir, 'rtp.pcap'));
  rmSync(dir, { recursive: true, force: true });
  if (result.code !== 0) console.error(`SIPp reports failed calls at N=${n}\n${sippReport(result).slice(0, 3000)}`);

  // the calls' records, once every call has ended on its record
  const records = await eventually(
    async () => {
      const list = await app.call('GET', '/v1/calls?direction=inbound&limit=100', { key: line.key });
      const data: any[] = list.body.data ?? [];
      if (data.length < n || data.some((c) => c.status === 'in-progress' || c.status === 'ringing')) return undefined;
      return Promise.all(data.map(async (c) => (await app.call('GET', `/v1/calls/${c.id}`, { key: line.key })).body));
    },
    `the ${n} calls ended on their records`,
    SETTLE_MS,
  );
  const platformPorts = [...new Set(packets.filter((p) => p.from === mediaPort).map((p) => p.to))];
  const media = platformPorts.map((port) => analyse(packets, mediaPort, port));
  const everyTurnOnRecord = records.filter((r) => {
    const roles: string[] = (r.turns ?? []).map((t: any) => t.role);
    const users = roles.filter((x) => x === 'user').length;
    return r.status === 'completed' && users > 0 && roles.filter((x) => x !== 'user').length >= users && roles.at(-1) !== 'user';
  }).length;
  const everyTurnHeard = media.filter((m) => m.utterances > 0 && m.replies === m.utterances).length;
  const overhead = media.flatMap((m) => m.overheadMs);
  const gaps = media.flatMap((m) => m.gapsMs);
  const cpuMs = (used.user + used.system) / 1000;
  const idleMs = idleCpuMsPerS * elapsedS;
  if (quiet) return;
  console.log(
    [
      `N=${n}: every turn answered ${everyTurnOnRecord}/${n} on the records, ${everyTurnHeard}/${media.length} in the capture` +
        ` (${media.reduce((s, m) => s + m.utterances, 0)} utterances, ${overhead.length} replies heard)`,
      `  CPU ${(cpuMs / n).toFixed(0)} ms per call of ${(holdMs / 1000).toFixed(1)} s (${cpuMs.toFixed(0)} ms in ${elapsedS.toFixed(1)} s), ` +
        `${((cpuMs - idleMs) / n).toFixed(0)} ms less the idle process's ${idleCpuMsPerS.toFixed(1)} ms/s`,
      `  platform's packets at the far end: ${gaps.length + media.length}, gap p50 ${ms(percentile(gaps, 50))}, p99 ${ms(percentile(gaps, 99))}, max ${ms(Math.max(...gaps))}`,
      `  overhead (speech end -> first reply packet, minus ${END_SILENCE_MS} ms end silence): p50 ${ms(percentile(overhead, 50))}, p99 ${ms(percentile(overhead, 99))}`,
    ].join('\n'),
  );
}

runBench(async () => {
  for (const bin of ['sipp', 'tcpdump']) if (!hasBinary(bin)) throw new Error(`${bin} is not on the PATH (Debian: sip-tester, tcpdump)`);
  const rx = await voiceReceiver(() => ({ json: { text: 'Okay.' } }));
  const { app, sipPort } = await startSipApp({
    carriers: [{ id: 'local', name: 'Local trunk', inbound: { addresses: [`${CARRIER_IP}/32`] } }],
    env: {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      STT_PROVIDER: 'instant',
      TTS_PROVIDER: 'tone',
      SIP_END_SILENCE_MS: String(END_SILENCE_MS),
      CALL_MAX_CONCURRENT_PER_NUMBER: '10000',
      CALL_MAX_CONCURRENT_PER_ACCOUNT: '100000',
      // as the platform's default start (docs/event-store.md#pglite-on-its-own-thread), not the test apps' default
      PGLITE_THREAD: process.env.PGLITE_THREAD ?? 'true',
    },
  });
  console.log(
    `bench:sip: SIPp → the embedded platform (live SIP engine, PGlite in memory${process.env.PGLITE_THREAD === 'false' ? " in the process's thread" : ' on its own thread'}), webhook agent answering at once, ` +
      `STT_PROVIDER=instant, TTS_PROVIDER=tone, SIP_END_SILENCE_MS=${END_SILENCE_MS}; goals at 50 calls: every turn answered, ` +
      'gap p99 <= 30 ms, overhead p99 <= 20 ms',
  );
  // the committed uac-hangup.xml, its recording (SIPp's own) swapped for the caller's
  const dir = mkdtempSync(join(tmpdir(), 'bench-sip-caller-'));
  const { pcap, ms: speechMs } = callerPcap(await lineSpeech(QUESTION));
  writeFileSync(join(dir, 'caller.pcap'), pcap);
  const scenario = join(dir, 'uac-speak.xml');
  writeFileSync(
    scenario,
    readFileSync(join(SCENARIOS, 'uac-hangup.xml'), 'utf8').replace('/usr/share/sip-tester/g711a.pcap', join(dir, 'caller.pcap')),
  );
  try {
    // the call lasts as long as the recording, and then as long again as one reply at most
    const base = { app, sipPort, webhook: rx.url, scenario: relative(SCENARIOS, scenario), holdMs: speechMs + 1000 };
    // one uncounted call first (a fresh process compiles), then the idle process's CPU, which every round also holds
    await round({ ...base, idleCpuMsPerS: 0 }, 1, true);
    const idle = process.cpuUsage();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleUsed = process.cpuUsage(idle);
    const idleCpuMsPerS = (idleUsed.user + idleUsed.system) / IDLE_MS;
    for (const n of CALLS) await round({ ...base, idleCpuMsPerS }, n);
  } finally {
    await app.close();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
