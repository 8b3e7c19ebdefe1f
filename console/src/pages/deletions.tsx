/**
 * Recursive deletions (ADR 0070): the list of operations (those of workspaces the operator
 * administers; all for super_admin) and one operation's page — status, phase, plan and a live
 * progress bar polled every second while it is pending or running; a failed one shows its error
 * and can be retried where it stopped.
 */
import './deletions.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { allOf, api, call, type Schemas } from '#console/api.ts';
import { useAction, usePolled } from '#console/components/data.tsx';
import { ErrorNote, Field, Notice, SelectInput } from '#console/components/forms.tsx';
import { PagedTable, useCursor } from '#console/components/lists.tsx';
import {
  FailureAlert,
  PageTitle,
  Progress,
  StatusBadge,
  StatusFacts,
  TimeFact,
  useMonotone,
  When,
} from '#console/components/page-parts.tsx';
import { DeletionPlanView } from '#console/deletion-plan.tsx';
import { countOf, statusText } from '#console/format.ts';
import { paths } from '#console/routes.ts';
import { useSession } from '#console/session.ts';

export type Deletion = Schemas['DeletionOperation'];
type DeletionStatus = Deletion['status'];

const STATUSES = allOf<DeletionStatus>({ pending: true, running: true, failed: true, completed: true });

/** True while the deletion workflow still works on the operation. */
export function deletionActive(op: Deletion): boolean {
  return op.status === 'pending' || op.status === 'running';
}

const workspaceNames = new Map<string, Promise<string | undefined>>();

/**
 * Names of the workspaces behind these ids (a deletion carries only the id): the session's for a
 * workspace role, otherwise read once per id (a gone or hidden workspace stays an id).
 */
export function useWorkspaceNames(ids: string[]): Map<string, string> {
  const me = useSession();
  const [names, setNames] = useState(() => new Map<string, string>());
  const key = [...new Set(ids)].sort().join(',');
  useEffect(() => {
    let stopped = false;
    for (const id of key ? key.split(',') : []) {
      const known = me?.workspaces.find((w) => w.id === id)?.name;
      if (known) {
        setNames((n) => (n.get(id) === known ? n : new Map(n).set(id, known)));
        continue;
      }
      let pending = workspaceNames.get(id);
      if (!pending) {
        pending = call(
          api.GET('/api/v1/workspaces/{workspace}', { params: { path: { workspace: id } } }),
        ).then(
          (ws) => ws.name,
          () => undefined,
        );
        workspaceNames.set(id, pending);
      }
      void pending.then((name) => {
        if (name && !stopped) setNames((n) => (n.get(id) === name ? n : new Map(n).set(id, name)));
      });
    }
    return () => {
      stopped = true;
    };
  }, [key, me]);
  return names;
}

function WorkspaceOf({ op, names }: { op: Deletion; names: Map<string, string> }) {
  const name = names.get(op.workspace_id);
  if (op.scope === 'workspace') return <span>{op.target_name}</span>;
  return name ? <a href={paths.workspace(name)}>{name}</a> : <code>{op.workspace_id}</code>;
}

/** The progress bar of a deletion: items deleted of the plan's total. */
export function DeletionProgress({ op, label }: { op: Deletion; label?: string }) {
  const { total, deleted } = op.progress;
  const done = op.status === 'completed';
  const shown = useMonotone(done ? total : Math.min(deleted, total), op.id);
  return (
    <div class="deletion-progress">
      <DeletionBar op={op} label={label ?? `Deletion of ${op.target_name}`} />
      <p class="progress-counts">
        {countOf(shown, total)} {total === 1 ? 'item' : 'items'} deleted
        {deletionActive(op) ? ' — updating every second' : ''}
      </p>
    </div>
  );
}

/** A deletion's bar: full once it completed (an operation with nothing to delete too), never going back. */
function DeletionBar({ op, label }: { op: Deletion; label: string }) {
  const { total, deleted } = op.progress;
  return (
    <Progress
      value={deleted}
      max={total > 0 ? total : 1}
      label={label}
      done={op.status === 'completed'}
      run={op.id}
    />
  );
}

/** The target of a deletion: what it names is gone (or going), so it is named, never linked. */
function TargetOf({ op }: { op: Deletion }) {
  return (
    <>
      {op.scope} {op.target_name}{' '}
      <span class="gone">({op.status === 'completed' ? 'deleted' : 'being deleted'})</span>
    </>
  );
}

function DeletionFilters({
  workspace,
  status,
  onApply,
}: {
  workspace: string;
  status: string;
  onApply: (workspace: string, status: string) => void;
}) {
  const [ws, setWs] = useState(workspace);
  const [st, setSt] = useState(status);
  return (
    <form
      class="filters row"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(ws.trim(), st);
      }}
    >
      <Field label="Workspace" hint="Its name or id; empty: all you may see.">
        {(props) => <input {...props} value={ws} onInput={(e) => setWs(e.currentTarget.value)} />}
      </Field>
      <SelectInput
        label="Status"
        value={st}
        options={STATUSES.map((s) => ({ value: s, label: statusText(s) }))}
        onChange={setSt}
        empty="Any"
      />
      <button type="submit">Filter</button>
    </form>
  );
}

export function DeletionsPage() {
  const me = useSession();
  const page = useCursor();
  const [filter, setFilter] = useState({ workspace: '', status: '' });
  const list = usePolled(
    () =>
      call(
        api.GET('/api/v1/deletions', {
          params: {
            query: {
              limit: 50,
              ...page.query,
              ...(filter.workspace ? { workspace: filter.workspace } : {}),
              ...(filter.status ? { status: filter.status as DeletionStatus } : {}),
            },
          },
        }),
      ),
    [page.cursor, filter.workspace, filter.status],
    (data) => data.deletions.some(deletionActive),
    2000,
  );
  const names = useWorkspaceNames(
    (list.data?.deletions ?? []).filter((op) => op.scope === 'service').map((op) => op.workspace_id),
  );
  return (
    <>
      <PageTitle title="Deletions">Deletions</PageTitle>
      <p>
        Recursive deletions of services and workspaces, newest first: those of the workspaces you administer
        {me?.super_admin ? ' (as super_admin, all of them)' : ''}.
      </p>
      <section aria-labelledby="filter-heading">
        <h2 id="filter-heading">Filter</h2>
        <DeletionFilters
          workspace={filter.workspace}
          status={filter.status}
          onApply={(workspace, status) => {
            page.first();
            setFilter({ workspace, status });
          }}
        />
      </section>
      <section aria-labelledby="deletions-heading">
        <h2 id="deletions-heading">Operations</h2>
        <PagedTable
          state={list}
          pager={page.pager(list.data?.next_cursor, !list.current)}
          items={(data) => data.deletions}
          columns={['Target', 'Workspace', 'Status', 'Phase', 'Progress', 'Started']}
          empty={<p>No deletions.</p>}
        >
          {(op) => (
            <tr key={op.id}>
              <td>
                <a href={paths.deletion(op.id)}>
                  <TargetOf op={op} />
                </a>
              </td>
              <td>
                <WorkspaceOf op={op} names={names} />
              </td>
              <td>
                <StatusBadge status={op.status} />
              </td>
              <td>{op.phase}</td>
              <td>
                <DeletionBar op={op} label={`Deletion of ${op.scope} ${op.target_name}`} />
              </td>
              <td>
                <When at={op.created_at} />
              </td>
            </tr>
          )}
        </PagedTable>
      </section>
    </>
  );
}

export function DeletionPage() {
  const { params } = useRoute();
  const id = params.id as string;
  const [notice, setNotice] = useState<string>();
  const op = usePolled(
    () => call(api.GET('/api/v1/deletions/{id}', { params: { path: { id } } })),
    [id],
    deletionActive,
  );
  const retry = useAction(async () => {
    const again = await call(api.POST('/api/v1/deletions/{id}/retry', { params: { path: { id } } }));
    setNotice(`Retried: the deletion is ${statusText(again.status)} again.`);
    op.set(again);
    op.reload();
  });
  const data = op.data;
  // Announce the end once, when the operation stops while the page watches it.
  const wasActive = useRef(false);
  useEffect(() => {
    if (!data) return;
    if (deletionActive(data)) wasActive.current = true;
    else if (wasActive.current) {
      wasActive.current = false;
      setNotice(data.status === 'completed' ? 'The deletion completed.' : 'The deletion failed.');
    }
  }, [data?.status]);
  const names = useWorkspaceNames(data?.scope === 'service' ? [data.workspace_id] : []);
  const title = data ? `Deletion of ${data.scope} ${data.target_name}` : 'Deletion';
  return (
    <>
      <PageTitle title={title}>{title}</PageTitle>
      <p>
        <a href={paths.deletions}>All deletions</a>
      </p>
      {data ? (
        <>
          <section aria-labelledby="progress-heading">
            <h2 id="progress-heading">Progress</h2>
            <dl class="facts">
              <StatusFacts status={data.status} phase={data.phase} />
              <dt>Attempts</dt>
              <dd>{data.attempt_count}</dd>
              <dt>Workspace</dt>
              <dd>
                <WorkspaceOf op={data} names={names} />
              </dd>
              <TimeFact label="Started" at={data.created_at} />
              <TimeFact label="Updated" at={data.updated_at} />
              <TimeFact label="Completed" at={data.completed_at} />
              <dt>Operation id</dt>
              <dd>
                <code>{data.id}</code>
              </dd>
            </dl>
            <DeletionProgress op={data} label="Deletion progress" />
            <Notice>{notice}</Notice>
            {data.status === 'failed' ? (
              <FailureAlert
                title="The deletion failed"
                phase={data.phase}
                after={data.attempt_count > 1 ? ` after ${data.attempt_count} attempts` : ''}
                detail={data.last_error}
              >
                <p>Retrying resumes it where it stopped.</p>
              </FailureAlert>
            ) : null}
            {data.status === 'failed' ? (
              <div class="actions">
                <button type="button" class="primary" disabled={retry.busy} onClick={() => void retry.run()}>
                  Retry
                </button>
              </div>
            ) : null}
            <ErrorNote error={retry.error} />
          </section>
          <section aria-labelledby="plan-heading">
            <h2 id="plan-heading">Plan</h2>
            {data.plan ? <DeletionPlanView plan={data.plan} /> : <p>The operation carries no plan.</p>}
          </section>
        </>
      ) : op.loading ? (
        <p>Loading…</p>
      ) : null}
      <ErrorNote error={op.error} />
    </>
  );
}
