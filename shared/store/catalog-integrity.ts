/**
 * The catalog integrity check against the table (ADR 0138): one strongly consistent walk of each
 * workspace's partition, the rules of `domain/catalog-integrity.ts` applied to what it holds, and
 * for each repairable finding a fix that writes only while the damage is still as found (its
 * conditions name what was read). Every fix commits its own audit record, which names the repair
 * and the items it changed, so each repair is audited and becomes a catalog event (ADR 0094).
 */
import { createHash } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#config/env.ts';
import type { AuditChange } from '#domain/audit.ts';
import {
  type CheckCode,
  type FoundDamage,
  type ImportSchemas,
  type IntegrityInspector,
  KIND_OF,
  REPORT_ONLY,
  type SourceTables,
  storedTileUsage,
  type Unchecked,
} from '#domain/catalog-integrity.ts';
import { UnavailableError } from '#domain/errors.ts';
import { mapLimited } from '#domain/jobs.ts';
import { customRoles, type Layer, usedStyles } from '#domain/layers.ts';
import type { TileStore } from '#domain/tile-cache.ts';
import {
  addCounts,
  type CountedKind,
  countsAt,
  countsOf,
  type SummaryCounts,
} from '#domain/workspace-summary.ts';
import { auditItem, changesOf } from './audit-records.ts';
import { currentChange } from './change-context.ts';
import type { StoreClient } from './client.ts';
import { storeCall } from './errors.ts';
import { keyCondition, queryInput, queryPages } from './items.ts';
import { entities, type Key, keyOf, keys } from './keys.ts';
import { toLayer } from './layers-repository.ts';
import { type CounterReading, layerCountChanges, planCountersIn } from './plan-counters.ts';
import { toService } from './services-repository.ts';
import { resetSummaryBase, summaryChangeOf, summaryCountersIn } from './summary-counters.ts';
import { itemAbsent, itemExists } from './table.ts';
import { type TransactItem, transactUnlessRaced, versionIs } from './transactions.ts';

type Item = Record<string, unknown>;

/** The kinds the summary counts, by entity tag (as summary-counters.ts counts them). */
const counted: Readonly<Record<string, CountedKind>> = {
  [entities.service]: 'service',
  [entities.layer]: 'layer',
  [entities.style]: 'style',
  [entities.apiKey]: 'api_key',
  [entities.claimMapping]: 'claim_mapping',
  [entities.importJob]: 'import',
};

/** A finding's stable id: a digest of what it is about. */
function findingId(check: CheckCode, workspaceId: string | undefined, entityId: string): string {
  return createHash('sha256')
    .update(`${check}\u0000${workspaceId ?? ''}\u0000${entityId}`)
    .digest('hex')
    .slice(0, 24);
}

/** The stored layer written back as `next`, only while it is still at the version the check read. */
function layerRewrite(
  table: string,
  stored: Record<string, unknown>,
  next: Layer,
  version: number,
): TransactItem {
  return {
    Put: {
      TableName: table,
      Item: { ...keyOf(stored), entity: entities.layer, ...next },
      ...versionIs(version),
    },
  };
}

const num = (v: unknown) => (typeof v === 'number' ? v : 0);

/** Workspaces read at once. */
const WALKERS = 8;

/** Roles one walker reads at once (with WALKERS, at most 32 reads in flight, below the SDK's 50 sockets). */
const ROLE_READS = 4;

/** What a finding needs besides its check (its id and kind are derived). */
interface Damage {
  check: CheckCode;
  workspaceId?: string;
  entity: { type: string; id: string; parent_id?: string };
  detail: string;
  repair: string;
  /** The repair, given the finding's id (its audit record names it). */
  fix?: (id: string) => Promise<boolean>;
}

/** The DynamoDB side of the check; data sources and the import database come in as ports. */
export class DynamoIntegrityInspector implements IntegrityInspector {
  private readonly roles = new Map<string, Item | undefined>();

  constructor(
    private readonly db: StoreClient,
    private readonly table: string,
    private readonly ports: {
      sources?: SourceTables;
      importSchemas?: ImportSchemas;
      /** The persistent tile cache's store (ADR 0139), whose tiles the usage records count. */
      tiles?: TileStore;
      now?: () => Date;
    } = {},
  ) {}

  async inspect(scope: { workspaceId?: string; check?: CheckCode; deadline: number }) {
    const damage: FoundDamage[] = [];
    const unchecked: Unchecked[] = [];
    const counts = { workspaces: 0, items: 0, layers_probed: 0, import_schemas: 0 };
    const report = (d: Damage) => {
      if (scope.check && d.check !== scope.check) return;
      const repairable = !REPORT_ONLY.has(d.check) && d.fix !== undefined;
      const id = findingId(d.check, d.workspaceId, `${d.entity.parent_id ?? ''}/${d.entity.id}`);
      const fix = d.fix;
      damage.push({
        id,
        kind: KIND_OF[d.check],
        check: d.check,
        ...(d.workspaceId ? { workspace_id: d.workspaceId } : {}),
        entity: d.entity,
        detail: d.detail,
        repair: d.repair,
        repairable,
        ...(repairable && fix ? { fix: () => fix(id) } : {}),
      });
    };
    const wants = (c: CheckCode) => !scope.check || scope.check === c;
    // Import schemas are listed before the walk: a schema listed now belongs to a job created
    // before it (createImport writes the job before any schema), so the walk that follows reads
    // that job unless it is really gone — a job created during the walk can't look orphaned.
    const schemas =
      scope.workspaceId || !wants('import_schema') ? undefined : await this.listImportSchemas(unchecked);
    const workspaceIds = scope.workspaceId ? [scope.workspaceId] : await this.workspaceIds();
    /** Custom role references seen (mappings, layers), for the roles' counts (a whole-catalog walk only). */
    const roleRefs = new Map<string, number>();
    const jobIds = new Set<string>();
    let complete = true;
    // Workspaces are read a few at a time: the walk's cost is one Query per workspace, mostly waiting.
    let next = 0;
    const worker = async () => {
      while (next < workspaceIds.length) {
        const workspaceId = workspaceIds[next++] as string;
        if (Date.now() > scope.deadline) {
          complete = false;
          unchecked.push({ workspace_id: workspaceId, reason: 'not read: the time budget was spent' });
          continue;
        }
        const items = await this.partition(workspaceId);
        counts.workspaces++;
        counts.items += items.length;
        await this.inspectWorkspace(workspaceId, items, report, unchecked, roleRefs, jobIds, counts, wants);
        if (wants('tile_cache_usage'))
          await this.inspectTileUsage(workspaceId, items, report, unchecked, scope.deadline);
      }
    };
    await Promise.all(Array.from({ length: WALKERS }, worker));
    if (!scope.workspaceId && complete) {
      if (wants('role_refs')) await this.inspectRoles(roleRefs, report);
      if (schemas) this.inspectImportSchemas(schemas, jobIds, report, counts);
    } else {
      const reason = scope.workspaceId
        ? 'needs the whole catalog (every workspace’s mappings, layers and imports)'
        : 'the walk did not finish';
      unchecked.push({ check: 'role_refs', reason }, { check: 'import_schema', reason });
    }
    return { complete, counts, damage, unchecked };
  }

  /** Every workspace id, from the workspace listing. */
  private async workspaceIds(): Promise<string[]> {
    const ids: string[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, {
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.workspaceListing('').GSI1PK },
      }),
      (page) => {
        for (const i of page) if (typeof i.id === 'string') ids.push(i.id);
        return true;
      },
    );
    return ids;
  }

  /** Every item of a workspace's partition (strongly consistent). */
  private async partition(workspaceId: string): Promise<Item[]> {
    const items: Item[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, keyCondition(keys.workspacePartition(workspaceId)), { consistent: true }),
      (page) => {
        items.push(...page);
        return true;
      },
    );
    return items;
  }

  private async role(roleId: string): Promise<Item | undefined> {
    if (!this.roles.has(roleId)) {
      const out = await storeCall(() =>
        this.db.send(new GetCommand({ TableName: this.table, Key: keys.role(roleId), ConsistentRead: true })),
      );
      this.roles.set(roleId, out.Item as Item | undefined);
    }
    return this.roles.get(roleId);
  }

  /** Reads the roles not read yet together (a few at a time), so the rules below find them cached. */
  private async readRoles(roleIds: readonly string[]) {
    const unread = [...new Set(roleIds)].filter((r) => !this.roles.has(r));
    await mapLimited(unread, ROLE_READS, (r) => this.role(r));
  }

  private async inspectWorkspace(
    workspaceId: string,
    items: Item[],
    report: (d: Damage) => void,
    unchecked: Unchecked[],
    roleRefs: Map<string, number>,
    jobIds: Set<string>,
    counts: { layers_probed: number },
    wants: (check: CheckCode) => boolean,
  ) {
    const of = (entity: string) => items.filter((i) => i.entity === entity);
    const workspace = items.find((i) => i.entity === entities.workspace);
    if (workspace?.status !== 'active') {
      // A workspace being deleted is the deletion's to finish; its items are going.
      unchecked.push({
        check: 'summary_counters',
        workspace_id: workspaceId,
        reason: 'the workspace is being deleted',
      });
      return;
    }
    const services = new Map(of(entities.service).map((s) => [s.id as string, s]));
    const layers = of(entities.layer);
    const layerIds = new Set(layers.map((l) => l.id as string));
    const groups = of(entities.layerGroup);
    const groupIds = new Set(groups.map((g) => g.id as string));
    const styles = new Map(of(entities.style).map((s) => [s.name as string, s]));
    const mappings = of(entities.claimMapping);
    const mappingIds = new Set(mappings.map((m) => m.id as string));
    const publicIds = new Set(
      of(entities.publicId).map((m) => (m.SK as string).slice(keys.publicIdPrefix.length)),
    );
    for (const job of of(entities.importJob)) if (typeof job.id === 'string') jobIds.add(job.id);
    await this.readRoles([
      ...(wants('layer_role') ? layers.flatMap((l) => customRoles(toLayer(l).allowed_roles ?? [])) : []),
      ...(wants('claim_mapping_role')
        ? mappings.filter((m) => m.custom_role).map((m) => m.role_id as string)
        : []),
    ]);

    // The workspace's name must be claimed by its marker, or another workspace could take it.
    if (wants('workspace_name_marker') && typeof workspace.name === 'string') {
      const name = workspace.name;
      const marker = (
        await storeCall(() =>
          this.db.send(
            new GetCommand({ TableName: this.table, Key: keys.workspaceName(name), ConsistentRead: true }),
          ),
        )
      ).Item;
      if (!marker || marker.workspace_id !== workspaceId) {
        report({
          check: 'workspace_name_marker',
          workspaceId,
          entity: { type: 'workspace', id: workspaceId },
          detail: marker
            ? `The name '${name}' is claimed by workspace ${String(marker.workspace_id)}.`
            : `The name '${name}' is not claimed: another workspace could be created with it.`,
          repair: marker
            ? 'Left alone: rename one of the two workspaces.'
            : 'Claims the name for this workspace.',
          ...(marker
            ? {}
            : {
                fix: (id) =>
                  this.commit(workspaceId, 'workspace_name_marker', id, [
                    {
                      Put: {
                        TableName: this.table,
                        Item: {
                          ...keys.workspaceName(name),
                          entity: entities.workspaceName,
                          workspace_id: workspaceId,
                        },
                        ConditionExpression: itemAbsent,
                      },
                    },
                    this.unchanged(keys.workspace(workspaceId), 'name', name),
                  ]),
              }),
        });
      }
    }

    // Service name markers: each names a service of its name.
    for (const marker of of(entities.serviceName)) {
      const name = (marker.SK as string).slice('SVCNAME#'.length);
      const service = services.get(marker.service_id as string);
      if (service && service.name === name) continue;
      report({
        check: 'service_name_marker',
        workspaceId,
        entity: { type: 'service_name', id: name },
        detail: `The service name '${name}' is held for service ${String(marker.service_id)}, which ${service ? `is named '${String(service.name)}'` : 'does not exist'}.`,
        repair: 'Frees the name (deletes the marker while it still holds it for that service).',
        fix: (id) =>
          this.commit(workspaceId, 'service_name_marker', id, [
            this.deleteIf(keyOf(marker), 'service_id', marker.service_id),
          ]),
      });
    }

    // Public id markers: each names its layer or group.
    for (const marker of of(entities.publicId)) {
      const publicId = (marker.SK as string).slice(keys.publicIdPrefix.length);
      const target = marker.target_id as string;
      const exists = marker.kind === 'group' ? groupIds.has(target) : layerIds.has(target);
      if (exists) continue;
      report({
        check: 'public_id_marker',
        workspaceId,
        entity: { type: 'public_id', id: publicId },
        detail: `The public id '${publicId}' is held for ${String(marker.kind ?? 'layer')} ${target}, which does not exist.`,
        repair: 'Frees the public id (deletes the marker while it still names that target).',
        fix: (id) =>
          this.commit(workspaceId, 'public_id_marker', id, [
            this.deleteIf(keyOf(marker), 'target_id', target),
          ]),
      });
    }

    // Claim mapping uniqueness markers: each names its mapping.
    for (const triple of of(entities.claimMappingTriple)) {
      if (mappingIds.has(triple.mapping_id as string)) continue;
      report({
        check: 'claim_mapping_marker',
        workspaceId,
        entity: { type: 'claim_mapping_marker', id: String(triple.mapping_id) },
        detail: `A claim mapping's uniqueness marker names mapping ${String(triple.mapping_id)}, which does not exist: the same claim, value and role can't be mapped again.`,
        repair: 'Deletes the marker while it still names that mapping.',
        fix: (id) =>
          this.commit(workspaceId, 'claim_mapping_marker', id, [
            this.deleteIf(keyOf(triple), 'mapping_id', triple.mapping_id),
          ]),
      });
    }

    // Layers: their service, styles and roles.
    const styleRefs = new Map<string, number>();
    const layersByService = new Map<string, Item[]>();
    for (const layer of layers) {
      const serviceId = layer.service_id as string;
      const l = toLayer(layer);
      for (const s of usedStyles(l)) styleRefs.set(s, (styleRefs.get(s) ?? 0) + 1);
      for (const r of customRoles(l.allowed_roles ?? [])) roleRefs.set(r, (roleRefs.get(r) ?? 0) + 1);
      if (!services.has(serviceId)) {
        report({
          check: 'layer_service',
          workspaceId,
          entity: { type: 'layer', id: l.id, parent_id: serviceId },
          detail: `Layer '${l.public_id}' belongs to service ${serviceId}, which does not exist: nothing serves or lists it.`,
          repair:
            'Deletes the layer and its public id (the counts it held are repaired from a second check).',
          fix: (id) =>
            this.commit(workspaceId, 'layer_service', id, [
              {
                Delete: { TableName: this.table, Key: keyOf(layer), ...versionIs(l.version) },
              },
              ...(publicIds.has(l.public_id)
                ? [this.deleteIf(keys.publicId(workspaceId, l.public_id), 'target_id', l.id, true)]
                : []),
            ]),
        });
        continue;
      }
      layersByService.set(serviceId, [...(layersByService.get(serviceId) ?? []), layer]);
      const missingStyles = usedStyles(l).filter((s) => !styles.has(s));
      if (missingStyles.length > 0) {
        const next: Layer = {
          ...l,
          styles: (l.styles ?? []).filter((s) => styles.has(s)),
          version: l.version + 1,
          updated_at: this.now().toISOString(),
        };
        if (l.default_style && !styles.has(l.default_style)) delete next.default_style;
        report({
          check: 'layer_style',
          workspaceId,
          entity: { type: 'layer', id: l.id, parent_id: serviceId },
          detail: `Layer '${l.public_id}' is drawn with style(s) ${missingStyles.map((s) => `'${s}'`).join(', ')}, which do not exist.`,
          repair: 'Takes the missing style names off the layer (its other styles stay).',
          fix: (id) =>
            this.commit(workspaceId, 'layer_style', id, [
              layerRewrite(this.table, layer, next, l.version),
              // Plan and summary counts don't change: the layer keeps its state and its styles that exist.
            ]),
        });
      }
      for (const r of wants('layer_role') ? customRoles(l.allowed_roles ?? []) : []) {
        const role = await this.role(r);
        if (role && role.status === 'active') continue;
        report({
          check: 'layer_role',
          workspaceId,
          entity: { type: 'layer', id: l.id, parent_id: serviceId },
          detail: `Layer '${l.public_id}' allows role '${r}', which ${role ? 'is retired' : 'does not exist'}.`,
          repair:
            'Left alone: taking a role out of allowed_roles can widen who may read the layer; update the layer.',
        });
      }
    }

    // Claim mappings: their custom roles; the workspace's count of them.
    for (const m of mappings) {
      if (!m.custom_role) continue;
      const roleId = m.role_id as string;
      roleRefs.set(roleId, (roleRefs.get(roleId) ?? 0) + 1);
      if (!wants('claim_mapping_role')) continue;
      const role = await this.role(roleId);
      if (role && role.status === 'active') continue;
      report({
        check: 'claim_mapping_role',
        workspaceId,
        entity: { type: 'claim_mapping', id: m.id as string },
        detail: `Claim mapping ${String(m.id)} maps to role '${roleId}', which ${role ? 'is retired' : 'does not exist'}.`,
        repair:
          'Left alone: deleting a mapping changes what its tokens sign in as; delete it with deleteClaimMapping.',
      });
    }
    if (workspace && num(workspace.claim_mapping_count) !== mappings.length) {
      const seen = workspace.claim_mapping_count;
      report({
        check: 'claim_mapping_count',
        workspaceId,
        entity: { type: 'workspace', id: workspaceId },
        detail: `The workspace counts ${num(seen)} claim mapping(s); it has ${mappings.length}.`,
        repair: `Sets the count to ${mappings.length}.`,
        fix: (id) =>
          this.commit(workspaceId, 'claim_mapping_count', id, [
            this.setCount(keys.workspace(workspaceId), 'claim_mapping_count', seen, mappings.length),
          ]),
      });
    }

    // Layer groups: their members.
    for (const g of groups) {
      const missing = ((g.members as { resource: string }[] | undefined) ?? [])
        .map((m) => m.resource)
        .filter((r) => !publicIds.has(r));
      if (missing.length === 0) continue;
      report({
        check: 'group_member',
        workspaceId,
        entity: { type: 'layer_group', id: g.id as string },
        detail: `Layer group '${String(g.public_id)}' lists ${missing.map((r) => `'${r}'`).join(', ')}, which do not exist.`,
        repair: 'Left alone: which layers a group draws is the operator’s choice; update the group.',
      });
    }

    // Styles: their count of the layers drawn with them.
    for (const [name, style] of styles) {
      const truth = styleRefs.get(name) ?? 0;
      if (num(style.layer_ref_count) === truth) continue;
      const seen = style.layer_ref_count;
      report({
        check: 'style_layer_refs',
        workspaceId,
        entity: { type: 'style', id: name },
        detail: `Style '${name}' counts ${num(seen)} layer(s) drawn with it; ${truth} are.`,
        repair: `Sets the count to ${truth} (a style with layers can't be deleted; one without can).`,
        fix: (id) =>
          this.commit(workspaceId, 'style_layer_refs', id, [
            this.setCount(keyOf(style), 'layer_ref_count', seen, truth),
          ]),
      });
    }

    // The summary's counters (ADR 0137), when they claim to be exact.
    // The counters are read from the walk's own items (they live in the same partition), so the
    // truth and what the counters say come from one read.
    const reading = wants('summary_counters') ? summaryCountersIn(items) : undefined;
    if (reading?.exact) {
      let truth: SummaryCounts = {};
      for (const i of items) {
        const kind = counted[i.entity as string];
        if (kind) truth = addCounts(truth, countsOf(kind, i));
      }
      const now = this.now();
      const held = countsAt(reading.counts, now);
      const actual = countsAt(truth, now);
      const diff = addCounts(held, actual, -1);
      if (Object.keys(diff).length > 0) {
        report({
          check: 'summary_counters',
          workspaceId,
          entity: { type: 'workspace', id: workspaceId },
          detail: `The summary's counters differ from the workspace's items by ${Object.entries(diff)
            .map(([f, d]) => `${f} ${(d ?? 0) > 0 ? '+' : ''}${d}`)
            .join(', ')}.`,
          repair: 'Re-bases the counters on a count of the items.',
          fix: (id) =>
            this.audited(workspaceId, 'summary_counters', id, () =>
              resetSummaryBase(this.db, this.table, workspaceId),
            ),
        });
      }
    }

    // Each service's deletion-plan layer count (ADR 0101), when it claims to be exact.
    const plans = wants('service_layer_count') ? planCountersIn(items) : new Map<string, CounterReading>();
    for (const [serviceId] of wants('service_layer_count') ? services : []) {
      // A service without counter items is older than them: nothing claims to be exact.
      const plan = plans.get(serviceId);
      const truth = layersByService.get(serviceId)?.length ?? 0;
      if (!plan?.exact || plan.tallies.layers === truth) continue;
      report({
        check: 'service_layer_count',
        workspaceId,
        entity: { type: 'service', id: serviceId },
        detail: `Service ${serviceId}'s deletion plan counts ${plan.tallies.layers} layer(s); it has ${truth}.`,
        repair: "Drops the counters' base, so the next plan counts the layers again and writes an exact one.",
        fix: (id) => this.dropPlanBase(workspaceId, serviceId, id),
      });
    }

    // Enabled layers' source tables, one session per service.
    for (const [serviceId, serviceLayers] of wants('layer_source') ? layersByService : []) {
      const service = services.get(serviceId) as Item;
      const probed = serviceLayers.filter((l) => l.enabled !== false && l.is_sql_view !== true);
      if (probed.length === 0 || service.type !== 'postgis') continue;
      const entity = { type: 'service', id: serviceId };
      if (!this.ports.sources) {
        unchecked.push({
          check: 'layer_source',
          workspace_id: workspaceId,
          entity,
          reason: 'no data source access here',
        });
        continue;
      }
      if (service.enabled === false) {
        unchecked.push({
          check: 'layer_source',
          workspace_id: workspaceId,
          entity,
          reason: 'the service is disabled',
        });
        continue;
      }
      let missing: string[];
      try {
        missing = await this.ports.sources.missing(
          toService(service),
          probed.map((l) => l.source_layer as string),
        );
      } catch (error) {
        if (!(error instanceof UnavailableError) && !(error instanceof Error && 'reason' in error))
          throw error;
        unchecked.push({
          check: 'layer_source',
          workspace_id: workspaceId,
          entity,
          reason: 'its database could not be reached or refused the login',
        });
        continue;
      }
      counts.layers_probed += probed.length;
      for (const layer of probed.filter((l) => missing.includes(l.source_layer as string))) {
        const l = toLayer(layer);
        const next: Layer = {
          ...l,
          enabled: false,
          version: l.version + 1,
          updated_at: this.now().toISOString(),
        };
        report({
          check: 'layer_source',
          workspaceId,
          entity: { type: 'layer', id: l.id, parent_id: serviceId },
          detail: `Layer '${l.public_id}' is published from '${l.source_layer}', which is gone from service '${String(service.name)}'s database.`,
          repair: 'Disables the layer (a draft keeps its settings; enable it again once its table is back).',
          fix: (id) =>
            this.commit(workspaceId, 'layer_source', id, [
              layerRewrite(this.table, layer, next, l.version),
              ...layerCountChanges(this.table, l, next).map((g) => g.item),
              ...summaryChangeOf(this.table, 'layer', l, l, next).map((g) => g.item),
            ]),
        });
      }
    }
  }

  /** Custom roles' reference counts against every mapping and layer naming them. */
  private async inspectRoles(roleRefs: Map<string, number>, report: (d: Damage) => void) {
    const roles: Item[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, {
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.roleListing('').GSI1PK },
      }),
      (page) => {
        roles.push(...page);
        return true;
      },
    );
    for (const listed of roles) {
      const roleId = listed.id as string;
      const role = (
        await storeCall(() =>
          this.db.send(
            new GetCommand({ TableName: this.table, Key: keys.role(roleId), ConsistentRead: true }),
          ),
        )
      ).Item as Item | undefined;
      if (role?.status !== 'active') continue;
      const truth = roleRefs.get(roleId) ?? 0;
      if (num(role.ref_count) === truth) continue;
      const seen = role.ref_count;
      report({
        check: 'role_refs',
        entity: { type: 'role', id: roleId },
        detail: `Role '${roleId}' counts ${num(seen)} reference(s) from claim mappings and layers; ${truth} name it.`,
        repair: `Sets the count to ${truth} (a role with references can't be deleted; one without can).`,
        fix: (id) =>
          this.commit(undefined, 'role_refs', id, [
            this.setCount(keys.role(roleId), 'ref_count', seen, truth),
          ]),
      });
    }
  }

  /** The import database's import schemas; undefined (and why, in `unchecked`) when they can't be listed. */
  private async listImportSchemas(unchecked: Unchecked[]) {
    const port = this.ports.importSchemas;
    if (!port) {
      unchecked.push({ check: 'import_schema', reason: 'no import database on this stage' });
      return undefined;
    }
    try {
      return { port, list: await port.list() };
    } catch (error) {
      if (!(error instanceof UnavailableError)) throw error;
      unchecked.push({ check: 'import_schema', reason: 'the import database could not be reached' });
      return undefined;
    }
  }

  /** Import schemas without their import job (a whole-catalog walk only: jobs live in their workspaces). */
  private inspectImportSchemas(
    schemas: { port: ImportSchemas; list: { schema: string; importId: string }[] },
    jobIds: Set<string>,
    report: (d: Damage) => void,
    counts: { import_schemas: number },
  ) {
    counts.import_schemas = schemas.list.length;
    for (const { schema, importId } of schemas.list) {
      if (jobIds.has(importId)) continue;
      report({
        check: 'import_schema',
        entity: { type: 'import_schema', id: schema },
        detail: `Schema '${schema}' of import ${importId} has no import job in any workspace.`,
        repair: "Drops the import's schemas and its reader login.",
        fix: (id) =>
          this.audited(undefined, 'import_schema', id, async () => {
            await schemas.port.drop(importId);
            return true;
          }),
      });
    }
  }

  private now(): Date {
    return (this.ports.now ?? (() => new Date()))();
  }

  /**
   * The workspace's tile cache usage record (ADR 0139) against a listing of its tiles in the store.
   * The record is read before the listing (in the walk): a tile stored or removed meanwhile moves
   * the record, so the fix — conditioned on both values read — then changes nothing.
   */
  private async inspectTileUsage(
    workspaceId: string,
    items: Item[],
    report: (d: Damage) => void,
    unchecked: Unchecked[],
    deadline: number,
  ) {
    if (items.find((i) => i.entity === entities.workspace)?.status !== 'active') return;
    const store = this.ports.tiles;
    const check = 'tile_cache_usage' as const;
    if (!store) {
      unchecked.push({ check, workspace_id: workspaceId, reason: 'no persistent tile cache on this stage' });
      return;
    }
    const record = items.find((i) => i.SK === keys.workspaceTileCache(workspaceId).SK);
    let truth: Awaited<ReturnType<typeof storedTileUsage>>;
    try {
      truth = await storedTileUsage(store, workspaceId, deadline);
    } catch {
      unchecked.push({ check, workspace_id: workspaceId, reason: 'the tile store could not be listed' });
      return;
    }
    if (!truth) {
      unchecked.push({
        check,
        workspace_id: workspaceId,
        reason: 'the time budget was spent listing its tiles',
      });
      return;
    }
    const seen = { entries: record?.entries, bytes: record?.bytes };
    if (num(seen.entries) === truth.entries && num(seen.bytes) === truth.bytes) return;
    const { entries, bytes } = truth;
    report({
      check,
      workspaceId,
      entity: { type: 'tile_cache', id: workspaceId },
      detail: `The tile cache counts ${num(seen.entries)} tile(s) of ${num(seen.bytes)} byte(s); its store holds ${entries} of ${bytes}.`,
      repair: `Sets the usage to ${entries} tile(s) of ${bytes} byte(s).`,
      fix: (id) => this.commit(workspaceId, check, id, [this.setUsage(workspaceId, seen, truth)]),
    });
  }

  /** Sets a workspace's tile cache usage while both counts still hold what the check read (absent: none). */
  private setUsage(
    workspaceId: string,
    seen: { entries: unknown; bytes: unknown },
    truth: { entries: number; bytes: number },
  ): TransactItem {
    const values: Record<string, unknown> = {
      ':entries': truth.entries,
      ':bytes': truth.bytes,
      ':e': entities.tileCache,
      ':ws': workspaceId,
    };
    const held = (name: 'entries' | 'bytes', attribute: string) => {
      if (typeof seen[name] !== 'number') return `attribute_not_exists(${attribute})`;
      values[`:seen_${name}`] = seen[name];
      return `${attribute} = :seen_${name}`;
    };
    return {
      Update: {
        TableName: this.table,
        Key: keys.workspaceTileCache(workspaceId),
        // The record may not exist yet (tiles stored, the usage write lost): it is created as usage adds do.
        UpdateExpression: 'SET entries = :entries, #b = :bytes, entity = :e, workspace_id = :ws',
        ConditionExpression: `${held('entries', 'entries')} AND ${held('bytes', '#b')}`,
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: values,
      },
    };
  }

  /** A Delete of a marker while `attribute` still holds `value` (absent allowed with `mayBeGone`). */
  private deleteIf(key: Key, attribute: string, value: unknown, mayBeGone = false): TransactItem {
    return {
      Delete: {
        TableName: this.table,
        Key: key,
        ConditionExpression: mayBeGone ? `attribute_not_exists(#a) OR #a = :v` : '#a = :v',
        ExpressionAttributeNames: { '#a': attribute },
        ExpressionAttributeValues: { ':v': value },
      },
    };
  }

  /** A ConditionCheck that `attribute` of the item still holds `value`. */
  private unchanged(key: Key, attribute: string, value: unknown): TransactItem {
    return {
      ConditionCheck: {
        TableName: this.table,
        Key: key,
        ConditionExpression: '#a = :v',
        ExpressionAttributeNames: { '#a': attribute },
        ExpressionAttributeValues: { ':v': value },
      },
    };
  }

  /** Sets a count to `truth` while it still holds what the check read (`seen`; absent when it had none). */
  private setCount(key: Key, attribute: string, seen: unknown, truth: number): TransactItem {
    const held = typeof seen === 'number';
    return {
      Update: {
        TableName: this.table,
        Key: key,
        UpdateExpression: 'SET #a = :truth',
        ConditionExpression: `${itemExists} AND ${held ? '#a = :seen' : 'attribute_not_exists(#a)'}`,
        ExpressionAttributeNames: { '#a': attribute },
        ExpressionAttributeValues: { ':truth': truth, ...(held ? { ':seen': seen } : {}) },
      },
    };
  }

  /** Drops a service's plan-counter base (BASE and its reference buckets): the next plan recounts. */
  private async dropPlanBase(workspaceId: string, serviceId: string, id: string): Promise<boolean> {
    const base = keys.planCountBase(workspaceId, serviceId);
    const items: Item[] = [];
    await queryPages(
      this.db,
      queryInput(
        this.table,
        keyCondition(keys.workspacePartition(workspaceId), { prefix: keys.planCountPrefix(serviceId) }),
        {
          consistent: true,
        },
      ),
      (page) => {
        items.push(...page);
        return true;
      },
    );
    const bases = items.filter((i) => i.part === 'base' || i.part === 'base_refs');
    if (!bases.some((i) => i.SK === base.SK)) return false;
    return this.commit(
      workspaceId,
      'service_layer_count',
      id,
      bases.map((i) => ({ Delete: { TableName: this.table, Key: keyOf(i) } })),
    );
  }

  /**
   * Commits a repair's writes with its audit record (the repair, then the catalog changes its
   * writes make): false when a condition failed (the damage changed after the check).
   */
  private async commit(
    workspaceId: string | undefined,
    check: CheckCode,
    id: string,
    writes: TransactItem[],
  ): Promise<boolean> {
    // Its own audit record rides along (the repair's), so the transaction adds none.
    return transactUnlessRaced(this.db, [
      ...writes,
      this.auditPut(workspaceId, check, id, changesOf(writes)),
    ]);
  }

  /** Runs a repair made outside one transaction, then writes its audit record when it did repair. */
  private async audited(
    workspaceId: string | undefined,
    check: CheckCode,
    id: string,
    repair: () => Promise<boolean>,
  ): Promise<boolean> {
    if (!(await repair())) return false;
    const put = this.auditPut(workspaceId, check, id, []).Put as NonNullable<TransactItem['Put']>;
    await storeCall(() => this.db.send(new PutCommand({ TableName: put.TableName, Item: put.Item })));
    return true;
  }

  /** The audit record of one repair: an `integrity_repair` change naming the check, then `changes`. */
  private auditPut(
    workspaceId: string | undefined,
    check: CheckCode,
    id: string,
    changes: AuditChange[],
  ): TransactItem {
    const context = currentChange();
    const repair: AuditChange = {
      type: 'integrity_repair',
      id,
      ...(workspaceId ? { workspace_id: workspaceId } : {}),
      action: 'created',
      status: check,
    };
    return {
      Put: {
        TableName: this.table,
        Item: auditItem(
          {
            ...(workspaceId ? { workspace_id: workspaceId } : {}),
            operation: context.operation,
            principal: {
              id: context.principalId,
              auth_method: context.authMethod,
              ...(context.subject ? { subject: context.subject } : {}),
            },
            request_id: context.requestId,
            outcome: 'succeeded',
            changes: [repair, ...changes],
          },
          { days: config().AUDIT_RETENTION_DAYS },
        ),
        ConditionExpression: itemAbsent,
      },
    };
  }
}
