import { type DependencyList, type InputHTMLAttributes, useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './api.js';

export const messageOf = (err: unknown): string =>
  err instanceof ApiError ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err);

/** Loads with `load` when `deps` change; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): { data: T | undefined; error: string | undefined; reload: () => void } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [round, setRound] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what the load depends on
  useEffect(() => {
    let live = true;
    setError(undefined);
    load().then(
      (d) => {
        if (live) setData(d);
      },
      (err: unknown) => {
        if (live) setError(messageOf(err));
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data, error, reload };
}

/**
 * A text filter's value once typing has paused for `ms` (G431): a list loads with it, so typing
 * "pic-2" sends one request, not five. `settle()` takes the typed value at once (a submitted
 * filter form) and says whether that changed it (then the change loads; else the caller reloads).
 */
export function useDebounced<T>(value: T, ms = 300): [T, () => boolean] {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    if (Object.is(value, settled)) return;
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, settled, ms]);
  const latest = useRef(value);
  latest.current = value;
  const settledRef = useRef(settled);
  settledRef.current = settled;
  const settle = useCallback((): boolean => {
    if (Object.is(latest.current, settledRef.current)) return false;
    setSettled(latest.current);
    return true;
  }, []);
  return [settled, settle];
}

/**
 * One request at a time for a form or a button: `run(work)` does nothing while an earlier run is
 * pending (a double click sends one request, checked before React renders the disabled button),
 * and `pending` disables the controls meanwhile (see {@link Pending}).
 */
export function usePending(): { pending: boolean; run: (work: () => Promise<void>) => Promise<void> } {
  const busy = useRef(false);
  const focused = useRef<Element | null>(null);
  const [pending, setPending] = useState(false);
  useEffect(() => {
    // the button pressed lost the focus when it was disabled: it gets it back once enabled again
    const el = focused.current;
    if (pending || !(el instanceof HTMLElement)) return;
    focused.current = null;
    if (el.isConnected && (document.activeElement === null || document.activeElement === document.body)) el.focus();
  }, [pending]);
  const run = useCallback(async (work: () => Promise<void>): Promise<void> => {
    if (busy.current) return;
    busy.current = true;
    focused.current = document.activeElement;
    setPending(true);
    try {
      await work();
    } finally {
      busy.current = false;
      setPending(false);
    }
  }, []);
  return { pending, run };
}

const FOCUSABLE = 'input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled]), [href], [tabindex]';

/**
 * Focus for a panel or a confirmation that opens in the page (G428): on opening it takes the focus
 * (its `[data-autofocus]` element, else its first control), Escape closes it (`onClose`), and on
 * closing the focus goes back to what had it before, the button that opened it, while that is
 * still in the page and the focus was in the panel (not moved on to another control meanwhile).
 * The ref goes on the panel's element.
 */
export function usePanelFocus<T extends HTMLElement>(onClose: () => void): React.RefObject<T | null> {
  const ref = useRef<T>(null);
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const panel = ref.current;
    if (!panel) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    (panel.querySelector<HTMLElement>('[data-autofocus]') ?? panel.querySelector<HTMLElement>(FOCUSABLE) ?? panel).focus();
    const onKey = (e: KeyboardEvent): void => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      close.current();
    };
    panel.addEventListener('keydown', onKey);
    return () => {
      panel.removeEventListener('keydown', onKey);
      const now = document.activeElement;
      const inPanel = now === null || now === document.body || panel.contains(now);
      if (inPanel && opener?.isConnected) opener.focus();
    };
  }, []);
  return ref;
}

/** The controls of a form or a confirmation, disabled while its request is pending (a fieldset without a box of its own). */
export function Pending({ pending, children }: { pending: boolean; children: React.ReactNode }) {
  return (
    <fieldset className="pending" disabled={pending} aria-busy={pending}>
      {children}
    </fieldset>
  );
}

/** An error, as an alert; with `onRetry` (a load that failed), a **Retry** button beside it. */
export function ErrorNote({ error, onRetry }: { error: string | undefined; onRetry?: () => void }) {
  if (!error) return null;
  const note = (
    <p role="alert" className="error">
      {error}
    </p>
  );
  if (!onRetry) return note;
  return (
    <div className="load-error">
      {note}
      <button type="button" onClick={onRetry}>
        Retry
      </button>
    </div>
  );
}

/**
 * The field an error answer names, by the form's own field keys: `error.param` as it is
 * (`limits.credits`), else its top-level name (`models[0]` -> `models`); undefined when it names
 * none the form has (the message is then the form's general one).
 */
export function fieldOfError(err: unknown, fields: readonly string[]): string | undefined {
  const param = err instanceof ApiError ? err.param : undefined;
  if (!param) return undefined;
  const bare = param.replace(/\[\d+\]/g, '');
  const top = param.replace(/[[.].*$/, '');
  return [param, bare, top].find((name) => fields.includes(name));
}

/**
 * The errors of a form whose fields are keyed by the names the API gives in `error.param`: `fail`
 * puts an error next to its field (see {@link fieldOfError}) or, naming none, as the form's general
 * message; `invalid(name, id)` gives a field's `aria-invalid` and `aria-describedby`, and
 * {@link FieldError} the message with that id.
 */
export interface FormErrors {
  field: Record<string, string>;
  form: string | undefined;
  clear: () => void;
  fail: (err: unknown) => void;
  invalid: (name: string, errorId: string) => { 'aria-invalid': boolean; 'aria-describedby'?: string };
}

export function useFormErrors(fields: readonly string[]): FormErrors {
  const [field, setField] = useState<Record<string, string>>({});
  const [form, setForm] = useState<string>();
  const clear = useCallback(() => {
    setField({});
    setForm(undefined);
  }, []);
  const fail = (err: unknown): void => {
    const name = fieldOfError(err, fields);
    if (name && err instanceof ApiError) setField({ [name]: err.message });
    else setForm(messageOf(err));
  };
  const invalid = (name: string, errorId: string) => ({
    'aria-invalid': field[name] !== undefined,
    ...(field[name] !== undefined && { 'aria-describedby': errorId }),
  });
  return { field, form, clear, fail, invalid };
}

/** A field's own error message, next to it (its id is the field's `aria-describedby`). */
export function FieldError({ id, error }: { id: string; error: string | undefined }) {
  return error ? (
    <p id={id} role="alert" className="error">
      {error}
    </p>
  ) : null;
}

/**
 * A labelled input of a form of {@link useFormErrors}: `param` is the name the API gives the field
 * in `error.param`; its error sits next to it, tied by `aria-describedby`.
 */
export function InputField({
  id,
  label,
  param,
  errors,
  ...input
}: { id: string; label: string; param: string; errors: FormErrors } & Omit<InputHTMLAttributes<HTMLInputElement>, 'id'>) {
  const errorId = `${id}-error`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} {...input} {...errors.invalid(param, errorId)} />
      <FieldError id={errorId} error={errors.field[param]} />
    </div>
  );
}

/**
 * Cursor paging of a list (`limit`, `cursor`; `has_more`, `next_cursor`): the cursors of the pages
 * seen, so Previous goes back though the API only pages forwards. When `filters` (any string
 * standing for the list's filters) changes, back to the first page: a cursor holds only with the
 * filters it was given with.
 */
export function useCursor(filters = ''): { cursor: string | undefined; index: number; next: (c: string) => void; previous: () => void } {
  const [seen, setSeen] = useState<(string | undefined)[]>([undefined]);
  const [pagedFilters, setPagedFilters] = useState(filters);
  if (filters !== pagedFilters) {
    // set while rendering: React renders again at once, before any load with the old cursor starts
    setPagedFilters(filters);
    setSeen([undefined]);
  }
  const next = useCallback((c: string) => setSeen((s) => (s.at(-1) === c ? s : [...s, c])), []); // a second click before the page loads: once
  const previous = useCallback(() => setSeen((s) => (s.length > 1 ? s.slice(0, -1) : s)), []);
  const stale = filters !== pagedFilters;
  return { cursor: stale ? undefined : seen.at(-1), index: stale ? 0 : seen.length - 1, next, previous };
}

/**
 * **Previous page** and **Next page** of a list (see {@link useCursor}); shown once there is more
 * than one page, a button disabled where there is no page that way. A button that becomes disabled
 * gives the focus to the other. `what` names the list where a page has two (the ledger in Accounts).
 */
export function Pager({
  page,
  list,
  what,
}: {
  page: ReturnType<typeof useCursor>;
  list: { has_more: boolean; next_cursor: string | null } | undefined;
  what?: string;
}) {
  const prevRef = useRef<HTMLButtonElement>(null);
  const nextRef = useRef<HTMLButtonElement>(null);
  const more = list?.has_more === true && list.next_cursor !== null;
  const first = page.index === 0;
  const pressed = useRef<'previous' | 'next'>(undefined);
  useEffect(() => {
    // the button pressed, now disabled, has lost the focus (or holds it, disabled): the other takes it
    const active = document.activeElement;
    const lost = active === null || active === document.body;
    if (pressed.current === 'previous' && first && (lost || active === prevRef.current)) nextRef.current?.focus();
    if (pressed.current === 'next' && !more && (lost || active === nextRef.current)) prevRef.current?.focus();
  }, [first, more]);
  if (first && !more) return null;
  const of = what ? ` of ${what}` : '';
  return (
    <div className="actions pager">
      <button
        type="button"
        ref={prevRef}
        disabled={first}
        onClick={() => {
          pressed.current = 'previous';
          page.previous();
        }}
      >
        Previous page{of}
      </button>
      <span className="hint">Page {page.index + 1}</span>
      <button
        type="button"
        ref={nextRef}
        disabled={!more}
        onClick={() => {
          pressed.current = 'next';
          if (list?.next_cursor) page.next(list.next_cursor);
        }}
      >
        Next page{of}
      </button>
    </div>
  );
}

/** A table body's row for an empty list: `text` across its `columns`. */
export function EmptyRow({ columns, text }: { columns: number; text: string }) {
  return (
    <tr>
      <td colSpan={columns}>{text}</td>
    </tr>
  );
}

/** Copies text, saying so next to the button. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 2000);
    } catch {
      setDone(false);
    }
  };
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span aria-live="polite" className="hint">
        {done ? ' Copied' : ''}
      </span>
    </>
  );
}

/** A table that may scroll sideways on a narrow screen: focusable, so the keyboard can scroll it. */
export function TableWrap({ children }: { children: React.ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled by keyboard
    <div className="table-wrap" tabIndex={0}>
      {children}
    </div>
  );
}
