import { type CallEvent, callDecider, type RecordingUnavailableReason } from '../../domain/call/call.decider.js';
import { callStream } from '../../domain/call/call.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import type { RecordedTurn, RecordingRenderer, RecordingStore } from './recordings.port.js';
import { SpeechUnavailableError } from './text-to-speech.port.js';

type Handled = Extract<CallEvent, { type: 'CallEnded' }>;

const words = (s: string) => s.split(/\s+/).filter((w) => w !== '').length;
/** a text with something to pronounce (a letter or a digit) */
const sayable = (s: string) => /[\p{L}\p{N}]/u.test(s);

/**
 * The turns to render from the call's events, placed from the answer: the caller's words, and each agent turn
 * as far as it was heard (an interrupted one cut after its heard words; one that said nothing left out).
 */
export function recordedTurns(events: readonly CallEvent[], answeredAt: string): RecordedTurn[] {
  const start = Date.parse(answeredAt);
  const at = (iso: string) => Math.max(0, Date.parse(iso) - start);
  const turns: RecordedTurn[] = [];
  for (const e of events) {
    if (e.type === 'CallerTurnRecorded' && sayable(e.data.transcript)) {
      turns.push({ speaker: 'caller', text: e.data.transcript, atMs: at(e.data.startedAt) });
    } else if (e.type === 'AgentTurnRecorded' && sayable(e.data.spoken)) {
      const d = e.data;
      turns.push({
        speaker: 'agent',
        text: d.text,
        atMs: at(d.startedAt),
        ...(d.interrupted ? { cutAfterWords: words(d.spoken) } : {}),
      });
    }
  }
  return turns;
}

/**
 * The recording step (docs/calls.md#recordings): a call that ended with audio to record (`CallEnded.recording`)
 * gets one WAV rendered from its turns, stored, and then `CallRecordingAvailable` on its stream. Each step is
 * idempotent: a call whose stream has the fact is done; a stored recording is not rendered again, so a crash
 * between storing and recording the fact only records the fact on the next delivery.
 *
 * When speech cannot be rendered (no espeak-ng, no speech API), or nothing said had words, it records
 * `CallRecordingUnavailable` with why (and the log says it too): no audio is made up. Either outcome makes the call
 * final: `completed`, and its `agent.call_ended` sent (docs/calls.md#recordings).
 */
export class CallRecordingProcess extends ProcessManager<Handled> {
  readonly name = 'call_recordings';
  readonly handles = ['CallEnded'] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly renderer: RecordingRenderer,
    private readonly store: RecordingStore,
    private readonly log: LoggerPort,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    return e.data.callId;
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    if (!e.data.recording) return;
    const { callId } = e.data;
    const stream = callStream(callId);
    const { state, events } = await this.exec.load(callDecider, stream);
    if (state.status !== 'ended' || !state.recording || state.recordingDone) return;

    let stored = await this.store.get(callId);
    if (!stored) {
      const turns = recordedTurns(events, e.data.answeredAt);
      if (turns.length === 0) {
        this.log.info({ callId }, 'call recording not made: no turn has words to render');
        await this.unavailable(ctx, callId, 'no_words', 'No turn of the call has words to render.');
        return;
      }
      const placed = events.find((x) => x.type === 'CallPlaced');
      const agentVoice = placed?.type === 'CallPlaced' ? placed.data.settings.voice : '';
      let audio: Awaited<ReturnType<RecordingRenderer['render']>>;
      try {
        audio = await this.renderer.render(turns, { agentVoice });
      } catch (err) {
        if (!(err instanceof SpeechUnavailableError)) throw err;
        this.log.error(
          { callId, accountId: state.accountId, reason: err.message },
          'call recording not made: speech synthesis is unavailable; the call stays without a recording',
        );
        await this.unavailable(ctx, callId, 'speech_unavailable', err.message);
        return;
      }
      stored = { callId, accountId: state.accountId, wav: audio.wav, durationMs: audio.durationMs, createdAt: this.exec.now() };
      await this.store.put(stored);
    }
    await this.exec.execute(callDecider, stream, { type: 'RecordRecording', data: { callId, durationMs: stored.durationMs } }, ctx);
    this.log.info({ callId, durationMs: stored.durationMs }, 'call recording stored');
  }

  /** The call is final without a recording: recorded, so that it completes and `agent.call_ended` is sent. */
  private async unavailable(ctx: RequestContext, callId: string, reason: RecordingUnavailableReason, detail: string): Promise<void> {
    await this.exec.execute(callDecider, callStream(callId), { type: 'RecordRecordingUnavailable', data: { callId, reason, detail } }, ctx);
  }
}
