/** The demo page at /web-call (docs/calls.md#the-demo-page): pick an agent, start a web call, talk or type. */
import { WebCall } from '/sdk/web-call.js';

const KEY = 'webCallApiKey';
const $ = (id) => document.getElementById(id);
let call = null;

async function api(method, path, body) {
  const headers = { authorization: `Bearer ${sessionStorage.getItem(KEY)}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new Error(json?.error?.message ?? json?.detail ?? `HTTP ${res.status}`);
  return json;
}

const status = (text) => {
  $('status').textContent = text;
};
const warn = (text) => {
  $('warning').textContent = text;
  $('warning').hidden = !text;
};

function line(role, text, id) {
  const li = document.createElement('li');
  li.dataset.role = role;
  if (id) li.dataset.id = id;
  li.textContent = text; // never HTML: names and words come from elsewhere
  $('transcript').append(li);
  return li;
}

async function showAgents() {
  const select = $('agent');
  select.replaceChildren();
  let agents;
  try {
    agents = (await api('GET', '/v1/agents?limit=100')).data;
  } catch (err) {
    status(`Could not list the agents: ${err.message}`);
    $('key-section').hidden = false;
    $('call-section').hidden = true;
    return;
  }
  for (const a of agents) {
    const o = document.createElement('option');
    o.value = a.id;
    o.textContent = `${a.name} (${a.voiceMode === 'hosted' ? 'built-in model' : 'webhook'})`;
    select.append(o);
  }
  $('key-section').hidden = true;
  $('call-section').hidden = false;
  $('start').disabled = agents.length === 0;
  status(agents.length ? 'Not in a call.' : 'This account has no agents yet: create one with POST /v1/agents.');
}

function inCall(live) {
  $('start').disabled = live;
  $('agent').disabled = live;
  $('hangup').disabled = !live;
  $('say').disabled = !live;
  $('send').disabled = !live;
}

async function start() {
  inCall(true);
  warn('');
  $('transcript').replaceChildren();
  status('Creating the call…');
  let token;
  try {
    token = await api('POST', '/v1/calls/web', { agentId: $('agent').value });
  } catch (err) {
    status(`Could not create the call: ${err.message}`);
    inCall(false);
    return;
  }
  call = new WebCall();
  const frames = setInterval(() => {
    $('frames').textContent = String(call.stats.framesReceived);
  }, 100);
  const talking = () => status(call.microphone ? 'In a call: speak, or type below.' : 'In a call: type below.');
  call.addEventListener('agent-speech', (e) => {
    line('agent', e.detail.text, e.detail.id);
    status('The agent is speaking…');
  });
  call.addEventListener('agent-speech-end', talking);
  call.addEventListener('transcript', (e) => {
    line('user', e.detail.text);
    talking();
  });
  call.addEventListener('interrupted', () =>
    [...$('transcript').querySelectorAll('li[data-role=agent]')].at(-1)?.classList.add('interrupted'),
  );
  call.addEventListener('listening', () => status('Listening…'));
  call.addEventListener('warning', (e) => warn(e.detail.message));
  call.addEventListener('error', (e) => warn(e.detail.message));
  call.addEventListener('ended', (e) => {
    clearInterval(frames);
    $('frames').textContent = String(call.stats.framesReceived);
    status(`Call ended${e.detail.by === 'agent' ? ' by the agent' : ''}. (${token.callId})`);
    document.body.dataset.callState = 'ended';
    inCall(false);
  });
  status('Connecting…');
  try {
    await call.start({ accessToken: token.accessToken, microphone: $('use-mic').checked });
  } catch (err) {
    status(`Could not join the call: ${err.message}`);
    inCall(false);
    return;
  }
  document.body.dataset.callId = token.callId;
  document.body.dataset.callState = 'live';
  talking();
}

$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  sessionStorage.setItem(KEY, $('api-key').value.trim());
  $('api-key').value = '';
  void showAgents();
});
$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(KEY);
  $('call-section').hidden = true;
  $('key-section').hidden = false;
});
$('start').addEventListener('click', () => void start());
$('hangup').addEventListener('click', () => call?.hangUp());
$('say-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = $('say').value.trim();
  if (!text || !call) return;
  call.sendText(text);
  $('say').value = '';
});

if (sessionStorage.getItem(KEY)) void showAgents();
