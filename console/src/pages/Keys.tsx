import { type FormEvent, type ReactNode, useState } from 'react';
import type {
  AdminKey,
  AdminKeyCreated,
  AdminKeyList,
  AdminKeyRotated,
  KeyCreateBody,
  KeyPatchBody,
  KeyRotateBody,
  MAX_GRACE_SECONDS,
} from '../../../src/contract/admin-keys.js';
import { api, type ConsoleSession, SIGNED_OUT, when } from '../api.js';
import {
  CopyButton,
  EmptyRow,
  ErrorNote,
  FieldError,
  type FormErrors,
  InputField,
  messageOf,
  Pager,
  Pending,
  TableWrap,
  useCursor,
  useFormErrors,
  useLoad,
  usePanelFocus,
  usePending,
} from '../ui.js';

interface ShownSecret {
  /** The key whose secret it is: revoking it takes the secret away (G431). */
  keyId: string;
  title: string;
  secret: string;
  /**
   * The key was the session's own: `ended`, its old secret is refused and the session with it;
   * a number, the old secret (and the session) is accepted until then, Unix seconds.
   */
  session?: 'ended' | number;
}

/** A secret shown once, with its copy button; after rotating the session's own key, how to go on. */
function Secret({ title, secret, session }: Omit<ShownSecret, 'keyId'>) {
  return (
    <div className="secret" role="status">
      <p>{title} It is shown only now: copy it.</p>
      <code>{secret}</code> <CopyButton text={secret} label="Copy secret" />
      {session === 'ended' && (
        <>
          <p className="session-note">
            This was the key of this session, which has ended with the old secret: copy the new secret; then sign in again with it.
          </p>
          <button type="button" onClick={() => window.dispatchEvent(new Event(SIGNED_OUT))}>
            Sign in again
          </button>
        </>
      )}
      {typeof session === 'number' && (
        <p className="session-note">
          This is the key of this session, which lasts as long as the old secret, until {when(session)}: copy the new secret; then sign in again with it.
        </p>
      )}
    </div>
  );
}

/** The grace periods offered for a rotated-out secret, seconds (the contract's bounds: 0 to MAX_GRACE_SECONDS, G307). */
const MAX_GRACE: typeof MAX_GRACE_SECONDS = 2_592_000;
const GRACES: { seconds: number; label: string }[] = [
  { seconds: 0, label: 'not at all (default)' },
  { seconds: 300, label: '5 minutes' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 604_800, label: '7 days' },
  { seconds: MAX_GRACE, label: '30 days (the longest)' },
];

/**
 * A confirmation of a change to a key: an alertdialog titled by its question, with a warning when
 * the key is the session's own (G428), taking the focus while it is open.
 */
function ConfirmPanel({
  question,
  ownWarning,
  onCancel,
  children,
}: {
  question: string;
  ownWarning: string | undefined;
  onCancel: () => void;
  children: ReactNode;
}) {
  const panel = usePanelFocus<HTMLDivElement>(onCancel);
  return (
    <div
      ref={panel}
      role="alertdialog"
      aria-modal="false"
      aria-labelledby="confirm-title"
      aria-describedby={ownWarning ? 'confirm-own' : undefined}
      className="panel confirm"
    >
      <p id="confirm-title">{question}</p>
      {ownWarning && (
        <p id="confirm-own" className="own-key">
          {ownWarning}
        </p>
      )}
      {children}
    </div>
  );
}

/** Asks before a rotation, with the grace period of the replaced secret. */
function ConfirmRotate({
  apiKey,
  own,
  onRotate,
  onCancel,
}: {
  apiKey: AdminKey;
  own: boolean;
  onRotate: (graceSeconds: number) => Promise<void>;
  onCancel: () => void;
}) {
  const [grace, setGrace] = useState(0);
  const { pending, run } = usePending();
  const ownWarning = own
    ? `This is the key you are signed in with: this session ends with the old secret${grace === 0 ? ', at once' : ''}; sign in again with the new one.`
    : undefined;
  return (
    <ConfirmPanel question={`Rotate ${apiKey.name} (${apiKey.id})? It gets a new secret, shown once.`} ownWarning={ownWarning} onCancel={onCancel}>
      <Pending pending={pending}>
        <div className="field inline">
          <label htmlFor="rotate-grace">Old secret still accepted for</label>
          <select id="rotate-grace" value={grace} onChange={(e) => setGrace(Number(e.target.value))}>
            {GRACES.map((g) => (
              <option key={g.seconds} value={g.seconds}>
                {g.label}
              </option>
            ))}
          </select>
        </div>
        <button type="button" className="danger" onClick={() => void run(() => onRotate(grace))}>
          Rotate
        </button>
        <button type="button" onClick={onCancel}>
          Keep the current secret
        </button>
      </Pending>
    </ConfirmPanel>
  );
}

/** Asks before a revocation; its button is also named "Revoke" (G368). */
function ConfirmRevoke({ apiKey, own, onRevoke, onCancel }: { apiKey: AdminKey; own: boolean; onRevoke: () => Promise<void>; onCancel: () => void }) {
  const { pending, run } = usePending();
  return (
    <ConfirmPanel
      question={`Revoke ${apiKey.name} (${apiKey.id})? Every request with it fails from now on.`}
      ownWarning={own ? 'This is the key you are signed in with: revoking it ends this session.' : undefined}
      onCancel={onCancel}
    >
      <Pending pending={pending}>
        <button type="button" className="danger" onClick={() => void run(onRevoke)}>
          Revoke
        </button>
        <button type="button" onClick={onCancel} data-autofocus>
          Keep the key
        </button>
      </Pending>
    </ConfirmPanel>
  );
}

type RuleField = 'models' | 'expires' | 'submits' | 'credits';

/**
 * The fields a new key and a key's change share: its models, expiry, submit rate and credit cap.
 * `changing` labels what an empty one means in a change (never, the default, none).
 */
function KeyRuleFields({
  prefix,
  changing,
  errors,
  values,
  set,
}: {
  prefix: 'key' | 'edit';
  changing: boolean;
  errors: FormErrors;
  values: Record<RuleField, string>;
  set: Record<RuleField, (value: string) => void>;
}) {
  return (
    <>
      <InputField
        id={`${prefix}-models`}
        label="Models (empty: all)"
        param="models"
        errors={errors}
        value={values.models}
        onChange={(e) => set.models(e.target.value)}
        placeholder={changing ? undefined : 'pic-2, clip:*'}
      />
      <InputField
        id={`${prefix}-expires`}
        label={changing ? 'Expires (empty: never)' : 'Expires'}
        param="expires_at"
        errors={errors}
        type="datetime-local"
        value={values.expires}
        onChange={(e) => set.expires(e.target.value)}
      />
      <InputField
        id={`${prefix}-submits`}
        label={changing ? 'Submits per second (empty: default)' : 'Submits per second'}
        param="limits.submits"
        errors={errors}
        type="number"
        min={1}
        value={values.submits}
        onChange={(e) => set.submits(e.target.value)}
      />
      <InputField
        id={`${prefix}-credits`}
        label={changing ? 'Credit cap (empty: none)' : 'Credit cap'}
        param="limits.credits"
        errors={errors}
        type="number"
        min={0}
        step="any"
        value={values.credits}
        onChange={(e) => set.credits(e.target.value)}
      />
    </>
  );
}

/** The fields of each form by the names the API gives them in `error.param`. */
const CREATE_FIELDS = ['name', 'role', 'models', 'expires_at', 'limits.submits', 'limits.credits'] as const;
const EDIT_FIELDS = ['models', 'expires_at', 'limits.submits', 'limits.tasks_in_flight', 'limits.credits'] as const;

function CreateKey({ onCreated, onClose }: { onCreated: (k: AdminKeyCreated) => void; onClose: () => void }) {
  const panel = usePanelFocus<HTMLFormElement>(onClose);
  const [name, setName] = useState('');
  const [role, setRole] = useState<'caller' | 'admin'>('caller');
  const [models, setModels] = useState('');
  const [expires, setExpires] = useState('');
  const [submits, setSubmits] = useState('');
  const [credits, setCredits] = useState('');
  const errors = useFormErrors(CREATE_FIELDS);
  const { pending, run } = usePending();
  const submit = (e: FormEvent): Promise<void> => {
    e.preventDefault();
    return run(() => create());
  };
  const create = async (): Promise<void> => {
    errors.clear();
    const body: KeyCreateBody = {
      name,
      role,
      ...(models.trim() && { models: models.split(/[\s,]+/).filter(Boolean) }),
      ...(expires && { expires_at: Math.floor(new Date(expires).getTime() / 1000) }),
      ...((submits || credits) && { limits: { ...(submits && { submits: Number(submits) }), ...(credits && { credits: Number(credits) }) } }),
    };
    try {
      onCreated(await api<AdminKeyCreated>('POST', '/admin/v1/keys', body));
    } catch (err) {
      errors.fail(err);
    }
  };
  return (
    <form className="panel" onSubmit={submit} ref={panel} aria-labelledby="new-key-title">
      <h2 id="new-key-title">New key</h2>
      <Pending pending={pending}>
        <div className="fields">
          <InputField id="key-name" label="Name" param="name" errors={errors} value={name} onChange={(e) => setName(e.target.value)} required />
          <div className="field">
            <label htmlFor="key-role">Role</label>
            <select id="key-role" value={role} onChange={(e) => setRole(e.target.value as 'caller' | 'admin')} {...errors.invalid('role', 'key-role-error')}>
              <option value="caller">caller</option>
              <option value="admin">admin</option>
            </select>
            <FieldError id="key-role-error" error={errors.field.role} />
          </div>
          <KeyRuleFields
            prefix="key"
            changing={false}
            errors={errors}
            values={{ models, expires, submits, credits }}
            set={{ models: setModels, expires: setExpires, submits: setSubmits, credits: setCredits }}
          />
        </div>
        <ErrorNote error={errors.form} />
        <button type="submit" className="primary">
          Create
        </button>
      </Pending>
    </form>
  );
}

const localTime = (seconds: number | null): string =>
  seconds === null ? '' : new Date(seconds * 1000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

/** Changes a key's models, expiry and limits (its role and account never change, G300). */
function EditKey({ apiKey, onDone }: { apiKey: AdminKey; onDone: () => void }) {
  const panel = usePanelFocus<HTMLFormElement>(onDone);
  const [models, setModels] = useState(apiKey.models === null ? '' : apiKey.models.join(', '));
  const [expires, setExpires] = useState(localTime(apiKey.expires_at));
  const [submits, setSubmits] = useState(apiKey.limits.submits === null ? '' : String(apiKey.limits.submits));
  const [inFlight, setInFlight] = useState(apiKey.limits.tasks_in_flight === null ? '' : String(apiKey.limits.tasks_in_flight));
  const [credits, setCredits] = useState(apiKey.limits.credits === null ? '' : String(apiKey.limits.credits));
  const errors = useFormErrors(EDIT_FIELDS);
  const { pending, run } = usePending();
  const submit = (e: FormEvent): Promise<void> => {
    e.preventDefault();
    return run(() => save());
  };
  const save = async (): Promise<void> => {
    errors.clear();
    const orNull = (v: string): number | null => (v.trim() === '' ? null : Number(v));
    const body: KeyPatchBody = {
      models: models.trim() === '' ? null : models.split(/[\s,]+/).filter(Boolean),
      expires_at: expires === '' ? null : Math.floor(new Date(expires).getTime() / 1000),
      limits: { submits: orNull(submits), tasks_in_flight: orNull(inFlight), credits: orNull(credits) },
    };
    try {
      await api('PATCH', `/admin/v1/keys/${encodeURIComponent(apiKey.id)}`, body);
      onDone();
    } catch (err) {
      errors.fail(err);
    }
  };
  return (
    <form className="panel" onSubmit={submit} ref={panel} aria-labelledby="edit-key-title">
      <h2 id="edit-key-title">Change {apiKey.name}</h2>
      <Pending pending={pending}>
        <div className="fields">
          <KeyRuleFields
            prefix="edit"
            changing
            errors={errors}
            values={{ models, expires, submits, credits }}
            set={{ models: setModels, expires: setExpires, submits: setSubmits, credits: setCredits }}
          />
          <InputField
            id="edit-inflight"
            label="Tasks in flight (empty: default)"
            param="limits.tasks_in_flight"
            errors={errors}
            type="number"
            min={1}
            value={inFlight}
            onChange={(e) => setInFlight(e.target.value)}
          />
        </div>
        <ErrorNote error={errors.form} />
        <div className="actions">
          <button type="submit" className="primary">
            Save
          </button>
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        </div>
      </Pending>
    </form>
  );
}

/** API keys: create (the secret once), change models, expiry and limits, revoke with a confirmation, rotate. */
export function KeysPage({ session }: { session: ConsoleSession }) {
  const page = useCursor();
  const query = new URLSearchParams({ limit: '100', ...(page.cursor && { cursor: page.cursor }) });
  const { data, error, reload } = useLoad(() => api<AdminKeyList>('GET', `/admin/v1/keys?${query}`), [query.toString()]);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<ShownSecret>();
  const [confirm, setConfirm] = useState<{ action: 'revoke' | 'rotate'; key: AdminKey }>();
  const [editing, setEditing] = useState<AdminKey>();
  const [actionError, setActionError] = useState<string>();

  /** The key this console is signed in with: revoking it ends the session, rotating it too once its grace is over. */
  const own = (key: AdminKey): boolean => key.id === session.key.id;

  // each confirmation stays open, its buttons disabled, until the answer (a second click sends nothing)
  const revoke = async (key: AdminKey): Promise<void> => {
    setActionError(undefined);
    try {
      await api('POST', `/admin/v1/keys/${encodeURIComponent(key.id)}/revoke`, {});
      setConfirm(undefined);
      // its secret, if shown, is of no use now
      setSecret((shown) => (shown?.keyId === key.id ? undefined : shown));
      // the session's own key: the session has ended, back to the sign-in (a reload would only get a 401)
      if (own(key)) window.dispatchEvent(new Event(SIGNED_OUT));
      else reload();
    } catch (err) {
      setConfirm(undefined);
      setActionError(messageOf(err));
    }
  };
  const rotate = async (key: AdminKey, graceSeconds: number): Promise<void> => {
    setActionError(undefined);
    try {
      const body: KeyRotateBody = { grace_seconds: graceSeconds };
      const r = await api<AdminKeyRotated>('POST', `/admin/v1/keys/${encodeURIComponent(key.id)}/rotate`, body);
      setConfirm(undefined);
      // the secret is shown first; the session's own key rotated with no grace has ended the
      // session, so the list is not loaded again (its 401 would drop to the sign-in and lose the secret)
      const session = own(key) ? (r.previous_valid_until ?? 'ended') : undefined;
      setSecret({ keyId: key.id, title: `The new secret of ${key.name}.`, secret: r.key, ...(session !== undefined && { session }) });
      if (session !== 'ended') reload();
    } catch (err) {
      setConfirm(undefined);
      setActionError(messageOf(err));
    }
  };

  return (
    <div>
      <button
        type="button"
        onClick={() => {
          // a toggle: pressed again, the form closes (G431); opened, the secret shown before goes
          if (!creating) setSecret(undefined);
          setCreating(!creating);
        }}
        aria-expanded={creating}
      >
        Create key
      </button>
      {creating && (
        <CreateKey
          onClose={() => setCreating(false)}
          onCreated={(k) => {
            setCreating(false);
            setSecret({ keyId: k.id, title: `The secret of ${k.name}.`, secret: k.key });
            reload();
          }}
        />
      )}
      {secret && <Secret key={secret.secret} {...secret} />}
      <ErrorNote error={error} onRetry={reload} />
      <ErrorNote error={actionError} />
      {editing && (
        <EditKey
          key={editing.id}
          apiKey={editing}
          onDone={() => {
            setEditing(undefined);
            reload();
          }}
        />
      )}
      {confirm?.action === 'revoke' && (
        <ConfirmRevoke
          key={`revoke-${confirm.key.id}`}
          apiKey={confirm.key}
          own={own(confirm.key)}
          onRevoke={() => revoke(confirm.key)}
          onCancel={() => setConfirm(undefined)}
        />
      )}
      {confirm?.action === 'rotate' && (
        <ConfirmRotate
          key={`rotate-${confirm.key.id}`}
          apiKey={confirm.key}
          own={own(confirm.key)}
          onRotate={(grace) => rotate(confirm.key, grace)}
          onCancel={() => setConfirm(undefined)}
        />
      )}
      <TableWrap>
        <table>
          <caption>API keys, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Role</th>
              <th scope="col">Models</th>
              <th scope="col">Expires</th>
              <th scope="col">Limits</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data?.data.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.id}</code>
                </td>
                <td>{k.role}</td>
                <td>{k.models === null ? 'all' : k.models.join(', ') || 'none'}</td>
                <td>{when(k.expires_at)}</td>
                <td>
                  {Object.entries(k.limits)
                    .filter(([, v]) => v !== null)
                    .map(([n, v]) => `${n} ${v}`)
                    .join(', ') || 'defaults'}
                </td>
                <td>{when(k.last_used)}</td>
                <td>{k.revoked ? 'revoked' : 'active'}</td>
                <td>
                  <div className="row-actions">
                    {!k.revoked && (
                      <button type="button" onClick={() => setConfirm({ action: 'revoke', key: k })} aria-label="Revoke" title={`Revoke ${k.name}`}>
                        Revoke
                      </button>
                    )}
                    {!k.revoked && (
                      <button type="button" onClick={() => setConfirm({ action: 'rotate', key: k })}>
                        Rotate
                      </button>
                    )}
                    {!k.revoked && (
                      <button type="button" onClick={() => setEditing(k)} aria-label={`Change ${k.name}`}>
                        Change
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
            {data && data.data.length === 0 && !error && <EmptyRow columns={9} text="No keys." />}
          </tbody>
        </table>
      </TableWrap>
      <Pager page={page} list={data} />
    </div>
  );
}
