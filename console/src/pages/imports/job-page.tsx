/**
 * One import's page: status and phase with live progress while a workflow works on it, what
 * discovery found, a preview of the staged features, the plan, publish, cancel, retry, rollback
 * (through the deletion workflow, whose progress shows here) and the history as a timeline.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, call, etag } from '#console/api.ts';
import { useAction, usePolled } from '#console/components/data.tsx';
import { Confirm } from '#console/components/dialogs.tsx';
import { ErrorNote, Notice } from '#console/components/forms.tsx';
import { FailureAlert, PageTitle, StatusFacts, TimeFact, When } from '#console/components/page-parts.tsx';
import { statusText } from '#console/format.ts';
import { paths } from '#console/routes.ts';

import { Discovery, Preview, Warnings } from './discovery.tsx';
import { History, RollbackProgress } from './history.tsx';
import {
  FINISHED,
  type ImportJob,
  type ImportStatus,
  importPath,
  NOT_CANCELLABLE,
  PLANNABLE,
  WORKING,
  working,
} from './import-status.ts';
import { JobProgress } from './job-progress.tsx';
import { PlanForm, PlanSummary } from './plan-form.tsx';
import { ServiceOf, useLiveServices } from './service-of.tsx';

export function ImportPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const id = params.import as string;
  const job = usePolled(
    () => call(api.GET('/api/v1/workspaces/{workspace}/imports/{import}', importPath(workspace, id))),
    [workspace, id],
    working,
  );
  const [notice, setNotice] = useState<string>();
  const [confirm, setConfirm] = useState<'cancel' | 'rollback'>();
  const [rollbackId, setRollbackId] = useState<string>();

  const after = (answer: ImportJob | undefined, message: string) => {
    if (answer) job.set(answer);
    setNotice(message);
    job.reload();
  };
  const start = useAction(async () => {
    const answer = await call(
      api.POST('/api/v1/workspaces/{workspace}/imports/{import}/start', importPath(workspace, id)),
    );
    after(answer, `Started: the import is ${statusText(answer.status)}.`);
  });
  const publish = useAction(async () => {
    const answer = await call(
      api.POST('/api/v1/workspaces/{workspace}/imports/{import}/publish', importPath(workspace, id)),
    );
    after(answer, 'Publishing: the staged layers become a service.');
  });
  const retry = useAction(async () => {
    const answer = await call(
      api.POST('/api/v1/workspaces/{workspace}/imports/{import}/retry', importPath(workspace, id)),
    );
    after(answer, `Retried: the import is ${statusText(answer.status)}.`);
  });
  const cancel = useAction(async () => {
    setConfirm(undefined);
    const version = job.data?.version;
    const result = await api.DELETE('/api/v1/workspaces/{workspace}/imports/{import}', {
      params: {
        path: { workspace, import: id },
        ...(version !== undefined ? { header: { 'If-Match': etag(version) } } : {}),
      },
    });
    const answer = await call(Promise.resolve(result));
    after(
      result.response.status === 202 ? (answer as ImportJob) : undefined,
      result.response.status === 204 ? 'Cancelled.' : 'Cancelling: the staged data is dropped.',
    );
  });
  const rollback = useAction(async () => {
    setConfirm(undefined);
    const answer = await call(
      api.POST('/api/v1/workspaces/{workspace}/imports/{import}/rollback', importPath(workspace, id)),
    );
    if (answer.rollback_operation_id) setRollbackId(answer.rollback_operation_id);
    after(answer, 'Rolling back: the service, its layers and tables are taken away.');
  });

  const data = job.data;
  // Say so when the workflow stops while the page follows it (published, failed, rolled back…).
  const followed = useRef<ImportStatus>();
  useEffect(() => {
    if (!data) return;
    if (followed.current && WORKING.includes(followed.current) && !working(data))
      setNotice(`The import is ${statusText(data.status)}.`);
    followed.current = data.status;
  }, [data?.status]);
  const live = useLiveServices(workspace, data ? [data] : []);
  const operationId = data?.rollback_operation_id ?? rollbackId;
  const title = data ? `Import ${data.name}` : 'Import';
  const editable =
    data && PLANNABLE.includes(data.status) && !data.service_id && data.discovery !== undefined;
  return (
    <>
      <PageTitle title={`${title} · ${workspace}`}>{title}</PageTitle>
      <p>
        <a href={paths.imports(workspace)}>All imports in {workspace}</a>
      </p>
      {data ? (
        <>
          <section aria-labelledby="status-heading">
            <h2 id="status-heading">Status</h2>
            <dl class="facts">
              <StatusFacts status={data.status} phase={data.phase} />
              <dt>Source</dt>
              <dd>{data.source_filename ?? data.source_uri}</dd>
              <dt>Service</dt>
              <dd>
                <ServiceOf workspace={workspace} job={data} live={live} />
              </dd>
              <dt>Publish when loaded</dt>
              <dd>{data.auto_publish ? 'yes' : 'no'}</dd>
              {data.rollback_until ? (
                <>
                  <dt>Previous data kept until</dt>
                  <dd>
                    <When at={data.rollback_until} /> (a rollback restores it until then)
                  </dd>
                </>
              ) : null}
              <dt>Created</dt>
              <dd>
                <When at={data.created_at} /> by <code>{data.created_by}</code>
              </dd>
              <TimeFact label="Started" at={data.started_at} />
              <TimeFact label="Completed" at={data.completed_at} />
              <dt>Retries</dt>
              <dd>{data.retry_count}</dd>
              <dt>Version</dt>
              <dd>{data.version}</dd>
            </dl>
            <JobProgress job={data} />
            {data.status === 'awaiting_upload' ? (
              <p>
                Waiting for its file. The upload ticket is given once, when the import is created: if the
                upload was lost, cancel this import and start a new one.
              </p>
            ) : null}
            {data.status === 'failed' ? (
              <FailureAlert title="The import failed" phase={data.phase} detail={data.error_message} />
            ) : null}
            <Warnings warnings={data.warnings} />
            <Notice>{notice}</Notice>
          </section>

          <section aria-labelledby="actions-heading">
            <h2 id="actions-heading">Actions</h2>
            <div class="actions">
              {data.status === 'awaiting_upload' ? (
                <button type="button" disabled={start.busy} onClick={() => void start.run()}>
                  Start loading
                </button>
              ) : null}
              {data.status === 'ready_to_publish' ? (
                <button
                  type="button"
                  class="primary"
                  disabled={publish.busy}
                  onClick={() => void publish.run()}
                >
                  Publish
                </button>
              ) : null}
              {data.status === 'failed' ? (
                <button type="button" class="primary" disabled={retry.busy} onClick={() => void retry.run()}>
                  Retry
                </button>
              ) : null}
              {data.status === 'published' ? (
                <button
                  type="button"
                  class="danger"
                  disabled={rollback.busy}
                  onClick={() => setConfirm('rollback')}
                >
                  Roll back…
                </button>
              ) : null}
              {!NOT_CANCELLABLE.includes(data.status) ? (
                <button
                  type="button"
                  class="danger"
                  disabled={cancel.busy}
                  onClick={() => setConfirm('cancel')}
                >
                  Cancel import…
                </button>
              ) : null}
            </div>
            {WORKING.includes(data.status) && data.status !== 'rolling_back' ? (
              <p>The workflow is working on the import; this page follows it.</p>
            ) : null}
            {FINISHED.includes(data.status) ? <p>Nothing is left to do.</p> : null}
            <ErrorNote error={start.error} />
            <ErrorNote error={publish.error} />
            <ErrorNote error={retry.error} />
            <ErrorNote error={cancel.error} />
            <ErrorNote error={rollback.error} />
            {operationId ? <RollbackProgress id={operationId} /> : null}
          </section>

          <section aria-labelledby="discovery-heading">
            <h2 id="discovery-heading">What the file holds</h2>
            <Discovery job={data} />
          </section>

          <section aria-labelledby="preview-heading">
            <h2 id="preview-heading">Preview</h2>
            <Preview workspace={workspace} job={data} />
          </section>

          <section aria-labelledby="plan-heading">
            <h2 id="plan-heading">Plan</h2>
            {editable ? (
              <PlanForm
                key={data.version}
                workspace={workspace}
                job={data}
                onSaved={(updated) =>
                  after(
                    updated,
                    updated.status === 'failed'
                      ? 'Plan saved; retry the import to load with it.'
                      : `Plan saved; the import is ${statusText(updated.status)} to load with it.`,
                  )
                }
              />
            ) : data.plan ? (
              <PlanSummary plan={data.plan} />
            ) : (
              <p>No plan yet: discovery suggests one once the file is read.</p>
            )}
          </section>

          <section aria-labelledby="history-heading">
            <h2 id="history-heading">History</h2>
            <History workspace={workspace} job={data} />
          </section>

          <Confirm
            open={confirm === 'cancel'}
            title={`Cancel import ${data.name}?`}
            confirmLabel="Cancel the import"
            danger
            onConfirm={() => void cancel.run()}
            onCancel={() => setConfirm(undefined)}
          >
            <p>Its staged data is dropped; the file would have to be uploaded again.</p>
          </Confirm>
          <Confirm
            open={confirm === 'rollback'}
            title={`Roll back import ${data.name}?`}
            confirmLabel="Roll back"
            danger
            onConfirm={() => void rollback.run()}
            onCancel={() => setConfirm(undefined)}
          >
            <p>
              Service <strong>{data.service_name}</strong>, its layers, the layer groups containing them and
              the import's tables are deleted.
            </p>
          </Confirm>
        </>
      ) : job.loading ? (
        <p>Loading…</p>
      ) : null}
      <ErrorNote error={job.error} />
    </>
  );
}
