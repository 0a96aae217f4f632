import { type DragEvent, type FormEvent, useEffect, useRef, useState } from 'react';
import type { AssetReply } from '../../../src/contract/gateway-replies.js';
import type { TaskCreateReply, TaskQueryReply } from '../../../src/contract/task-replies.js';
import type { FamilyId } from '../../../src/contract/families.js';
import { api, ApiError, type ConsoleSession, followTask, ROOT, url } from '../api.js';
import { FAMILY_IDS, FAMILY_NAMES, type Field, type FamilyForm, familyForm } from '../contract.js';
import { CopyButton, ErrorNote, messageOf } from '../ui.js';
import { TaskPreview, resultOf } from './TaskPreview.js';

type Values = Record<string, string>;

/** The request body the form's values make (only fields given are sent). */
function bodyOf(form: FamilyForm, model: string, prompt: string, fields: Field[], values: Values): Record<string, unknown> {
  const body: Record<string, unknown> = { model };
  if (form.family === 'motion') body.content = [{ type: 'text', text: prompt }];
  else body.prompt = prompt;
  for (const f of fields) {
    const raw = (values[f.name] ?? '').trim();
    if (raw === '') continue;
    if (f.kind === 'integer' || f.kind === 'number') body[f.name] = Number(raw);
    else if (f.kind === 'boolean') body[f.name] = raw === 'true';
    else if (f.kind === 'urls') body[f.name] = raw.split(/\s+/).filter(Boolean);
    else body[f.name] = raw;
  }
  return body;
}

const ROOT_URL = ROOT.toString().replace(/\/$/, '');

const curlOf = (path: string, body: unknown): string =>
  `curl -X POST '${url(path)}' \\\n  -H "Authorization: Bearer $MEDIAGATE_API_KEY" \\\n  -H 'Content-Type: application/json' \\\n  -d '${JSON.stringify(body).replace(/'/g, "'\\''")}'`;

/** The same request through the SDK (packages/client): `mg.<family>.create(body)`. */
const SDK_FAMILY: Record<FamilyId, string> = { pic: 'pic', clip: 'clip', reel: 'reel', motion: 'motion', videos: 'videos', 'model-center': 'modelCenter' };
const sdkOf = (family: FamilyId, body: unknown): string =>
  `import { Mediagate } from '@mediagate/client';\n\nconst mg = new Mediagate({ baseUrl: '${ROOT_URL}', apiKey: process.env.MEDIAGATE_API_KEY! });\nconst task = await mg.${SDK_FAMILY[family]}.create(${JSON.stringify(body, null, 2)});\nconsole.log(await mg.tasks.waitFor(task.id));`;

/** A media field: URLs typed, or files dropped (or picked) and uploaded through the asset API as `assetId://`. */
function MediaInput({
  field,
  value,
  onChange,
  disabled,
  describedBy,
}: {
  field: Field;
  value: string;
  onChange: (v: string) => void;
  disabled: boolean;
  describedBy: string;
}) {
  const [status, setStatus] = useState<string>();
  const [over, setOver] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const upload = async (files: FileList | null): Promise<void> => {
    if (!files || files.length === 0) return;
    const refs: string[] = [];
    for (const file of Array.from(files)) {
      setStatus(`Uploading ${file.name}...`);
      const data = new FormData();
      data.append('file', file);
      try {
        const asset = await api<AssetReply>('POST', '/v2/model-center/assets', data);
        if (asset.status !== 'approved') {
          setStatus(`${file.name} was rejected: ${asset.reason ?? 'no reason given'}`);
          return;
        }
        refs.push(`assetId://${asset.id}`);
      } catch (err) {
        setStatus(`${file.name}: ${messageOf(err)}`);
        return;
      }
    }
    const next = field.kind === 'urls' ? [...value.split(/\s+/).filter(Boolean), ...refs].join('\n') : refs[0]!;
    onChange(next);
    setStatus(`Uploaded ${refs.length} file${refs.length === 1 ? '' : 's'}`);
  };
  const drop = (e: DragEvent): void => {
    e.preventDefault();
    setOver(false);
    if (!disabled) void upload(e.dataTransfer.files);
  };
  const id = `field-${field.name}`;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a drop target for the mouse; the upload button is the keyboard's way
    <div
      className={`drop${over ? ' over' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={drop}
    >
      {field.kind === 'urls' ? (
        <textarea
          id={id}
          rows={2}
          value={value}
          disabled={disabled}
          onChange={(e) => onChange(e.target.value)}
          aria-describedby={describedBy}
          placeholder="One URL or assetId:// per line"
        />
      ) : (
        <input
          id={id}
          type="text"
          value={value}
          disabled={disabled}
          onChange={(e) => onChange(e.target.value)}
          aria-describedby={describedBy}
          placeholder="https://... or assetId://..."
        />
      )}
      <div className="drop-row">
        <span className="hint">Drop files here or</span>
        <button type="button" disabled={disabled} onClick={() => picker.current?.click()}>
          Upload a file for {field.name}
        </button>
        <input
          ref={picker}
          type="file"
          hidden
          multiple={field.kind === 'urls'}
          onChange={(e) => void upload(e.target.files)}
          aria-label={`File for ${field.name}`}
        />
      </div>
      {status && (
        <p className="hint" aria-live="polite">
          {status}
        </p>
      )}
    </div>
  );
}

function FieldInput({
  field,
  value,
  onChange,
  error,
  blockedBy,
}: {
  field: Field;
  value: string;
  onChange: (v: string) => void;
  error?: string | undefined;
  blockedBy?: string | undefined;
}) {
  const id = `field-${field.name}`;
  const help = `${id}-help`;
  const describedBy = [help, error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const disabled = blockedBy !== undefined;
  const limits = [
    field.maxItems !== undefined && !/at most/i.test(field.description ?? '') ? `at most ${field.maxItems}` : '',
    field.minimum !== undefined || field.maximum !== undefined ? `${field.minimum ?? ''}..${field.maximum ?? ''}` : '',
    field.default !== undefined ? `default ${String(field.default)}` : '',
    field.required ? 'required' : '',
  ]
    .filter(Boolean)
    .join('; ');
  let control: React.ReactNode;
  if (field.kind === 'enum' || field.kind === 'boolean') {
    const values = field.kind === 'boolean' ? ['true', 'false'] : field.values!;
    control = (
      <select
        id={id}
        value={value}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={describedBy}
        aria-invalid={error !== undefined}
      >
        <option value="">(not sent)</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'url' || field.kind === 'urls') {
    control = <MediaInput field={field} value={value} onChange={onChange} disabled={disabled} describedBy={describedBy} />;
  } else {
    control = (
      <input
        id={id}
        type={field.kind === 'text' ? 'text' : 'number'}
        value={value}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={describedBy}
        aria-invalid={error !== undefined}
        {...(field.minimum !== undefined && { min: field.minimum })}
        {...(field.maximum !== undefined && { max: field.maximum })}
      />
    );
  }
  return (
    <div className="field">
      <label htmlFor={id}>{field.name}</label>
      {control}
      <p id={help} className="hint">
        {[field.description, limits].filter(Boolean).join(' — ')}
        {blockedBy ? ` (not with ${blockedBy}, which is set)` : ''}
      </p>
      {error && (
        <p id={`${id}-error`} role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}

interface Run {
  id: string;
  family: FamilyId;
  task?: TaskQueryReply | undefined;
  error?: string;
  progressSeen: number[];
}

export function PlaygroundPage({ session }: { session: ConsoleSession }) {
  const [family, setFamily] = useState<FamilyId>('pic');
  const [form, setForm] = useState<FamilyForm>();
  const [loadError, setLoadError] = useState<string>();
  const [loadRound, setLoadRound] = useState(0);
  const [model, setModel] = useState('');
  const [prompt, setPrompt] = useState('');
  const [values, setValues] = useState<Values>({});
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [run, setRun] = useState<Run>();
  const events = useRef<(() => void) | null>(null); // closes the status stream followed

  // biome-ignore lint/correctness/useExhaustiveDependencies: loadRound is Retry's: the same load again
  useEffect(() => {
    let live = true;
    setForm(undefined);
    setLoadError(undefined);
    familyForm(family, session.paths).then(
      (f) => {
        if (!live) return;
        setForm(f);
        setModel(f.models[0] ?? '');
        setValues({});
        setFieldErrors({});
      },
      (err: unknown) => live && setLoadError(messageOf(err)),
    );
    return () => {
      live = false;
    };
  }, [family, session.paths, loadRound]);

  useEffect(() => () => events.current?.(), []);

  const fields = form ? mergeFields(form.fields, form.modelFields[model] ?? []) : [];
  const blockedBy = (f: Field): string | undefined => f.exclusive.find((other) => (values[other] ?? '').trim() !== '');
  const body = form ? bodyOf(form, model, prompt, fields, values) : {};

  const watch = (id: string, fam: FamilyId): void => {
    events.current?.();
    events.current = followTask(
      id,
      (task) => setRun((r) => (r && r.id === id ? { ...r, task, progressSeen: [...r.progressSeen, task.progress] } : r)),
      (message) => setRun((r) => r && { ...r, error: messageOf(message) }),
    );
    setRun({ id, family: fam, progressSeen: [] });
  };

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!form) return;
    setBusy(true);
    setFieldErrors({});
    setFormError(undefined);
    try {
      const reply = await api<TaskCreateReply>('POST', form.path, body);
      watch(taskIdOf(reply), form.family);
    } catch (err) {
      // the standard body names the field in `param`; the videos envelope only in its message ("duration must be ...")
      const named = err instanceof ApiError ? (err.param ?? /^([A-Za-z_]+)[\s[.]/.exec(err.message)?.[1]) : undefined;
      const field = named?.replace(/[[.].*$/, '');
      const known = field === 'prompt' || field === 'model' || field === 'content' || fields.some((f) => f.name === field);
      if (err instanceof ApiError && field && known) setFieldErrors({ [field === 'content' ? 'prompt' : field]: err.message });
      else setFormError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const cancel = async (): Promise<void> => {
    if (!run) return;
    try {
      await api('POST', `${session.paths.power_prefix}/v1/motion/videos/${encodeURIComponent(run.id)}/cancel`, {});
    } catch (err) {
      setRun({ ...run, error: messageOf(err) });
    }
  };

  const status = run?.task?.status ?? (run ? 'queued' : undefined);
  const terminal = status === 'completed' || status === 'failed' || status === 'cancelled';
  return (
    <div className="playground">
      <form onSubmit={submit} className="panel" noValidate>
        <div className="row">
          <div className="field">
            <label htmlFor="family">Family</label>
            <select id="family" value={family} onChange={(e) => setFamily(e.target.value as FamilyId)}>
              {FAMILY_IDS.map((f) => (
                <option key={f} value={f}>
                  {FAMILY_NAMES[f]}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="model">Model</label>
            <select
              id="model"
              value={model}
              onChange={(e) => setModel(e.target.value)}
              aria-invalid={fieldErrors.model !== undefined}
              aria-describedby={fieldErrors.model ? 'model-error' : undefined}
            >
              {(form?.models ?? []).map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
            {fieldErrors.model && (
              <p id="model-error" role="alert" className="error">
                {fieldErrors.model}
              </p>
            )}
          </div>
        </div>
        <ErrorNote error={loadError} onRetry={() => setLoadRound((r) => r + 1)} />
        <div className="field">
          <label htmlFor="prompt">Prompt</label>
          <textarea
            id="prompt"
            rows={3}
            value={prompt}
            onChange={(e) => setPrompt(e.target.value)}
            aria-describedby={`prompt-help${fieldErrors.prompt ? ' prompt-error' : ''}`}
            aria-invalid={fieldErrors.prompt !== undefined}
          />
          <p id="prompt-help" className="hint">
            {form?.promptMax ? `At most ${form.promptMax} characters` : 'Required'}
          </p>
          {fieldErrors.prompt && (
            <p id="prompt-error" role="alert" className="error">
              {fieldErrors.prompt}
            </p>
          )}
        </div>
        <div className="fields">
          {fields.map((f) => (
            <FieldInput
              key={`${family}-${f.name}`}
              field={f}
              value={values[f.name] ?? ''}
              error={fieldErrors[f.name]}
              blockedBy={blockedBy(f)}
              onChange={(v) => setValues((old) => ({ ...old, [f.name]: v }))}
            />
          ))}
        </div>
        <ErrorNote error={formError} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy || !form}>
            Generate
          </button>
          <CopyButton text={curlOf(form?.path ?? '', body)} label="Copy as curl" />
          <CopyButton text={sdkOf(family, body)} label="Copy as SDK code" />
        </div>
        <details className="code">
          <summary>The request as code</summary>
          <pre>{curlOf(form?.path ?? '', body)}</pre>
          <pre>{sdkOf(family, body)}</pre>
        </details>
      </form>
      {run && (
        <section className="panel" aria-labelledby="run-title">
          <h2 id="run-title">Task {run.id}</h2>
          <p aria-live="polite">
            Status: <strong>{status}</strong>
          </p>
          <progress max={100} value={run.task?.progress ?? 0} aria-label="Progress">
            {run.task?.progress ?? 0}%
          </progress>
          <span className="hint"> {run.task?.progress ?? 0}%</span>
          {run.family === 'motion' && !terminal && (
            <p>
              <button type="button" onClick={cancel}>
                Cancel task
              </button>
            </p>
          )}
          {run.error && (
            <p role="alert" className="error">
              {run.error}
            </p>
          )}
          {run.task && <TaskPreview task={run.task} />}
          {run.task && resultOf(run.task) && (
            <p>
              <a href={resultOf(run.task)!} download>
                Download
              </a>
            </p>
          )}
        </section>
      )}
    </div>
  );
}

/** The task id of any family's create reply (videos answers `{ code, msg, data: { projectId } }`). */
function taskIdOf(reply: TaskCreateReply): string {
  const r = reply as Record<string, unknown>;
  const data = (r.data ?? {}) as Record<string, unknown>;
  return String(r.id ?? r.task_id ?? data.projectId ?? data.id ?? '');
}

/** The shared fields with a model's own ones over them (model-center's fully described models). */
function mergeFields(shared: Field[], own: Field[]): Field[] {
  const byName = new Map(shared.map((f) => [f.name, f]));
  for (const f of own) byName.set(f.name, f);
  return [...byName.values()];
}
