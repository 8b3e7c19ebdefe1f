import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimMapping, ClaimMappingRepository } from '#domain/claim-mappings.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { useHostStore } from '../support/store.ts';

// The bootstrapAdmins custom resource's handler (ADR 0089) against the run's DynamoDB Local, with a
// local HTTP server standing in for CloudFormation's presigned response URL.

type Admin = { claim_name: string; claim_value: string };
type Answer = {
  Status: 'SUCCESS' | 'FAILED';
  Reason?: string;
  PhysicalResourceId: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  Data?: Record<string, number>;
};

let handler: (event: CloudFormationCustomResourceEvent) => Promise<void>;
let mappings: ClaimMappingRepository;
let domain: typeof import('#domain/claim-mappings.ts');
let server: Server;
let responseUrl = '';
const answers = new Map<string, Answer>();
const contentTypes = new Map<string, string | undefined>();

beforeAll(async () => {
  useHostStore();
  ({ handler } = await import('../../functions/bootstrap/bootstrap-admins.ts'));
  mappings = (await import('#wiring/repositories.ts')).claimMappingRepository();
  domain = await import('#domain/claim-mappings.ts');
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'PUT') return void res.writeHead(405).end();
      contentTypes.set(req.url ?? '', req.headers['content-type']);
      answers.set(req.url ?? '', JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  responseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

const run = randomUUID().slice(0, 8);
const admin = (who: string): Admin => ({ claim_name: 'email', claim_value: `${who}-${run}@example.com` });

/** Sends one CloudFormation request to the handler; returns what it answered CloudFormation. */
async function send(
  type: 'Create' | 'Update' | 'Delete',
  admins: unknown,
  old: unknown = [],
  physicalId = 'geoplane-bootstrap-admins',
): Promise<Answer> {
  const requestId = randomUUID();
  const base = {
    ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:bootstrap',
    ResponseURL: `${responseUrl}/${requestId}`,
    StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/GeoPlane/1',
    RequestId: requestId,
    LogicalResourceId: 'BootstrapAdmins',
    ResourceType: 'Custom::GeoPlaneBootstrapAdmins',
    ResourceProperties: { ServiceToken: 'arn', Admins: admins },
  };
  const event = (
    type === 'Create'
      ? { ...base, RequestType: 'Create' }
      : type === 'Update'
        ? {
            ...base,
            RequestType: 'Update',
            PhysicalResourceId: physicalId,
            OldResourceProperties: { ServiceToken: 'arn', Admins: old },
          }
        : { ...base, RequestType: 'Delete', PhysicalResourceId: physicalId }
  ) as CloudFormationCustomResourceEvent;
  await handler(event);
  const answer = answers.get(`/${requestId}`);
  if (!answer) throw new Error('the handler did not answer CloudFormation');
  // CloudFormation's presigned S3 URL is signed without a Content-Type: none may be sent.
  expect(contentTypes.get(`/${requestId}`)).toBeUndefined();
  expect(answer).toMatchObject({
    StackId: base.StackId,
    RequestId: requestId,
    LogicalResourceId: 'BootstrapAdmins',
  });
  return answer;
}

/** The global super_admin mappings of this run's claims (all pages). */
async function ours(): Promise<ClaimMapping[]> {
  const out: ClaimMapping[] = [];
  let cursor: string | undefined;
  do {
    const page = await mappings.list('*', 500, cursor);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out.filter((m) => m.claim_value.includes(`-${run}@`) && m.role_id === 'super_admin');
}

const values = (list: ClaimMapping[]) => list.map((m) => m.claim_value).sort();

describe('bootstrapAdmins custom resource', () => {
  const alice = admin('alice');
  const bob = admin('bob');
  const carol = admin('carol');
  const manual = admin('manual');

  it('on Create makes each listed claim a global super_admin mapping it marks as its own', async () => {
    // Prepare: an administrator already mapped `manual` by hand.
    await domain.createClaimMapping(
      { mappings, roles: { find: async () => undefined } as never },
      { scope: '*', body: { ...manual, role_id: 'super_admin' } },
    );

    // Act
    const answer = await send('Create', [alice, bob, manual]);

    // Assess
    expect(answer).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: 'geoplane-bootstrap-admins',
      Data: { Created: 2, Existing: 1, Removed: 0 },
    });
    const now = await ours();
    expect(values(now)).toEqual(values([alice, bob, manual] as ClaimMapping[]));
    for (const m of now) {
      expect(m.workspace_id).toBe('*');
      expect(m.created_by).toBe(m.claim_value === manual.claim_value ? undefined : 'bootstrap');
    }
  });

  it('creates no duplicate when Create runs again (a retried or repeated deployment)', async () => {
    const answer = await send('Create', [alice, bob, manual, alice]);

    expect(answer).toMatchObject({ Status: 'SUCCESS', Data: { Created: 0, Existing: 3, Removed: 0 } });
    expect(values(await ours())).toEqual(values([alice, bob, manual] as ClaimMapping[]));
  });

  it('keeps the marker out of the API view of global mappings', async () => {
    const res = await call('GET', '/claim-mappings?limit=100', { headers: asSuperAdmin() });

    expect(res.status).toBe(200);
    expect(res.text).not.toContain('created_by');
  });

  it('on Update adds the new claim and removes the one no longer listed', async () => {
    const answer = await send('Update', [alice, carol, manual], [alice, bob, manual]);

    expect(answer).toMatchObject({ Status: 'SUCCESS', Data: { Created: 1, Existing: 2, Removed: 1 } });
    expect(values(await ours())).toEqual(values([alice, carol, manual] as ClaimMapping[]));
  });

  it('never removes a mapping it did not make, even when it leaves the list', async () => {
    const answer = await send('Update', [alice, carol], [alice, carol, manual]);

    expect(answer).toMatchObject({ Status: 'SUCCESS', Data: { Created: 0, Existing: 2, Removed: 0 } });
    expect(values(await ours())).toEqual(values([alice, carol, manual] as ClaimMapping[]));
  });

  it('on Delete removes every mapping it made and only those', async () => {
    const answer = await send('Delete', [alice, carol]);

    expect(answer).toMatchObject({ Status: 'SUCCESS', Data: { Created: 0, Existing: 0, Removed: 2 } });
    const left = await ours();
    expect(values(left)).toEqual([manual.claim_value]);
    // Clean up the hand-made one (a global super_admin mapping on the shared table).
    for (const m of left) await mappings.delete(m);
  });

  it('answers FAILED with the reason when the list is not valid, and changes nothing', async () => {
    const answer = await send('Create', [{ claim_name: 'email' }]);

    expect(answer.Status).toBe('FAILED');
    expect(answer.Reason).toMatch(/entry 0: claim_value/);
    expect(answer.PhysicalResourceId).toMatch(/^BootstrapAdmins-/);
    expect(await ours()).toEqual([]);
  });
});
