/**
 * The audit trail, newest first: a workspace's (/console/workspaces/:workspace/audit, admin) or the
 * whole one (/console/audit, super_admin). The filters — operation, principal, outcome, time window —
 * live in the page's query string, so a filtered view can be reloaded and shared.
 */
import operations from 'virtual:operations';
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { allOf, api, call, type Schemas } from '#console/api.ts';
import { useLoad } from '#console/components/data.tsx';
import { ErrorNote, issueFor, SelectInput, Suggestions, TextInput } from '#console/components/forms.tsx';
import { Pager } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { isoOf, statusText } from '#console/format.ts';
import { paths } from '#console/routes.ts';
import './audit.css';

type AuditRecord = Schemas['AuditRecord'];

const FILTERS = ['operation', 'principal', 'outcome', 'since', 'until'] as const;
const OUTCOMES = allOf<AuditRecord['outcome']>({ succeeded: true, refused: true });
type Filter = (typeof FILTERS)[number];
type Filters = Partial<Record<Filter, string>>;

const operationIds = [...new Set(Object.values(operations).map((op) => op.operationId))].sort();

const pad = (n: number) => String(n).padStart(2, '0');

/** An RFC 3339 time as a `datetime-local` value in the operator's time zone ('' if unreadable). */
function localOf(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function filtersOf(query: Record<string, string>): Filters {
  const filters: Filters = {};
  for (const key of FILTERS) if (query[key]) filters[key] = query[key];
  return filters;
}

function urlOf(base: string, filters: Filters): string {
  const search = new URLSearchParams();
  for (const key of FILTERS) {
    const value = filters[key];
    if (value) search.set(key, value);
  }
  const text = search.toString();
  return text ? `${base}?${text}` : base;
}

function FilterForm({ base, filters, error }: { base: string; filters: Filters; error: unknown }) {
  const { route } = useLocation();
  const [operation, setOperation] = useState(filters.operation ?? '');
  const [principal, setPrincipal] = useState(filters.principal ?? '');
  const [outcome, setOutcome] = useState(filters.outcome ?? '');
  const [since, setSince] = useState(localOf(filters.since));
  const [until, setUntil] = useState(localOf(filters.until));
  return (
    <section aria-labelledby="filter-heading">
      <h2 id="filter-heading">Filter</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          route(
            urlOf(base, {
              operation: operation.trim(),
              principal: principal.trim(),
              outcome,
              since: isoOf(since),
              until: isoOf(until),
            }),
          );
        }}
      >
        <div class="audit-filters">
          <TextInput
            label="Operation"
            hint="An operationId, e.g. createLayer."
            error={issueFor(error, 'query.operation')}
            list="audit-operations"
            value={operation}
            onInput={setOperation}
          />
          <Suggestions id="audit-operations" values={operationIds} />
          <TextInput
            label="Principal"
            hint="As in the records: apikey:<id>, jwt:<subject>, system…"
            error={issueFor(error, 'query.principal')}
            value={principal}
            onInput={setPrincipal}
          />
          <SelectInput
            label="Outcome"
            error={issueFor(error, 'query.outcome')}
            value={outcome}
            options={OUTCOMES}
            onChange={setOutcome}
            empty="any"
          />
          <TextInput
            label="Since"
            hint="Your time zone; inclusive."
            error={issueFor(error, 'query.since')}
            type="datetime-local"
            step={1}
            value={since}
            onInput={setSince}
          />
          <TextInput
            label="Until"
            hint="Your time zone."
            error={issueFor(error, 'query.until')}
            type="datetime-local"
            step={1}
            value={until}
            onInput={setUntil}
          />
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Apply filters
          </button>
          <button type="button" onClick={() => route(base)}>
            Clear filters
          </button>
        </div>
      </form>
    </section>
  );
}

function Target({ record }: { record: AuditRecord }) {
  if (record.changes.length === 0) return <span>—</span>;
  return (
    <ul class="audit-changes">
      {record.changes.map((c) => (
        <li key={`${c.type}:${c.id}:${c.action}`}>
          {c.type} <code>{c.id}</code>
          {c.parent_id ? (
            <>
              {' '}
              of <code>{c.parent_id}</code>
            </>
          ) : null}{' '}
          {c.action}
          {c.version !== undefined ? ` (v${c.version})` : ''}
          {c.status ? ` → ${statusText(c.status)}` : ''}
        </li>
      ))}
    </ul>
  );
}

function Records({
  base,
  filters,
  records,
  global,
}: {
  base: string;
  filters: Filters;
  records: AuditRecord[];
  global: boolean;
}) {
  return (
    <table class="audit">
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Operation</th>
          <th scope="col">Principal</th>
          <th scope="col">Target</th>
          <th scope="col">Outcome</th>
          {global ? <th scope="col">Workspace</th> : null}
          <th scope="col">Request id</th>
        </tr>
      </thead>
      <tbody>
        {records.map((r) => (
          <tr key={r.id} data-operation={r.operation}>
            <td>
              <When at={r.at} />
            </td>
            <td>
              <a href={urlOf(base, { ...filters, operation: r.operation })} title="Only this operation">
                {r.operation}
              </a>
            </td>
            <td>
              <a href={urlOf(base, { ...filters, principal: r.principal.id })} title="Only this principal">
                <code>{r.principal.id}</code>
              </a>
              {r.principal.subject && !r.principal.id.endsWith(r.principal.subject) ? (
                <span> ({r.principal.subject})</span>
              ) : null}
            </td>
            <td>
              <Target record={r} />
            </td>
            <td>
              {r.outcome}
              {r.outcome === 'refused' ? (
                <>
                  {r.status ? ` (${r.status})` : ''}
                  {r.reason ? (
                    <>
                      {' '}
                      <code>{r.reason}</code>
                    </>
                  ) : null}
                </>
              ) : null}
            </td>
            {global ? (
              <td>
                {r.workspace_id ? (
                  <a href={paths.workspaceAudit(r.workspace_id)}>
                    <code>{r.workspace_id}</code>
                  </a>
                ) : (
                  'global'
                )}
              </td>
            ) : null}
            <td>
              <code>{r.request_id}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function AuditPage() {
  const { params } = useRoute();
  const { query } = useLocation();
  const workspace = params.workspace as string | undefined;
  const base = workspace ? paths.workspaceAudit(workspace) : paths.audit;
  const filters = filtersOf(query);
  const filterKey = urlOf(base, filters);
  // A cursor belongs to the filters it was given for; new filters start at the first page.
  const [page, setPage] = useState<{ key: string; cursor?: string }>({ key: filterKey });
  const cursor = page.key === filterKey ? page.cursor : undefined;
  const list = useLoad(() => {
    const q = {
      limit: 50,
      ...(cursor ? { cursor } : {}),
      ...filters,
    } as { limit: number; cursor?: string; outcome?: 'succeeded' | 'refused' } & Omit<Filters, 'outcome'>;
    return workspace
      ? call(api.GET('/api/v1/workspaces/{workspace}/audit', { params: { path: { workspace }, query: q } }))
      : call(api.GET('/api/v1/audit', { params: { query: q } }));
  }, [workspace, filterKey, cursor]);
  const title = workspace ? `Audit of ${workspace}` : 'Audit trail';
  const filtered = Object.keys(filters).length > 0;

  return (
    <>
      <PageTitle title={title}>{title}</PageTitle>
      <p>
        {workspace
          ? 'Every change in this workspace and every refused change, newest first.'
          : 'Every change and refused change, in every workspace and of the global entities, newest first.'}
      </p>
      <FilterForm key={filterKey} base={base} filters={filters} error={list.error} />
      <section aria-labelledby="records-heading" aria-busy={!list.current}>
        <h2 id="records-heading">{filtered ? 'Matching records' : 'Records'}</h2>
        <ErrorNote error={list.error} />
        {list.data ? (
          <>
            {list.data.records.length > 0 ? (
              <Records base={base} filters={filters} records={list.data.records} global={!workspace} />
            ) : (
              <p>{list.data.next_cursor ? 'None on this page; more may follow.' : 'No records.'}</p>
            )}
            <Pager
              next={list.data.next_cursor}
              busy={!list.current}
              onNext={() => setPage({ key: filterKey, cursor: list.data?.next_cursor })}
              onFirst={cursor ? () => setPage({ key: filterKey }) : undefined}
            />
          </>
        ) : list.loading ? (
          <p>Loading…</p>
        ) : null}
      </section>
    </>
  );
}
