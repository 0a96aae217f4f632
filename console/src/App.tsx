import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, type ConsoleSession, currentSession, SIGNED_OUT, setCsrf, signIn, signOut, UnreachableError } from './api.js';
import { AccountPage } from './pages/Account.js';
import { AccountsPage } from './pages/Accounts.js';
import { AdminTasksPage } from './pages/AdminTasks.js';
import { AuditPage } from './pages/Audit.js';
import { ChannelsPage } from './pages/Channels.js';
import { ChatPage } from './pages/Chat.js';
import { KeysPage } from './pages/Keys.js';
import { OverviewPage } from './pages/Overview.js';
import { PlaygroundPage } from './pages/Playground.js';
import { SettingsPage } from './pages/Settings.js';
import { TasksPage } from './pages/Tasks.js';
import { UsagePage } from './pages/Usage.js';
import { ErrorNote, messageOf, usePending } from './ui.js';

interface Page {
  path: string;
  name: string;
  admin: boolean;
  render: (session: ConsoleSession) => React.ReactNode;
}

/** Every page, by its path in the URL's fragment (G360); the names are the navigation's link names. */
const PAGES: Page[] = [
  { path: 'playground', name: 'Playground', admin: false, render: (s) => <PlaygroundPage session={s} /> },
  { path: 'tasks', name: 'Tasks', admin: false, render: () => <TasksPage /> },
  { path: 'chat', name: 'Chat', admin: false, render: () => <ChatPage /> },
  { path: 'account', name: 'Account', admin: false, render: () => <AccountPage /> },
  { path: 'overview', name: 'Overview', admin: true, render: () => <OverviewPage /> },
  { path: 'keys', name: 'Keys', admin: true, render: (s) => <KeysPage session={s} /> },
  { path: 'accounts', name: 'Accounts', admin: true, render: () => <AccountsPage /> },
  { path: 'all-tasks', name: 'All tasks', admin: true, render: () => <AdminTasksPage /> },
  { path: 'channels', name: 'Channels', admin: true, render: () => <ChannelsPage /> },
  { path: 'usage', name: 'Usage', admin: true, render: () => <UsagePage /> },
  { path: 'audit', name: 'Audit log', admin: true, render: () => <AuditPage /> },
  { path: 'settings', name: 'Settings', admin: true, render: () => <SettingsPage /> },
];

const routeOf = (): string => window.location.hash.replace(/^#\/?/, '').split('?')[0] ?? '';

function useRoute(): string {
  const [route, setRoute] = useState(routeOf);
  useEffect(() => {
    const on = (): void => setRoute(routeOf());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** The document's title: the page shown, then the console's name (G430). */
const TITLE = 'mediagate console';

/**
 * A page change is said (G430): the document's title names the page, and the focus moves to its
 * `<h1>` (a screen reader reads it; the next Tab goes on inside the page). Not on the first load of
 * the document, whose focus starts at the top as on any page; after a sign-in, yes (the focus was
 * on the form, gone). `page` is undefined while no page is shown (loading, the sign-in).
 */
function usePageChange(page: string | undefined, heading: React.RefObject<HTMLHeadingElement | null>): void {
  // the page last shown; null before any was, on this document's first load
  const shown = useRef<string | null>(null);
  useEffect(() => {
    document.title = page ? `${page} — ${TITLE}` : TITLE;
    if (page === undefined) {
      if (shown.current !== null) shown.current = '';
      return;
    }
    if (shown.current !== null && shown.current !== page) heading.current?.focus();
    shown.current = page;
    // on a narrow screen the pages scroll sideways: the current one in view (G448)
    document.querySelector('nav [aria-current="page"]')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [page, heading]);
}

/** Why the sign-in is shown, when the page knows: the session ended while the page was open. */
const EXPIRED = 'Your session has ended; sign in again.';

function SignIn({ onSession, expired }: { onSession: (s: ConsoleSession) => void; expired: boolean }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    const field = input.current!;
    setBusy(true);
    setError(undefined);
    try {
      const session = await signIn(field.value.trim());
      field.value = ''; // the key is not kept: the session cookie stands for it from here on
      onSession(session);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin">
      <h1>{TITLE}</h1>
      {expired && (
        <p id="signin-ended" role="alert" className="notice">
          {EXPIRED}
        </p>
      )}
      <form onSubmit={submit} aria-describedby={expired ? 'signin-ended signin-help' : 'signin-help'}>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          ref={input}
          type="password"
          autoComplete="off"
          required
          aria-invalid={error !== undefined}
          aria-describedby={error ? 'signin-error' : undefined}
        />
        <p id="signin-help" className="hint">
          The key is exchanged for a session cookie; it is not stored in this browser.
        </p>
        {error && (
          <p id="signin-error" role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

/** Why a sign-out failed: the session and its cookie are still valid, so the page stays signed in. */
const signOutError = (err: unknown): string =>
  err instanceof UnreachableError
    ? 'Could not sign out: the gateway did not answer. Try again.'
    : `Could not sign out: ${err instanceof Error ? err.message : String(err)}. Try again.`;

export function App() {
  const [session, setSession] = useState<ConsoleSession | null | undefined>(undefined);
  const [expired, setExpired] = useState(false);
  const [outError, setOutError] = useState<string>();
  const signingOut = usePending();
  // the first session check got no answer (or an error that is no 401): said, with Retry
  const [checkError, setCheckError] = useState<string>();
  const route = useRoute();
  const heading = useRef<HTMLHeadingElement>(null);

  const accept = useCallback((s: ConsoleSession | null, ended = false) => {
    if (s) setCsrf(s.csrf_token);
    setExpired(s === null && ended);
    setOutError(undefined);
    setSession(s);
  }, []);

  // only a 401 means signed out: a gateway that does not answer is no reason to ask for a key
  const check = useCallback(() => {
    setCheckError(undefined);
    currentSession().then(accept, (err: unknown) => {
      if (err instanceof ApiError && err.status === 401) accept(null);
      else setCheckError(messageOf(err));
    });
  }, [accept]);
  useEffect(check, [check]);

  useEffect(() => {
    // a session that ends while the page is open (expiry, revoked key) brings the sign-in back
    const onEnded = (e: Event): void => accept(null, e instanceof CustomEvent && (e.detail as { expired?: boolean } | null)?.expired === true);
    window.addEventListener(SIGNED_OUT, onEnded);
    return () => window.removeEventListener(SIGNED_OUT, onEnded);
  }, [accept]);

  const isAdmin = session?.key.role === 'admin';
  const pages = PAGES.filter((p) => !p.admin || isAdmin);
  const fallback = isAdmin ? 'overview' : 'playground';
  const page = session ? (pages.find((p) => p.path === route) ?? pages.find((p) => p.path === fallback)!) : undefined;
  usePageChange(page?.name, heading);

  if (session === undefined)
    return (
      <main className="signin">
        {checkError ? (
          <>
            <h1>{TITLE}</h1>
            <ErrorNote error={checkError} onRetry={check} />
          </>
        ) : (
          <p>Loading...</p>
        )}
      </main>
    );
  if (session === null || page === undefined) return <SignIn onSession={accept} expired={expired} />;

  // signed out only once the gateway says so (or says the session had already ended): a sign-out
  // that did not reach it leaves the cookie and the session valid, and the page says so
  const out = (): Promise<void> =>
    signingOut.run(async () => {
      setOutError(undefined);
      try {
        await signOut();
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 401)) {
          setOutError(signOutError(err));
          return;
        }
      }
      accept(null);
    });

  return (
    <div className="layout">
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link stays a link (its role and name are what users and tools know); the click only keeps the hash */}
      <a
        className="skip"
        href="#main"
        onClick={(e) => {
          // the hash router would read `#main` as a page (and show the fallback): focus <main>, the URL unchanged
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header>
        <span className="brand">mediagate</span>
        <nav aria-label="Pages">
          <ul>
            {pages.map((p) => (
              <li key={p.path}>
                <a href={`#/${p.path}`} aria-current={p === page ? 'page' : undefined}>
                  {p.name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span>
            {session.key.name} ({session.key.role})
          </span>
          <button type="button" onClick={() => void out()} disabled={signingOut.pending}>
            Sign out
          </button>
        </div>
        {outError && (
          <p role="alert" className="error sign-out-error">
            {outError}
          </p>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        <h1 ref={heading} tabIndex={-1}>
          {page.name}
        </h1>
        {page.render(session)}
      </main>
    </div>
  );
}
