import { Fragment } from 'react';
import type { AdminSettings } from '../../../src/contract/admin-audit.js';
import { api } from '../api.js';
import { ErrorNote, TableWrap, useLoad } from '../ui.js';

type Variable = AdminSettings['variables'][number];

/** The variables in their sections, in the reference's order. */
function bySection(variables: readonly Variable[]): Array<[string, Variable[]]> {
  const sections = new Map<string, Variable[]>();
  for (const v of variables) sections.set(v.group, [...(sections.get(v.group) ?? []), v]);
  return [...sections];
}

const shown = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** A variable's name that wraps after its underscores on a narrow screen (MEDIAGATE_PUBLIC_ / URL). */
const wrappable = (name: string) =>
  name.split('_').map((part, i, parts) => (
    <Fragment key={parts.slice(0, i + 1).join('_')}>
      {part}
      {i < parts.length - 1 && (
        <>
          _<wbr />
        </>
      )}
    </Fragment>
  ));

/**
 * The settings of the answering process (G447): each by its environment variable, in the settings
 * reference's sections, with where its value came from; then the configuration as the process holds
 * it (with the upstream files), folded. Read-only; secrets redacted by the gateway.
 */
export function SettingsPage() {
  const { data, error, reload } = useLoad(() => api<AdminSettings>('GET', '/admin/v1/settings'), []);
  return (
    <div>
      <ErrorNote error={error} onRetry={reload} />
      {data && (
        <>
          <p className="hint">
            Each setting of the answering process by its environment variable, as read at its start (read-only; secrets redacted). A change takes a restart.
          </p>
          {bySection(data.variables).map(([section, variables]) => (
            <TableWrap key={section}>
              <table className="settings">
                <caption>{section}</caption>
                <thead>
                  <tr>
                    <th scope="col">Variable</th>
                    <th scope="col">Value</th>
                    <th scope="col">From</th>
                  </tr>
                </thead>
                <tbody>
                  {variables.map((v) => (
                    <tr key={v.name}>
                      <th scope="row">
                        <code>{wrappable(v.name)}</code>
                      </th>
                      <td>
                        {v.value === null || v.value === '' ? (
                          <span className="hint">{v.value === null ? 'none' : 'empty'}</span>
                        ) : (
                          <code>{shown(v.value)}</code>
                        )}
                      </td>
                      <td>{v.set ? 'environment' : v.value === null ? 'unset' : 'default'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          ))}
          <details className="panel">
            <summary>The configuration as the process holds it</summary>
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
                  {Object.entries(data.settings).map(([name, value]) => (
                    <tr key={name}>
                      <th scope="row">{name}</th>
                      <td>
                        <code className="details">{shown(value)}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          </details>
        </>
      )}
    </div>
  );
}
