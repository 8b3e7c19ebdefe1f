/**
 * A service's form, shared by the register and edit forms: the fields as the operator types them,
 * the request body they make, and the connection in one line.
 */
import { useId } from 'preact/hooks';
import type { operations } from '#client/api-types.ts';
import { allOf, type Schemas } from '#console/api.ts';
import { Field, issueFor, SelectInput, TextInput } from '#console/components/forms.tsx';

export type Service = Schemas['Service'];
type ServiceInput = operations['createService']['requestBody']['content']['application/json'];

type SslMode = NonNullable<Extract<Service['connection'], { host: string }>['sslmode']>;
const SSL_MODES = allOf<SslMode>({ disable: true, prefer: true, require: true, 'verify-full': true });

/** The fields of the register and edit forms, as the operator types them. */
export interface ServiceForm {
  name: string;
  type: Service['type'];
  host: string;
  port: string;
  database: string;
  user: string;
  password: string;
  sslmode: '' | SslMode;
  schemas: string;
  root_uri: string;
  enabled: boolean;
}

export const EMPTY_FORM: ServiceForm = {
  name: '',
  type: 'postgis',
  host: '',
  port: '5432',
  database: '',
  user: '',
  password: '',
  sslmode: '',
  schemas: '',
  root_uri: '',
  enabled: true,
};

export function formOf(service: Service): ServiceForm {
  const c = service.connection;
  if ('root_uri' in c)
    return {
      ...EMPTY_FORM,
      name: service.name,
      type: 'raster_mosaic',
      root_uri: c.root_uri,
      enabled: service.enabled,
    };
  return {
    ...EMPTY_FORM,
    name: service.name,
    type: 'postgis',
    host: c.host,
    port: String(c.port),
    database: c.database,
    user: c.user,
    sslmode: c.sslmode ?? '',
    schemas: (c.schemas ?? []).join(', '),
    enabled: service.enabled,
  };
}

/** The body of createService/updateService; an empty password is left out (the stored one stays). */
export function bodyOf(form: ServiceForm): ServiceInput {
  if (form.type === 'raster_mosaic') {
    return {
      name: form.name.trim(),
      type: 'raster_mosaic',
      enabled: form.enabled,
      connection: { root_uri: form.root_uri.trim() },
    };
  }
  const schemas = form.schemas
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    name: form.name.trim(),
    type: 'postgis',
    enabled: form.enabled,
    connection: {
      host: form.host.trim(),
      ...(form.port.trim() ? { port: Number(form.port.trim()) } : {}),
      database: form.database.trim(),
      user: form.user.trim(),
      ...(form.password ? { password: form.password } : {}),
      ...(form.sslmode ? { sslmode: form.sslmode } : {}),
      ...(schemas.length ? { schemas } : {}),
    },
  };
}

/** The fields of a service's connection, shared by the register and edit forms. */
export function ServiceFields({
  form,
  set,
  error,
  editing,
}: {
  form: ServiceForm;
  set: (patch: Partial<ServiceForm>) => void;
  error: unknown;
  editing?: boolean;
}) {
  const c = 'body.connection';
  const enabledId = useId();
  return (
    <>
      <TextInput
        label="Name"
        hint="Letters, digits, '.', '-' and '_'; it names the service in URLs."
        error={issueFor(error, 'body.name')}
        required
        value={form.name}
        onInput={(text) => set({ name: text })}
      />
      {editing ? null : (
        <Field label="Type" error={issueFor(error, 'body.type')}>
          {(props) => (
            <select
              {...props}
              value={form.type}
              onChange={(e) => set({ type: e.currentTarget.value as ServiceForm['type'] })}
            >
              <option value="postgis">PostGIS database</option>
              <option value="raster_mosaic">Raster mosaic (GeoTIFF/COG directory)</option>
            </select>
          )}
        </Field>
      )}
      {form.type === 'raster_mosaic' ? (
        <TextInput
          label="Root URI"
          hint="An absolute directory, file:///path or s3://bucket/prefix that the host can read."
          error={issueFor(error, `${c}.root_uri`)}
          required
          value={form.root_uri}
          onInput={(text) => set({ root_uri: text })}
        />
      ) : (
        <>
          <div class="row service-host">
            <TextInput
              label="Host"
              error={issueFor(error, `${c}.host`)}
              required
              value={form.host}
              onInput={(text) => set({ host: text })}
            />
            <TextInput
              label="Port"
              error={issueFor(error, `${c}.port`)}
              inputMode="numeric"
              value={form.port}
              onInput={(text) => set({ port: text })}
            />
          </div>
          <TextInput
            label="Database"
            error={issueFor(error, `${c}.database`)}
            required
            value={form.database}
            onInput={(text) => set({ database: text })}
          />
          <TextInput
            label="User"
            error={issueFor(error, `${c}.user`)}
            required
            autocomplete="off"
            value={form.user}
            onInput={(text) => set({ user: text })}
          />
          <TextInput
            label="Password"
            hint={
              editing
                ? 'Write-only: leave empty to keep the stored password.'
                : 'Write-only: stored encrypted and never shown again.'
            }
            error={issueFor(error, `${c}.password`)}
            type="password"
            autocomplete="new-password"
            value={form.password}
            onInput={(text) => set({ password: text })}
          />
          <SelectInput<ServiceForm['sslmode']>
            label="SSL mode"
            error={issueFor(error, `${c}.sslmode`)}
            value={form.sslmode}
            options={SSL_MODES}
            onChange={(sslmode) => set({ sslmode })}
            empty="(server default)"
          />
          <TextInput
            label="Schemas"
            hint="Comma-separated; empty means every schema the user can read."
            error={issueFor(error, `${c}.schemas`)}
            value={form.schemas}
            onInput={(text) => set({ schemas: text })}
          />
        </>
      )}
      <div class="check">
        <input
          id={enabledId}
          type="checkbox"
          checked={form.enabled}
          onChange={(e) => set({ enabled: e.currentTarget.checked })}
        />
        <label for={enabledId}>
          Enabled (an enabled service must connect, or its root be readable, before it is saved)
        </label>
      </div>
    </>
  );
}

/** The connection in one line (`user@host:port/database`, or the mosaic's root). */
export function connectionSummary(service: Service): string {
  const c = service.connection;
  if ('root_uri' in c) return c.root_uri;
  return `${c.user}@${c.host}:${c.port}/${c.database}`;
}
