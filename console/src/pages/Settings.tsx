import type { AdminSettings } from '../../../src/contract/admin-audit.js';
import { api } from '../api.js';
import { ErrorNote, TableWrap, useLoad } from '../ui.js';

/** The effective settings of the answering process, secrets redacted; read-only. */
export function SettingsPage() {
  const { data, error, reload } = useLoad(() => api<AdminSettings>('GET', '/admin/v1/settings'), []);
  return (
    <div>
      <ErrorNote error={error} onRetry={reload} />
      <TableWrap>
        <table>
          <caption>Effective settings (read-only; secrets redacted)</caption>
          <thead>
            <tr>
              <th scope="col">Setting</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {data &&
              Object.entries(data.settings).map(([name, value]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>
                    <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </TableWrap>
    </div>
  );
}
