import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { close, closeSync, constants, open, openSync } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Recognition, RecognitionStream, SpeechToTextPort } from '../../application/calls/speech-to-text.port.js';
import { SpeechUnavailableError } from '../../application/calls/text-to-speech.port.js';
import { storableText } from '../../domain/shared/storable-text.js';

const run = promisify(execFile);
/** a plain descriptor (a FileHandle would close it again when collected) */
const openFd = promisify(open) as (path: string, flags: string) => Promise<number>;

/** Words pocketsphinx reports that are not speech: sentence marks, silence and its filler models. */
const FILLER = /^(<s>|<\/s>|<sil>|\[[A-Z_]+\]|\+\+.*\+\+)$/;
/** a word line of `-time yes`: `word start end posterior` */
const WORD_LINE = /^(\S+) (\d+\.\d+) (\d+\.\d+) (\d+(?:\.\d+)?(?:e-?\d+)?)$/;
/** how much of its standard error (its log) a failure message carries */
const LOG_EXCERPT = 300;

/** The transcript and confidence in pocketsphinx_continuous's output with `-time yes` (docs/speech.md#pocketsphinx). */
export function parsePocketsphinx(stdout: string): Recognition {
  const words: { word: string; p: number }[] = [];
  for (const line of stdout.split('\n')) {
    const m = WORD_LINE.exec(line.trim());
    if (!m || FILLER.test(m[1]!)) continue;
    // `saturday(2)`: the dictionary's second pronunciation of the word
    words.push({ word: m[1]!.replace(/\(\d+\)$/, ''), p: Number(m[4]) });
  }
  if (words.length === 0) return { text: '', confidence: null };
  const confidence = words.reduce((n, w) => n + Math.min(1, Math.max(0, w.p)), 0) / words.length;
  // a recogniser's output is outside input: storable before it becomes a caller turn (docs/input-rules.md)
  return { text: storableText(words.map((w) => w.word).join(' ')), confidence: Math.round(confidence * 1000) / 1000 };
}

export type PocketsphinxOptions = Readonly<{
  /** `pocketsphinx_continuous`, a name on PATH or an absolute path */
  path: string;
  /** the model directory: `en-us/` (acoustic model), `en-us.lm.bin` and `cmudict-en-us.dict` */
  modelDir: string;
  /** recognisers running at once (one per utterance being spoken); more wait their turn, their audio buffered */
  maxProcesses?: number;
  /** the longest an utterance may take to finish once its audio has ended */
  finishTimeoutMs?: number;
}>;

/**
 * Speech recognition with Debian's pocketsphinx (`pocketsphinx_continuous` with the `pocketsphinx-en-us`
 * models), offline. One process per utterance, started when the utterance starts: it loads its models while the
 * caller speaks and decodes the audio as it streams in, through a named pipe, so when the utterance ends only its
 * last moments are left to decode. No shell is involved. Accuracy is modest (docs/speech.md#pocketsphinx).
 */
export class PocketsphinxSpeechToText implements SpeechToTextPort {
  readonly sampleRate = 16_000;
  private readonly limit: LimitFunction;
  private modelChecked: Promise<void> | null = null;

  constructor(private readonly o: PocketsphinxOptions) {
    this.limit = pLimit(o.maxProcesses ?? 2);
  }

  start(): RecognitionStream {
    return new PocketsphinxUtterance(this.o, this.limit, () => this.checkModel());
  }

  describe(): string {
    return `pocketsphinx (${this.o.modelDir})`;
  }

  /** The model files are there (checked once; again after a failure, so installing them later is picked up). */
  checkModel(): Promise<void> {
    this.modelChecked ??= Promise.all(modelFiles(this.o.modelDir).map((f) => access(f))).then(
      () => undefined,
      () => {
        this.modelChecked = null;
        throw new SpeechUnavailableError(
          `pocketsphinx's US English model is not installed at POCKETSPHINX_MODEL_DIR=${this.o.modelDir} ` +
            '(it needs en-us/, en-us.lm.bin and cmudict-en-us.dict): apt-get install pocketsphinx-en-us, or set STT_PROVIDER=openai',
        );
      },
    );
    return this.modelChecked;
  }
}

const modelFiles = (dir: string) => [join(dir, 'en-us'), join(dir, 'en-us.lm.bin'), join(dir, 'cmudict-en-us.dict')];

/**
 * One utterance. The named pipe is opened for writing once the recogniser has opened it for reading (the open
 * waits for it, in libuv's thread pool, while the models load); audio written before is kept and written first.
 * Closing the pipe ends the audio; the recogniser then finishes decoding and prints the transcript.
 */
class PocketsphinxUtterance implements RecognitionStream {
  private pending: Buffer[] = [];
  private pipe: Socket | null = null;
  /** settles when the latest write has reached the pipe (writes complete in order) */
  private written: Promise<void> = Promise.resolve();
  private child: ChildProcess | null = null;
  private finished = false;
  private aborted = false;
  private readonly result: Promise<Recognition>;
  private resolveAudioEnded!: () => void;
  private readonly audioEnded = new Promise<void>((r) => {
    this.resolveAudioEnded = r;
  });

  constructor(
    private readonly o: PocketsphinxOptions,
    limit: LimitFunction,
    checkModel: () => Promise<void>,
  ) {
    this.result = limit(async () => {
      await checkModel();
      return this.aborted ? { text: '', confidence: null } : this.recognise();
    });
    // a failure surfaces from finish(); an aborted utterance's is nobody's concern
    this.result.catch(() => undefined);
  }

  write(samples: Int16Array): void {
    if (this.finished || this.aborted || samples.length === 0) return;
    const bytes = Buffer.from(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
    if (this.pipe) this.send(bytes);
    else this.pending.push(bytes);
  }

  finish(): Promise<Recognition> {
    this.finished = true;
    this.resolveAudioEnded();
    return this.result;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.pending = [];
    this.resolveAudioEnded();
    this.child?.kill('SIGKILL');
    this.pipe?.destroy();
  }

  private send(bytes: Buffer): void {
    const pipe = this.pipe!;
    this.written = new Promise<void>((resolve) => pipe.write(bytes, () => resolve()));
  }

  private async recognise(): Promise<Recognition> {
    const dir = await mkdtemp(join(tmpdir(), 'stt-'));
    const fifo = join(dir, 'audio');
    try {
      await run('mkfifo', ['-m', '600', fifo]).catch((e: Error) => {
        throw new SpeechUnavailableError(`pocketsphinx: could not make a named pipe in ${dir} (mkfifo: ${e.message})`);
      });
      const d = this.o.modelDir;
      const child = spawn(
        this.o.path,
        ['-infile', fifo, '-time', 'yes', '-hmm', join(d, 'en-us'), '-lm', join(d, 'en-us.lm.bin'), '-dict', join(d, 'cmudict-en-us.dict')],
        { stdio: ['ignore', 'pipe', 'pipe'], shell: false },
      );
      this.child = child;
      if (this.aborted) child.kill('SIGKILL');
      const out: Buffer[] = [];
      const log: Buffer[] = [];
      let logBytes = 0;
      child.stdout!.on('data', (b: Buffer) => out.push(b));
      // its log is long (tens of kB); only the end is kept, where a fatal error is
      child.stderr!.on('data', (b: Buffer) => {
        log.push(b);
        logBytes += b.length;
        while (logBytes > 64 * 1024 && log.length > 1) logBytes -= log.shift()!.length;
      });
      let gone = false;
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: NodeJS.ErrnoException }>((resolve) => {
        child.on('error', (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, error }));
        child.on('exit', (code, signal) => resolve({ code, signal }));
      }).finally(() => {
        gone = true;
      });
      let settled = false;
      // a recogniser that dies before it opens the pipe would leave the open waiting: a reader of our own ends it
      // (again until it has: the open may not have begun waiting yet)
      void exited.then(() => {
        if (settled) return;
        const release = setInterval(
          () => (settled ? clearInterval(release) : closeQuietly(fifo, constants.O_RDONLY | constants.O_NONBLOCK)),
          20,
        );
        closeQuietly(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      });
      const opened = openFd(fifo, 'w')
        .finally(() => {
          settled = true;
        })
        .then(
          (fd) => {
            if (gone || this.aborted) {
              close(fd, () => undefined);
              return;
            }
            // the pipe becomes a non-blocking stream of this process's event loop
            this.pipe = new Socket({ fd, readable: false, writable: true });
            this.pipe.on('error', () => undefined); // EPIPE when the recogniser died: its exit says why
            for (const b of this.pending) this.send(b);
            this.pending = [];
          },
          () => undefined,
        );
      let timedOut = false;
      const closed = this.audioEnded.then(async () => {
        await Promise.race([opened, exited]);
        // everything written has reached the pipe (or the recogniser is gone): closing it ends the audio
        await Promise.race([this.written, exited]);
        this.pipe?.destroy();
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, this.o.finishTimeoutMs ?? 10_000);
        await exited;
        clearTimeout(timer);
      });
      const end = await exited;
      await opened;
      this.pipe?.destroy();
      if (this.aborted) return { text: '', confidence: null };
      if (end.error) throw new SpeechUnavailableError(startFailure(this.o.path, end.error));
      await closed;
      if (timedOut) throw new SpeechUnavailableError(`pocketsphinx (POCKETSPHINX_PATH=${this.o.path}) did not finish an utterance in time`);
      if (end.code !== 0) {
        const how = end.code === null ? `was killed by ${end.signal}` : `exited with status ${end.code}`;
        const why = lastError(Buffer.concat(log).toString('utf8'));
        throw new SpeechUnavailableError(`pocketsphinx (POCKETSPHINX_PATH=${this.o.path}) ${how}${why ? `: ${why}` : ''}`);
      }
      return parsePocketsphinx(Buffer.concat(out).toString('utf8'));
    } finally {
      this.pipe?.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  }
}

const closeQuietly = (path: string, flags: number) => {
  try {
    closeSync(openSync(path, flags));
  } catch {
    // nothing waits on it any more
  }
};

/** The last error line of pocketsphinx's log (`FATAL: "continuous.c", line 157: Failed to open …`). */
function lastError(log: string): string {
  const lines = log.split('\n').filter((l) => /^(FATAL|ERROR)/.test(l.trim()));
  const last = lines.at(-1)?.trim() ?? '';
  return last.length > LOG_EXCERPT ? `${last.slice(0, LOG_EXCERPT)}…` : last;
}

const startFailure = (path: string, e: NodeJS.ErrnoException): string => {
  const fix = 'apt-get install pocketsphinx pocketsphinx-en-us, or set STT_PROVIDER=openai';
  switch (e.code) {
    case 'ENOENT':
      return `pocketsphinx is not installed (POCKETSPHINX_PATH=${path}): ${fix}`;
    case 'EACCES':
      return `pocketsphinx at POCKETSPHINX_PATH=${path} is not executable (EACCES): point it at pocketsphinx_continuous, ${fix}`;
    default:
      return `pocketsphinx (POCKETSPHINX_PATH=${path}) could not be started (${e.code ?? 'error'}: ${e.message}): ${fix}`;
  }
};
