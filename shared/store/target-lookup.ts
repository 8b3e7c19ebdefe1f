import type { TargetLookup, TargetQuery, TargetRecords } from '#domain/request-targets.ts';
import { type KnownService, type Service, serviceCandidates } from '#domain/services.ts';
import { type KnownWorkspace, pickWorkspace, workspaceCandidates } from '#domain/workspaces.ts';
import { toApiKeyCredential } from './api-keys-repository.ts';
import { summaryRules } from './claim-summaries.ts';
import { batchGetItems, DynamoRepository } from './items.ts';
import { type Key, keys } from './keys.ts';
import { toService } from './services-repository.ts';
import { toWorkspace } from './workspaces-repository.ts';

type Item = Record<string, unknown>;

const sameKey = (a: Key, b: Item) => a.PK === b.PK && a.SK === b.SK;

/**
 * The authorizer's read (ADR 0099): the API key's credential item, the `{workspace}` by id and its
 * name marker, and the `{service}` by id and its name marker under that workspace id, in one
 * BatchGetItem. A second one follows only for names: the workspace a name marker points to (with
 * the service's keys under it), or the service a service name marker points to. What would need a
 * third stays undecided, and the handler reads it as before.
 */
export class DynamoTargetLookup extends DynamoRepository implements TargetLookup {
  /** One strongly consistent BatchGetItem of these keys; then the item of a key, if it exists. */
  private async readKeys(wanted: Key[]): Promise<(key: Key | undefined) => Item | undefined> {
    const items = wanted.length ? await batchGetItems(this.db, this.table, wanted) : [];
    return (key) => (key ? items.find((item) => sameKey(key, item)) : undefined);
  }

  /**
   * The lookup, padded to the round trips its shape takes when what it names exists (ADR 0109):
   * a caller without a role gets the same 403 for a missing workspace as for an existing one,
   * and now after the same reads, so the answer's time doesn't tell either.
   */
  async lookUp(query: TargetQuery): Promise<TargetRecords> {
    let rounds = 0;
    const read = (wanted: Key[]) => {
      if (wanted.length > 0) rounds++;
      return this.readKeys(wanted);
    };
    const records = await this.resolve(query, read);
    const pad = paddingOf(query);
    while (rounds < pad.rounds) {
      rounds++;
      await this.readKeys(pad.keys);
    }
    return records;
  }

  private async resolve(
    query: TargetQuery,
    readKeys: (wanted: Key[]) => Promise<(key: Key | undefined) => Item | undefined>,
  ): Promise<TargetRecords> {
    const ws = query.workspace === undefined ? undefined : workspaceCandidates(query.workspace);
    const svc = query.service === undefined || !ws ? undefined : serviceCandidates(query.service);
    const credentialKey = query.keyHash === undefined ? undefined : keys.apiKeyHash(query.keyHash);
    const wsIdKey = ws?.id ? keys.workspace(ws.id) : undefined;
    const wsNameKey = ws?.name ? keys.workspaceName(ws.name) : undefined;
    const serviceKeys = (workspaceId: string | undefined) => ({
      byId: workspaceId && svc?.id ? keys.service(workspaceId, svc.id) : undefined,
      byName: workspaceId && svc ? keys.serviceName(workspaceId, svc.name) : undefined,
    });
    // A token's caller: the global summary, and the workspace's with the workspace (ADR 0103).
    const summaryKey = (workspaceId: string | undefined) =>
      query.claimRules && workspaceId ? keys.claimMappingSummary(workspaceId) : undefined;
    const globalSummaryKey = query.claimRules ? keys.claimMappingSummary(undefined) : undefined;
    const first = serviceKeys(ws?.id);
    const round1 = await readKeys(
      [
        credentialKey,
        globalSummaryKey,
        wsIdKey,
        summaryKey(ws?.id),
        wsNameKey,
        first.byId,
        first.byName,
      ].filter((k): k is Key => k !== undefined),
    );
    const rulesOf = (workspaceId: string, items: (key: Key | undefined) => Item | undefined) => {
      const rules = summaryRules(items(summaryKey(workspaceId)));
      if (rules) records.workspaceRules = { workspaceId, rules };
    };
    const credentialItem = round1(credentialKey);
    const records: TargetRecords = credentialItem ? { credential: toApiKeyCredential(credentialItem) } : {};
    const globalRules = summaryRules(round1(globalSummaryKey));
    if (globalRules) records.globalRules = globalRules;
    if (query.workspace === undefined) return records;

    const byIdItem = round1(wsIdKey);
    const byId = byIdItem ? toWorkspace(byIdItem) : undefined;
    const markerId = round1(wsNameKey)?.workspace_id as string | undefined;
    const known = (workspace: KnownWorkspace['workspace']): KnownWorkspace => ({
      idOrName: query.workspace as string,
      workspace,
    });
    const knownService = (workspaceId: string, service: Service | undefined): KnownService => ({
      workspaceId,
      idOrName: query.service as string,
      service,
    });

    if (pickWorkspace(byId, undefined) || !markerId) {
      // Decided in the first round: by id, or nothing by either.
      records.workspace = known(pickWorkspace(byId, undefined));
      if (byId) rulesOf(byId.id, round1);
      if (!byId || !svc) return records;
      const service = round1(first.byId);
      const serviceMarker = round1(first.byName)?.service_id as string | undefined;
      if (service || !serviceMarker) {
        records.service = knownService(byId.id, service ? toService(service) : undefined);
        return records;
      }
      const serviceKey = keys.service(byId.id, serviceMarker);
      const found = (await readKeys([serviceKey]))(serviceKey);
      records.service = knownService(byId.id, found ? toService(found) : undefined);
      return records;
    }

    // By name: the workspace the marker points to, with the service's keys under it.
    const workspaceKey = keys.workspace(markerId);
    const second = serviceKeys(markerId);
    const round2 = await readKeys(
      [workspaceKey, summaryKey(markerId), second.byId, second.byName].filter(
        (k): k is Key => k !== undefined,
      ),
    );
    const byNameItem = round2(workspaceKey);
    const byName = byNameItem ? toWorkspace(byNameItem) : undefined;
    records.workspace = known(pickWorkspace(undefined, byName));
    if (byName) rulesOf(byName.id, round2);
    if (!byName || !svc) return records;
    const service = round2(second.byId);
    // A service found only through its name marker would need a third round: left to the handler.
    if (service || !round2(second.byName)) {
      records.service = knownService(byName.id, service ? toService(service) : undefined);
    }
    return records;
  }
}

/** No workspace or service has this id (ids are random UUIDs): the keys of a padding read. */
const NOBODY = '00000000-0000-0000-0000-000000000000';

/**
 * How many round trips a lookup of this shape takes when what it names exists, and the keys of a
 * read that stands in for one it did not need (ADR 0109). A workspace named by name (not by an
 * id) takes a second round for the workspace its marker points to; a service named by name, a
 * second for the service. A lookup that found nothing reads as often, keys of the same number
 * under an id no workspace has. (A workspace whose name looks like a UUID, found through its
 * marker, still takes one round more than a missing one: such names are the exception.)
 */
function paddingOf(query: TargetQuery): { rounds: number; keys: Key[] } {
  const ws = query.workspace === undefined ? undefined : workspaceCandidates(query.workspace);
  if (!ws?.id && !ws?.name) return { rounds: 0, keys: [] };
  const svc = query.service === undefined ? undefined : serviceCandidates(query.service);
  const byName = ws.name !== undefined && ws.id === undefined;
  if (!byName && (!svc || svc.id !== undefined)) return { rounds: 1, keys: [] };
  const keys2: Key[] = byName
    ? [
        keys.workspace(NOBODY),
        ...(query.claimRules ? [keys.claimMappingSummary(NOBODY)] : []),
        ...(svc?.id ? [keys.service(NOBODY, svc.id)] : []),
        ...(svc ? [keys.serviceName(NOBODY, svc.name)] : []),
      ]
    : [keys.service(NOBODY, NOBODY)];
  return { rounds: 2, keys: keys2 };
}
