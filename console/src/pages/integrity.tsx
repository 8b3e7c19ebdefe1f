/**
 * The catalog's integrity (ADR 0138), for super_admin: run the check over the whole catalog or one
 * workspace, read what it found and why, and repair — a dry run first, then the repair itself
 * after a confirmation that says how many findings it touches.
 */
import { useState } from 'preact/hooks';
import { api, call, type Schemas } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { Confirm } from '#console/components/dialogs.tsx';
import { ErrorNote, Notice } from '#console/components/forms.tsx';
import { PageTitle } from '#console/components/page-parts.tsx';
import { plural, statusText } from '#console/format.ts';

type Report = Schemas['IntegrityReport'];
type Repair = Schemas['IntegrityRepairReport'];

function Findings({ report, repairs }: { report: Report; repairs?: Repair['repairs'] }) {
  const outcome = new Map((repairs ?? []).map((r) => [r.finding_id, r.outcome]));
  if (report.findings.length === 0) {
    return <p>No damage found{report.complete ? '.' : ' in what was read (the check did not finish).'}</p>;
  }
  return (
    <table>
      <caption>{plural(report.findings.length, 'finding')}</caption>
      <thead>
        <tr>
          <th scope="col">Kind</th>
          <th scope="col">Workspace</th>
          <th scope="col">What is wrong</th>
          <th scope="col">Repair</th>
          {repairs ? <th scope="col">Outcome</th> : null}
        </tr>
      </thead>
      <tbody>
        {report.findings.map((f) => (
          <tr key={f.id}>
            <td>
              {statusText(f.kind)}
              <br />
              <code>{f.check}</code>
            </td>
            <td>{f.workspace_id ? <code>{f.workspace_id}</code> : 'all'}</td>
            <td>{f.detail}</td>
            <td>{f.repairable ? f.repair : `Not repaired. ${f.repair}`}</td>
            {repairs ? <td>{statusText(outcome.get(f.id) ?? 'not_repairable')}</td> : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function IntegrityPage() {
  const [workspace, setWorkspace] = useState('');
  const [report, setReport] = useState<Report>();
  const [repaired, setRepaired] = useState<Repair>();
  const [asking, setAsking] = useState(false);
  const query = () => (workspace.trim() ? { workspace: workspace.trim() } : {});

  const check = useAction(async (event?: Event) => {
    event?.preventDefault();
    setRepaired(undefined);
    setReport(await call(api.GET('/api/v1/catalog/integrity', { params: { query: query() } })));
  });
  const repair = useAction(async () => {
    setAsking(false);
    const done = await call(
      api.POST('/api/v1/catalog/integrity/repair', { params: { query: { ...query(), confirm: 'true' } } }),
    );
    setRepaired(done);
    setReport(done.report);
  });
  const repairable = report?.findings.filter((f) => f.repairable).length ?? 0;
  const made = repaired?.repairs.filter((r) => r.outcome === 'repaired').length ?? 0;

  return (
    <>
      <PageTitle title="Catalog integrity">Catalog integrity</PageTitle>
      <p>
        Looks for dangling references, orphaned markers, counters that disagree with the items, enabled layers
        whose source table is gone, and import schemas without their import. Nothing changes until you repair.
      </p>
      <form onSubmit={(event) => void check.run(event)}>
        <label>
          Workspace (id or name; empty for the whole catalog)
          <input value={workspace} onInput={(e) => setWorkspace((e.target as HTMLInputElement).value)} />
        </label>
        <div class="actions">
          <button type="submit" class="primary" disabled={check.busy}>
            {check.busy ? 'Checking…' : 'Check'}
          </button>
        </div>
      </form>
      <ErrorNote error={check.error} />
      {report ? (
        <section aria-labelledby="findings-heading">
          <h2 id="findings-heading">Findings</h2>
          <p>
            Checked {new Date(report.checked_at).toLocaleString()}:{' '}
            {plural(report.counts.workspaces, 'workspace')}, {plural(report.counts.items, 'item')},{' '}
            {plural(report.counts.layers_probed, 'source table')}
            {report.complete
              ? '.'
              : ' — not complete: the time budget ran out; check one workspace at a time.'}
          </p>
          <Findings report={report} {...(repaired ? { repairs: repaired.repairs } : {})} />
          {report.unchecked.length > 0 ? (
            <details>
              <summary>Not checked ({report.unchecked.length})</summary>
              <ul>
                {report.unchecked.map((u) => (
                  <li key={`${u.check ?? ''}${u.workspace_id ?? ''}${u.entity?.id ?? ''}`}>
                    {u.check ? <code>{u.check}</code> : null} {u.workspace_id ? `in ${u.workspace_id}` : ''}:{' '}
                    {u.reason}
                  </li>
                ))}
              </ul>
            </details>
          ) : null}
          <Notice>{repaired ? `${plural(made, 'repair')} made.` : undefined}</Notice>
          {repairable > 0 && !repaired ? (
            <div class="actions">
              <button type="button" class="danger" disabled={repair.busy} onClick={() => setAsking(true)}>
                Repair…
              </button>
            </div>
          ) : null}
          <ErrorNote error={repair.error} />
        </section>
      ) : null}
      <Confirm
        open={asking}
        title={`Repair ${plural(repairable, 'finding')}?`}
        confirmLabel="Repair"
        danger
        onConfirm={() => void repair.run()}
        onCancel={() => setAsking(false)}
      >
        <p>
          Each repair is made only while its damage is still as found, and is recorded in the audit trail.
          Counters are repaired last, from a second check.
        </p>
      </Confirm>
    </>
  );
}
