import { spawn } from 'node:child_process';
import pLimit, { type LimitFunction } from 'p-limit';
import { type Pcm, SpeechUnavailableError, type TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import { decodeWav, WavFormatError } from './wav.js';

/** An espeak-ng voice (`-v language+variant`) and, where the variant alone does not fit, a pitch (`-p`, 0–99). */
export type EspeakVoice = Readonly<{ voice: string; pitch: number | null }>;

/**
 * The voice catalogue's ids on espeak-ng 1.51's voices and variants (docs/speech.md#voices). 1.51 has no Indian
 * or Australian English: Arjun is a British male variant other than Miles's, Sol a Lancashire voice whose female
 * variant is pitched down to about 145 Hz, between the male (~105 Hz) and female (~170–200 Hz) voices.
 */
export const ESPEAK_VOICES: Readonly<Record<string, EspeakVoice>> = {
  'sandbox-aria': { voice: 'en-us+f3', pitch: null },
  'sandbox-miles': { voice: 'en-us+m3', pitch: null },
  'sandbox-isla': { voice: 'en-gb-x-rp+f4', pitch: null },
  'sandbox-arjun': { voice: 'en-gb+m7', pitch: null },
  'sandbox-sol': { voice: 'en-gb-x-gbclan+f2', pitch: 25 },
};

/** An id the table does not know speaks as the catalogue's default voice (Aria). */
export const espeakVoiceFor = (voiceId: string): EspeakVoice => ESPEAK_VOICES[voiceId] ?? ESPEAK_VOICES['sandbox-aria']!;

/** espeak-ng's own speed range (`-s`); it clamps to it too, the adapter says so rather than relying on it. */
const MIN_WPM = 80;
const MAX_WPM = 450;
/** espeak-ng's output rate: what an empty text's (empty) audio is given */
const ESPEAK_SAMPLE_RATE = 22_050;
/** how much of espeak-ng's standard error a failure message carries */
const STDERR_EXCERPT = 300;

type Run = { stdout: Buffer; stderr: string };

/**
 * Speech from Debian's espeak-ng, run as a child process per text: no shell, the text on standard input (so
 * a text starting with `-` is never an option), the WAV read from standard output. At most `maxProcesses`
 * run at once; each is killed after `timeoutMs`.
 */
export class EspeakTextToSpeech implements TextToSpeechPort {
  private readonly limit: LimitFunction;
  private readonly timeoutMs: number;
  private versionRead: Promise<string> | null = null;
  private version: string | null = null;

  constructor(private readonly o: Readonly<{ path: string; timeoutMs?: number; maxProcesses?: number }>) {
    this.limit = pLimit(o.maxProcesses ?? 2);
    this.timeoutMs = o.timeoutMs ?? 20_000;
  }

  async synthesize(text: string, o: Readonly<{ voice: string; wordsPerMinute?: number }>): Promise<Pcm> {
    await this.engineVersion();
    const spoken = text.replace(/\s+/g, ' ').trim();
    if (spoken === '') return { samples: new Int16Array(0), sampleRate: ESPEAK_SAMPLE_RATE }; // espeak-ng prints nothing at all
    const v = espeakVoiceFor(o.voice);
    const args = ['--stdout', '--stdin', '-b', '1', '-v', v.voice];
    if (v.pitch !== null) args.push('-p', String(v.pitch));
    if (o.wordsPerMinute !== undefined) {
      args.push('-s', String(Math.min(MAX_WPM, Math.max(MIN_WPM, Math.round(o.wordsPerMinute)))));
    }
    const { stdout } = await this.run(args, spoken, `voice ${v.voice}`);
    if (stdout.length === 0) return { samples: new Int16Array(0), sampleRate: ESPEAK_SAMPLE_RATE };
    try {
      return decodeWav(stdout);
    } catch (e) {
      if (e instanceof WavFormatError) {
        throw new SpeechUnavailableError(`espeak-ng (ESPEAK_PATH=${this.o.path}) printed audio that is not a 16-bit WAV: ${e.message}`);
      }
      throw e;
    }
  }

  /** `espeak-ng 1.51` once a synthesis (or `engineVersion()`) has read the version, `espeak-ng` before */
  describe(): string {
    return this.version === null ? 'espeak-ng' : `espeak-ng ${this.version}`;
  }

  /** Runs `espeak-ng --version` once (again after a failure, so installing it later is picked up). */
  engineVersion(): Promise<string> {
    this.versionRead ??= this.run(['--version'], '', 'version').then(
      ({ stdout }) => {
        // "eSpeak NG text-to-speech: 1.51  Data at: /usr/lib/x86_64-linux-gnu/espeak-ng-data"
        this.version = /text-to-speech:\s*(\S+)/.exec(stdout.toString('utf8'))?.[1] ?? 'unknown';
        return this.version;
      },
      (e: unknown) => {
        this.versionRead = null;
        throw e;
      },
    );
    return this.versionRead;
  }

  private run(args: string[], input: string, what: string): Promise<Run> {
    return this.limit(
      () =>
        new Promise<Run>((resolve, reject) => {
          const path = this.o.path;
          const child = spawn(path, args, { stdio: ['pipe', 'pipe', 'pipe'], shell: false });
          const out: Buffer[] = [];
          const err: Buffer[] = [];
          let timedOut = false;
          let startFailed = false;
          const timer = setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, this.timeoutMs);
          child.stdout.on('data', (b: Buffer) => out.push(b));
          child.stderr.on('data', (b: Buffer) => err.push(b));
          child.stdin.on('error', () => {}); // EPIPE when it exits before reading: its exit status tells why
          child.on('error', (e: NodeJS.ErrnoException) => {
            clearTimeout(timer);
            startFailed = true;
            reject(new SpeechUnavailableError(startFailure(path, e)));
          });
          child.on('close', (code, signal) => {
            clearTimeout(timer);
            if (startFailed) return; // already answered by 'error'
            const stderr = Buffer.concat(err).toString('utf8').trim().slice(0, STDERR_EXCERPT);
            if (timedOut) {
              reject(new SpeechUnavailableError(`espeak-ng (ESPEAK_PATH=${path}, ${what}) did not finish within ${this.timeoutMs} ms`));
            } else if (code !== 0) {
              const how = code === null ? `was killed by ${signal}` : `exited with status ${code}`;
              reject(new SpeechUnavailableError(`espeak-ng (ESPEAK_PATH=${path}, ${what}) ${how}${stderr ? `: ${stderr}` : ''}`));
            } else {
              resolve({ stdout: Buffer.concat(out), stderr });
            }
          });
          child.stdin.end(input, 'utf8');
        }),
    );
  }
}

const startFailure = (path: string, e: NodeJS.ErrnoException): string => {
  const fix = 'apt-get install espeak-ng, or set TTS_PROVIDER=openai';
  switch (e.code) {
    case 'ENOENT':
      return `espeak-ng is not installed (ESPEAK_PATH=${path}): ${fix}`;
    case 'EACCES':
      return `espeak-ng at ESPEAK_PATH=${path} is not executable (EACCES): point ESPEAK_PATH at the espeak-ng binary, ${fix}`;
    default:
      return `espeak-ng (ESPEAK_PATH=${path}) could not be started (${e.code ?? 'error'}: ${e.message}): ${fix}`;
  }
};
