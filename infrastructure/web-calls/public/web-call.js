/**
 * Web calls in the browser (docs/calls.md#the-browser-sdk). An ES module served by the platform at
 * /sdk/web-call.js; no dependencies.
 *
 *   import { WebCall } from 'https://platform.example/sdk/web-call.js';
 *   const call = new WebCall();
 *   call.addEventListener('agent-speech', (e) => console.log('agent:', e.detail.text));
 *   call.addEventListener('transcript', (e) => console.log('you:', e.detail.text));
 *   call.addEventListener('ended', () => console.log('call over'));
 *   await call.start({ accessToken });   // from POST /v1/calls/web, made by YOUR server: never put an API key in a page
 *   call.sendText('I would rather type');
 *   call.hangUp();
 *
 * Call start() from a click (browsers let a page play audio only after a gesture). The microphone's audio goes to
 * the server as 16 kHz 16-bit PCM in 20 ms frames; the agent's speech comes back the same way and is played as it
 * arrives. The server decides when an utterance ends and recognises it; when the caller talks over the agent, the
 * server tells the page to drop the agent's audio (`clear`).
 *
 * Events (CustomEvent, the payload in `detail`): joined {callId}, listening, transcript {role: 'user', text, typed},
 * agent-speech {id, text}, agent-speech-end {id}, interrupted, dtmf {digits}, warning {code, message}, error {code, message},
 * ended {by: 'caller' | 'agent' | null, code, reason}.
 */

const SOCKET_PATH = '/v1/calls/web/connect';
const SAMPLE_RATE = 16000;
const FRAME_SAMPLES = 320;
/** the agent's audio starts this long after its first frame arrives, so small network hiccups do not gap it */
const PLAYOUT_DELAY_S = 0.06;

export class WebCall extends EventTarget {
  /**
   * @param {{ server?: string }} [options] the platform's base URL; default: where this script was loaded from
   */
  constructor(options = {}) {
    super();
    const base = new URL(options.server ?? new URL('/', import.meta.url).href);
    base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    base.pathname = SOCKET_PATH;
    /** @type {string} */
    this.socketUrl = base.href;
    /** @type {'idle' | 'connecting' | 'live' | 'ended'} */
    this.state = 'idle';
    /** @type {string | null} */
    this.callId = null;
    this.stats = { framesReceived: 0, bytesReceived: 0, framesSent: 0 };
    this.microphone = false;
    /** @private */ this.ws = null;
    /** @private */ this.ctx = null;
    /** @private */ this.stream = null;
    /** @private */ this.capture = null;
    /** @private */ this.sources = new Set();
    /** @private */ this.nextPlayTime = 0;
  }

  /**
   * Joins the call the access token opens (it is valid for 30 seconds, once). `microphone`: false to only type;
   * an object to add audio constraints of getUserMedia (e.g. `{ deviceId }`).
   * @param {{ accessToken: string, microphone?: boolean | MediaTrackConstraints }} o
   * @returns {Promise<{ callId: string }>}
   */
  async start({ accessToken, microphone = true }) {
    if (this.state !== 'idle') throw new Error('this WebCall has already been started');
    this.state = 'connecting';
    this.ctx = new AudioContext();
    await this.ctx.resume();
    const ws = new WebSocket(this.socketUrl);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    const joined = new Promise((resolve, reject) => {
      ws.addEventListener('open', () => ws.send(JSON.stringify({ type: 'join', accessToken })), { once: true });
      this.addEventListener('joined', (e) => resolve(e.detail), { once: true });
      this.addEventListener('ended', (e) => reject(new Error(e.detail.reason || `the call could not be joined (${e.detail.code})`)), {
        once: true,
      });
    });
    let refusal = null;
    ws.addEventListener('message', (e) => {
      if (typeof e.data !== 'string') {
        this.play(e.data);
        return;
      }
      const m = JSON.parse(e.data);
      if (m.type === 'error') refusal = m;
      this.onMessage(m);
    });
    ws.addEventListener('close', (e) => this.finish(e.code, refusal ? refusal.message : e.reason));
    const info = await joined;
    if (microphone) {
      try {
        await this.startMicrophone(typeof microphone === 'object' ? microphone : {});
      } catch (err) {
        this.emit('warning', { code: 'MICROPHONE_UNAVAILABLE', message: `No microphone (${err.message}): type instead.` });
      }
    }
    return info;
  }

  /** Says something by typing: it reaches the agent as the caller's turn. */
  sendText(text) {
    if (this.state === 'live' && text.trim()) this.ws.send(JSON.stringify({ type: 'text', text }));
  }

  /** Hangs up; `ended` follows. */
  hangUp() {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'hangup' }));
    else this.finish(1000, 'hung up');
  }

  /** @private */
  onMessage(m) {
    switch (m.type) {
      case 'joined':
        this.state = 'live';
        this.callId = m.callId;
        this.emit('joined', { callId: m.callId });
        break;
      case 'speech':
        this.emit('agent-speech', { id: m.id, text: m.text });
        break;
      case 'speech_end':
        this.emit('agent-speech-end', { id: m.id });
        break;
      case 'clear':
        this.clear();
        this.emit('interrupted', {});
        break;
      case 'listening':
        this.emit('listening', {});
        break;
      case 'transcript':
        this.emit('transcript', { role: m.role, text: m.text, typed: m.typed });
        break;
      case 'dtmf':
        this.emit('dtmf', { digits: m.digits });
        break;
      case 'warning':
        this.emit('warning', { code: m.code, message: m.message });
        break;
      case 'error':
        this.emit('error', { code: m.code, message: m.message });
        break;
      case 'ended':
        this.endedBy = m.by;
        break;
    }
  }

  /**
   * @private the microphone, downsampled to 16 kHz in an audio worklet and sent in 20 ms frames. The worklet is
   * ready before the microphone opens, so the first words are not lost. Echo cancellation stays on (the agent
   * speaks through the same device); noise suppression and automatic gain are off by default: they reshape speech
   * in ways the server's recogniser hears worse than the noise they remove (docs/calls.md#the-browser-sdk).
   */
  async startMicrophone(constraints) {
    await this.ctx.audioWorklet.addModule(new URL('./web-call-worklet.js', import.meta.url).href);
    this.capture = new AudioWorkletNode(this.ctx, 'web-call-capture', {
      processorOptions: { targetRate: SAMPLE_RATE, frameSamples: FRAME_SAMPLES },
    });
    this.capture.port.onmessage = (e) => {
      if (this.state !== 'live' || this.ws.readyState !== WebSocket.OPEN) return;
      this.ws.send(e.data);
      this.stats.framesSent++;
    };
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false, ...constraints },
    });
    const source = this.ctx.createMediaStreamSource(this.stream);
    // a worklet is processed while it leads to the output: through a muted gain, so the caller does not hear themself
    const mute = this.ctx.createGain();
    mute.gain.value = 0;
    source.connect(this.capture).connect(mute).connect(this.ctx.destination);
    this.microphone = true;
  }

  /** @private one frame of the agent's speech, played right after what is already queued */
  play(buffer) {
    this.stats.framesReceived++;
    this.stats.bytesReceived += buffer.byteLength;
    if (!this.ctx || this.state === 'ended') return;
    const pcm = new Int16Array(buffer);
    if (pcm.length === 0) return;
    const audio = this.ctx.createBuffer(1, pcm.length, SAMPLE_RATE);
    const samples = audio.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 32768;
    const node = this.ctx.createBufferSource();
    node.buffer = audio;
    node.connect(this.ctx.destination);
    const now = this.ctx.currentTime;
    if (this.nextPlayTime < now) this.nextPlayTime = now + PLAYOUT_DELAY_S;
    node.start(this.nextPlayTime);
    this.nextPlayTime += audio.duration;
    this.sources.add(node);
    node.onended = () => this.sources.delete(node);
  }

  /** @private drops the agent's audio that has not played yet (the caller interrupted) */
  clear() {
    for (const node of this.sources) node.stop();
    this.sources.clear();
    this.nextPlayTime = 0;
  }

  /** @private */
  finish(code, reason) {
    if (this.state === 'ended') return;
    this.state = 'ended';
    if (this.stream) for (const t of this.stream.getTracks()) t.stop();
    if (this.capture) this.capture.port.onmessage = null;
    // what the agent was still saying plays out; then the audio context goes
    const ctx = this.ctx;
    if (ctx) setTimeout(() => ctx.close(), Math.max(0, (this.nextPlayTime - ctx.currentTime) * 1000) + 100);
    this.emit('ended', { by: this.endedBy ?? null, code, reason });
  }

  /** @private */
  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}
