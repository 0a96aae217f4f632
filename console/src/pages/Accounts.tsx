import { type FormEvent, useState } from 'react';
import type { AdminAccount, AdminAccountList, AdminLedger } from '../../../src/contract/admin-accounts.js';
import { api, when } from '../api.js';
import { EmptyRow, ErrorNote, messageOf, Pager, Pending, TableWrap, useCursor, useLoad, usePanelFocus, usePending } from '../ui.js';

function Grant({ account, onDone }: { account: AdminAccount; onDone: () => void }) {
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const [error, setError] = useState<string>();
  const [granted, setGranted] = useState('');
  const { pending, run } = usePending();
  const submit = (e: FormEvent): Promise<void> => {
    e.preventDefault();
    return run(() => grant());
  };
  const grant = async (): Promise<void> => {
    setError(undefined);
    setGranted('');
    try {
      await api('POST', `/admin/v1/accounts/${encodeURIComponent(account.id)}/grants`, { amount: Number(amount), note });
      setGranted(`Granted ${Number(amount)} credits`);
      setAmount('');
      setNote('');
      onDone();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <form onSubmit={submit} className="inline-form">
      <Pending pending={pending}>
        <div className="field">
          <label htmlFor="grant-amount">Credits</label>
          <input id="grant-amount" type="number" step="any" value={amount} onChange={(e) => setAmount(e.target.value)} required />
        </div>
        <div className="field">
          <label htmlFor="grant-note">Note</label>
          <input id="grant-note" value={note} onChange={(e) => setNote(e.target.value)} required />
        </div>
        <button type="submit" className="primary">
          Grant
        </button>
        <ErrorNote error={error} />
      </Pending>
      {/* in the page before it says anything, so that screen readers announce it (G431) */}
      <p role="status" className="granted">
        {granted}
      </p>
    </form>
  );
}

function Ledger({ account }: { account: AdminAccount }) {
  // a grant (a new balance) shows the first page, where its entry is
  const page = useCursor(`${account.id} ${account.balance}`);
  const query = new URLSearchParams({ limit: '50', ...(page.cursor && { cursor: page.cursor }) });
  const { data, error, reload } = useLoad(
    () => api<AdminLedger>('GET', `/admin/v1/accounts/${encodeURIComponent(account.id)}/ledger?${query}`),
    [account.id, account.balance, query.toString()],
  );
  return (
    <>
      <ErrorNote error={error} onRetry={reload} />
      <TableWrap>
        <table>
          <caption>Ledger of {account.name}</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Amount</th>
              <th scope="col">Model</th>
              <th scope="col">Task</th>
              <th scope="col">Note</th>
            </tr>
          </thead>
          <tbody>
            {data?.data.map((e) => (
              <tr key={e.id}>
                <td>{when(e.created)}</td>
                <td>{e.kind}</td>
                <td>{e.amount}</td>
                <td>{e.model ?? ''}</td>
                <td>{e.task_id ?? ''}</td>
                <td>{e.note ?? ''}</td>
              </tr>
            ))}
            {data && data.data.length === 0 && !error && <EmptyRow columns={6} text="No entries." />}
          </tbody>
        </table>
      </TableWrap>
      <Pager page={page} list={data} what="the ledger" />
    </>
  );
}

/** One account's grants and ledger, in a panel that takes the focus and closes on Escape or Close. */
function Manage({ account, onGranted, onClose }: { account: AdminAccount; onGranted: () => void; onClose: () => void }) {
  const panel = usePanelFocus<HTMLElement>(onClose);
  return (
    <section className="panel" aria-labelledby="account-title" ref={panel}>
      <h2 id="account-title">
        {account.name}: balance {account.balance}
      </h2>
      <Grant account={account} onDone={onGranted} />
      <Ledger account={account} />
      <button type="button" onClick={onClose}>
        Close
      </button>
    </section>
  );
}

/** Accounts: balances, grants, the ledger. */
export function AccountsPage() {
  const page = useCursor();
  const query = new URLSearchParams({ limit: '100', ...(page.cursor && { cursor: page.cursor }) });
  const { data, error, reload } = useLoad(() => api<AdminAccountList>('GET', `/admin/v1/accounts?${query}`), [query.toString()]);
  const [openId, setOpenId] = useState<string>();
  const open = data?.data.find((a) => a.id === openId);
  return (
    <div>
      <ErrorNote error={error} onRetry={reload} />
      <TableWrap>
        <table>
          <caption>Accounts</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Balance</th>
              <th scope="col">Held</th>
              <th scope="col">Spent</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data?.data.map((a) => (
              <tr key={a.id}>
                <td>{a.name}</td>
                <td>
                  <code>{a.id}</code>
                </td>
                <td data-balance={a.id}>{a.balance}</td>
                <td>{a.held}</td>
                <td>{a.spent}</td>
                <td>
                  <button type="button" onClick={() => setOpenId(a.id)} aria-label={`Manage ${a.name}`}>
                    Manage
                  </button>
                </td>
              </tr>
            ))}
            {data && data.data.length === 0 && !error && <EmptyRow columns={6} text="No accounts." />}
          </tbody>
        </table>
      </TableWrap>
      <Pager page={page} list={data} />
      {open && <Manage key={open.id} account={open} onGranted={reload} onClose={() => setOpenId(undefined)} />}
    </div>
  );
}
