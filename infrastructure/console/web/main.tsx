import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, onSignedOut, session } from './api.js';
import { Problem } from './components.js';
import { CallPage, CallsPage } from './pages/calls.js';
import { ConversationPage, ConversationsPage } from './pages/conversations.js';
import { NumbersPage } from './pages/numbers.js';
import { UsagePage } from './pages/usage.js';
import { WebhooksPage } from './pages/webhooks.js';

/** The pages, by the path after `#` (hash routes: the server serves one page, and nothing goes in the URL's query). */
const NAV = [
  ['#/numbers', 'Numbers & agents'],
  ['#/conversations', 'Conversations'],
  ['#/calls', 'Calls'],
  ['#/webhooks', 'Webhooks'],
  ['#/usage', 'Usage'],
] as const;

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/usage');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/usage');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function Page({ hash }: { hash: string }) {
  const [, section, id] = hash.split('/');
  switch (section) {
    case 'numbers':
      return <NumbersPage />;
    case 'conversations':
      return id ? <ConversationPage id={decodeURIComponent(id)} /> : <ConversationsPage />;
    case 'calls':
      return id ? <CallPage id={decodeURIComponent(id)} /> : <CallsPage />;
    case 'webhooks':
      return <WebhooksPage />;
    default:
      return <UsagePage />;
  }
}

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await api('/v1/usage', { key: key.trim() });
      session.signIn(key.trim());
      onSignedIn();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That key is not valid here.' : String(err));
    }
  };
  return (
    <form class="signin" onSubmit={submit}>
      <h1>Agent platform console</h1>
      <label>
        API key
        <input type="password" name="apiKey" autocomplete="off" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit">Sign in</button>
      <p class="hint">The key stays in this tab's session storage and is sent only in the Authorization header.</p>
      <Problem error={error} />
    </form>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(session.key() !== null);
  const hash = useHash();
  useEffect(
    () =>
      onSignedOut(() => {
        session.signOut();
        setSignedIn(false);
      }),
    [],
  );
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const signOut = () => {
    session.signOut();
    setSignedIn(false);
  };
  return (
    <>
      <header class="top">
        <strong>Agent platform</strong>
        <nav>
          {NAV.map(([href, label]) => (
            <a key={href} href={href} class={hash.startsWith(href) ? 'current' : ''}>
              {label}
            </a>
          ))}
        </nav>
        <button type="button" class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <Page hash={hash} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
