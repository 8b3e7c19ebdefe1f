/** What the layer pages share: how a layer's source and state read, and deleting one. */
import { api, call, etag, type Schemas } from '#console/api.ts';
import { Confirm } from '#console/components/dialogs.tsx';

export type Layer = Schemas['Layer'];

export function sourceOf(layer: Layer) {
  return layer.is_sql_view ? <span>SQL view</span> : <code>{layer.source_layer}</code>;
}

export function stateOf(layer: Layer): string {
  return layer.enabled ? 'Enabled' : 'Draft (disabled)';
}

export function deleteLayer(workspace: string, service: string, layer: Layer) {
  return call(
    api.DELETE('/api/v1/workspaces/{workspace}/services/{service}/layers/{layer}', {
      params: { path: { workspace, service, layer: layer.id }, header: { 'If-Match': etag(layer.version) } },
    }),
  );
}

/** The confirmation of a layer's delete (`dialog`: useConfirmed's). */
export function DeleteLayerConfirm({
  dialog,
  name,
}: {
  dialog: { open: boolean; onConfirm: () => void; onCancel: () => void };
  name: string;
}) {
  return (
    <Confirm {...dialog} title={`Delete layer ${name}?`} confirmLabel="Delete layer" danger>
      <p>A layer that a layer group contains can't be deleted until the group lets it go.</p>
    </Confirm>
  );
}
