/**
 * Style assets of a workspace: the graphics styles reference as `asset:<name>` — the paged list
 * with a preview of each (fetched through the API and shown from a blob: URL, as the CSP wants),
 * uploading one (the raw bytes, creating or replacing it) and deleting one.
 */
import './style-assets.css';
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, ConsoleApiError, call, type Schemas } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { AskButton, Confirm, useConfirmed } from '#console/components/dialogs.tsx';
import { ErrorNote, Field, FormSection, issueFor, Notice, TextInput } from '#console/components/forms.tsx';
import { PagedSection, usePagedList } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { formatBytes, nameFromFile } from '#console/format.ts';
import { paths } from '#console/routes.ts';

type StyleAsset = Schemas['StyleAsset'];

/** Largest asset the API takes (413 above it). */
const MAX_ASSET_BYTES = 512 * 1024;
const ACCEPTED = 'image/png,image/jpeg,image/gif,image/svg+xml';

/** The ETag of an asset: the quoted SHA-256 of its bytes (what If-Match compares). */
const tagOf = (asset: Pick<StyleAsset, 'sha256'>) => `"${asset.sha256}"`;

/** The asset's image, loaded through the API (the session cookie) and shown from a blob: URL. */
function AssetPreview({ workspace, asset }: { workspace: string; asset: StyleAsset }) {
  const [url, setUrl] = useState<string>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let objectUrl: string | undefined;
    let cancelled = false;
    setError(undefined);
    call(
      api.GET('/api/v1/workspaces/{workspace}/style-assets/{asset}', {
        params: { path: { workspace, asset: asset.name } },
        headers: { Accept: asset.content_type },
        parseAs: 'blob',
      }),
    ).then(
      (blob) => {
        if (cancelled) return;
        objectUrl = URL.createObjectURL(blob as unknown as Blob);
        setUrl(objectUrl);
      },
      (caught: unknown) => {
        if (!cancelled) setError(caught);
      },
    );
    return () => {
      cancelled = true;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [workspace, asset.name, asset.sha256]);
  if (error) return <ErrorNote error={error} />;
  if (!url) return <span class="asset-loading">Loading…</span>;
  return <img class="asset-preview" src={url} alt={`Preview of ${asset.name}`} />;
}

function Upload({
  workspace,
  listed,
  onUploaded,
}: {
  workspace: string;
  listed: StyleAsset[];
  onUploaded: (asset: StyleAsset, created: boolean) => void;
}) {
  const [name, setName] = useState('');
  const [file, setFile] = useState<File>();
  const [fileError, setFileError] = useState<unknown>();
  const existing = listed.find((a) => a.name === name.trim());
  const upload = useAction(async (event: Event) => {
    event.preventDefault();
    if (!file) {
      setFileError(new Error('Choose an image file to upload.'));
      return;
    }
    const result = await api.PUT('/api/v1/workspaces/{workspace}/style-assets/{asset}', {
      params: {
        path: { workspace, asset: name.trim() },
        // Replacing an asset listed here: only the version we showed (its bytes' digest).
        ...(existing ? { header: { 'If-Match': tagOf(existing) } } : {}),
      },
      headers: { 'Content-Type': file.type || 'application/octet-stream' },
      body: file as unknown as string,
      bodySerializer: (body: unknown) => body,
    });
    const asset = await call(Promise.resolve(result));
    onUploaded(asset, result.response.status === 201);
    setName('');
    setFile(undefined);
    (event.target as HTMLFormElement).reset();
  });
  const nameIssue = issueFor(upload.error, 'path.asset');
  const fileIssue =
    fileError ??
    (!nameIssue &&
    upload.error instanceof ConsoleApiError &&
    (upload.error.status === 400 || upload.error.status === 413)
      ? upload.error
      : undefined);
  return (
    <FormSection id="upload-heading" heading="Upload an asset" onSubmit={upload.run}>
      <Field
        label="Image file"
        hint="PNG, JPEG, GIF or SVG (no scripts, event handlers or external references), at most 512 KiB. The type is read from the bytes."
        error={fileIssue}
      >
        {(props) => (
          <input
            {...props}
            type="file"
            accept={ACCEPTED}
            required
            onChange={(e) => {
              const chosen = e.currentTarget.files?.[0];
              setFileError(undefined);
              upload.setError(undefined);
              setFile(chosen);
              if (chosen && chosen.size > MAX_ASSET_BYTES)
                setFileError(
                  new Error(
                    `${chosen.name} is ${formatBytes(chosen.size)}; an asset may have at most ${formatBytes(MAX_ASSET_BYTES)}.`,
                  ),
                );
              if (chosen && name === '') setName(nameFromFile(chosen.name));
            }}
          />
        )}
      </Field>
      <TextInput
        label="Asset name"
        hint={
          existing
            ? `Replaces the existing asset ${existing.name} (styles referencing asset:${existing.name} get the new image).`
            : "1–64 letters, digits, '.', '_' and '-'; styles reference it as asset:<name>."
        }
        error={nameIssue}
        required
        maxLength={64}
        value={name}
        onInput={setName}
      />
      <button type="submit" class="primary" disabled={upload.busy}>
        {existing ? 'Replace asset' : 'Upload asset'}
      </button>
      {fileIssue === upload.error ? null : <ErrorNote error={upload.error} />}
    </FormSection>
  );
}

function AssetRow({
  workspace,
  asset,
  onDeleted,
}: {
  workspace: string;
  asset: StyleAsset;
  onDeleted: (name: string) => void;
}) {
  const remove = useConfirmed(async (asset: StyleAsset) => {
    await call(
      api.DELETE('/api/v1/workspaces/{workspace}/style-assets/{asset}', {
        params: { path: { workspace, asset: asset.name }, header: { 'If-Match': tagOf(asset) } },
      }),
    );
    onDeleted(asset.name);
  });
  return (
    <tr>
      <td>
        <AssetPreview workspace={workspace} asset={asset} />
      </td>
      <th scope="row">
        <code>{asset.name}</code>
      </th>
      <td>{asset.content_type}</td>
      <td>{formatBytes(asset.size_bytes)}</td>
      <td>{asset.version}</td>
      <td>
        <When at={asset.updated_at} />
      </td>
      <td>
        <AskButton action={remove} subject={asset} label={`Delete ${asset.name}`}>
          Delete
        </AskButton>
        <ErrorNote error={remove.error} />
        <Confirm {...remove.dialog} title={`Delete asset ${asset.name}?`} confirmLabel="Delete" danger>
          <p>A style that references it keeps the asset: the API then names that style.</p>
        </Confirm>
      </td>
    </tr>
  );
}

export function StyleAssetsPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const [notice, setNotice] = useState<string>();
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/style-assets', {
          params: { path: { workspace }, query: { limit: 50, ...page } },
        }),
      ),
    [workspace],
  );
  return (
    <>
      <PageTitle title={`Style assets · ${workspace}`}>Style assets of {workspace}</PageTitle>
      <p>
        Graphics the <a href={paths.styles(workspace)}>styles</a> of this workspace reference as{' '}
        <code>asset:&lt;name&gt;</code>.
      </p>
      <Notice>{notice}</Notice>
      <PagedSection
        id="list-heading"
        heading="Assets"
        list={list}
        items={(data) => data.assets}
        columns={['Preview', 'Name', 'Type', 'Size', 'Version', 'Updated', 'Actions']}
        empty={<p>No assets yet.</p>}
      >
        {(asset) => (
          <AssetRow
            key={asset.id}
            workspace={workspace}
            asset={asset}
            onDeleted={(name) => {
              setNotice(`Deleted ${name}.`);
              void list.reload();
            }}
          />
        )}
      </PagedSection>
      <Upload
        workspace={workspace}
        listed={list.data?.assets ?? []}
        onUploaded={(asset, created) => {
          setNotice(
            `${created ? 'Uploaded' : 'Replaced'} ${asset.name} (${asset.content_type}, ${formatBytes(asset.size_bytes)}).`,
          );
          void list.reload();
        }}
      />
    </>
  );
}
