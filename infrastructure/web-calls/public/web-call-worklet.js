/**
 * The microphone side of /sdk/web-call.js (docs/calls.md#the-browser-sdk): an audio worklet that turns the
 * audio context's samples (44.1 or 48 kHz, float) into 16 kHz signed 16-bit mono frames and posts each frame.
 * Each output sample is the mean of the input samples of its period (channels averaged too): a plain low-pass
 * that keeps what speech recognition needs and folds little noise down into it.
 */
class WebCallCapture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const o = options.processorOptions;
    // `sampleRate` is the audio context's rate, a global of the worklet scope
    this.step = sampleRate / o.targetRate;
    this.frameSamples = o.frameSamples;
    this.frame = new Int16Array(this.frameSamples);
    this.filled = 0;
    this.sum = 0;
    this.count = 0;
    this.phase = 0;
  }

  process(inputs) {
    const channels = inputs[0];
    if (!channels || channels.length === 0) return true;
    const length = channels[0].length;
    for (let i = 0; i < length; i++) {
      let v = 0;
      for (const c of channels) v += c[i];
      this.sum += v / channels.length;
      this.count++;
      this.phase += 1;
      if (this.phase < this.step) continue;
      this.phase -= this.step;
      const mean = Math.max(-1, Math.min(1, this.sum / this.count));
      this.sum = 0;
      this.count = 0;
      this.frame[this.filled++] = Math.round(mean * 32767);
      if (this.filled === this.frameSamples) {
        this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
        this.frame = new Int16Array(this.frameSamples);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor('web-call-capture', WebCallCapture);
