import { type FormEvent, useState } from 'react';
import type { AdminAccount, AdminAccountList, AdminLedger } from '../../../src/contract/admin-accounts.js';
import { api, when } from '../api.js';
import { ErrorNote, messageOf, Pending, TableWrap, useLoad, usePanelFocus, usePending } from '../ui.js';

function Grant({ account, onDone }: { account: AdminAccount; onDone: () => void }) {
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const [error, setError] = useState<string>();
  const { pending, run } = usePending();
  const submit = (e: FormEvent): Promise<void> => {
    e.preventDefault();
    return run(() => grant());
  };
  const grant = async (): Promise<void> => {
    setError(undefined);
    try {
      await api('POST', `/admin/v1/accounts/${encodeURIComponent(account.id)}/grants`, { amount: Number(amount), note });
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
    </form>
  );
}

function Ledger({ account }: { account: AdminAccount }) {
  const { data, error } = useLoad(
    () => api<AdminLedger>('GET', `/admin/v1/accounts/${encodeURIComponent(account.id)}/ledger?limit=50`),
    [account.id, account.balance],
  );
  return (
    <TableWrap>
      <ErrorNote error={error} />
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
        </tbody>
      </table>
    </TableWrap>
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
  const { data, error, reload } = useLoad(() => api<AdminAccountList>('GET', '/admin/v1/accounts?limit=100'), []);
  const [openId, setOpenId] = useState<string>();
  const open = data?.data.find((a) => a.id === openId);
  return (
    <div>
      <ErrorNote error={error} />
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
          </tbody>
        </table>
      </TableWrap>
      {open && <Manage key={open.id} account={open} onGranted={reload} onClose={() => setOpenId(undefined)} />}
    </div>
  );
}
